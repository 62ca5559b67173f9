package bpmnxml

import "net/url"

// Import types BPMN 2.0 names (§8.3.4): XML Schema, WSDL 2.0 and BPMN
// documents. Other types are allowed; their content is not checked.
const (
	importXSD  = "http://www.w3.org/2001/XMLSchema"
	importWSDL = "http://www.w3.org/TR/wsdl20/"
	importBPMN = nsBPMN
)

// imports checks the document's bpmn:import elements (EXT.001, EXT.002).
// An import names the type of the document it imports (an absolute URI),
// its namespace (an absolute URI) and where it is (location). With a
// resolver (Options.Resolve), the document must be readable there; an
// XML Schema, WSDL or BPMN document's targetNamespace must be the
// import's namespace; and an imported BPMN document of the importing
// document's own namespace must not reuse its ids, which references
// could no longer tell apart (EXT.002).
func (imp *importer) imports(root *element) {
	for _, e := range root.children {
		if !e.is("import") {
			continue
		}
		typ, ns, loc := e.get("importType"), e.get("namespace"), e.get("location")
		bad := false
		for _, a := range []struct{ name, value string }{{"importType", typ}, {"namespace", ns}} {
			if u, err := url.Parse(a.value); err != nil || u.Scheme == "" {
				imp.problemAt(e, "", "EXT.001", "bpmn:import %s %q is not an absolute URI: name the imported document's %s", a.name, a.value, a.name)
				bad = true
			}
		}
		if loc == "" {
			imp.problemAt(e, "", "EXT.001", "bpmn:import has no location: say where the imported document is")
			bad = true
		}
		if bad || imp.opts.Resolve == nil {
			continue
		}
		data, err := imp.opts.Resolve(loc)
		if err != nil {
			imp.problemAt(e, "", "EXT.001", "bpmn:import location %q cannot be read (%v): point it at the imported document", loc, err)
			continue
		}
		switch typ {
		case importXSD, importWSDL, importBPMN:
		default:
			continue
		}
		other, err := parse(loc, data)
		if err != nil {
			imp.problemAt(e, "", "EXT.001", "bpmn:import location %q is not an XML document: %v", loc, err)
			continue
		}
		if got := other.get("targetNamespace"); got != ns {
			imp.problemAt(e, "", "EXT.001", "bpmn:import names namespace %q, but %s declares targetNamespace %q: name the imported document's namespace", ns, loc, got)
			continue
		}
		if typ != importBPMN || ns != root.get("targetNamespace") {
			continue
		}
		theirs, _ := index(other)
		for id := range theirs {
			if _, dup := imp.elements[id]; dup && id != "" {
				imp.problem("", id, "EXT.002", "id %s is also used in %s, imported with the same namespace: give every element of the namespace its own id", id, loc)
			}
		}
	}
}
