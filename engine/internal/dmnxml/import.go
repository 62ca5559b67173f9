// Package dmnxml reads DMN 1.1 to 1.5 XML into model.DMNDefinitions: the
// decision requirements graph and the boxed expressions of the decision
// logic. It checks the XML's shape (an element where one is expected, a
// requirement pointing somewhere); what an expression means is checked
// when engine/internal/decision compiles the definitions.
package dmnxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Namespaces of the DMN model, by version.
var namespaces = map[string]string{
	"http://www.omg.org/spec/DMN/20151101/dmn.xsd":   "1.1",
	"http://www.omg.org/spec/DMN/20180521/MODEL/":    "1.2",
	"https://www.omg.org/spec/DMN/20191111/MODEL/":   "1.3",
	"https://www.omg.org/spec/DMN/20211108/MODEL/":   "1.4",
	"https://www.omg.org/spec/DMN/20230324/MODEL/":   "1.5",
	"http://www.omg.org/spec/DMN/20191111/MODEL/":    "1.3",
	"http://www.omg.org/spec/DMN/20211108/MODEL/":    "1.4",
	"http://www.omg.org/spec/DMN/20230324/MODEL/":    "1.5",
	"https://www.omg.org/spec/DMN/20180521/MODEL/":   "1.2",
	"https://www.omg.org/spec/DMN/20151101/dmn.xsd/": "1.1",
}

// maxDepth bounds element nesting against hostile input.
const maxDepth = 512

// Error is a model that does not import: where (file, line, column), the
// element (its id or name, when it has one) and what is wrong.
type Error struct {
	File      string
	Line, Col int
	Element   string
	Msg       string
}

// Error renders "file:line:col: element X: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Element != "" {
		fmt.Fprintf(&b, "element %s: ", e.Element)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// IsDMN reports whether data looks like a DMN model (its root element is
// definitions in a DMN namespace), so a deployment can tell .dmn from
// .bpmn resources by content.
func IsDMN(data []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(xml.StartElement); ok {
			_, dmn := namespaces[s.Name.Space]
			return dmn && s.Name.Local == "definitions"
		}
	}
}

type element struct {
	space, local string
	attrs        []xml.Attr
	children     []*element
	text         strings.Builder
	pos          model.Position
}

func (e *element) get(local string) string {
	for _, a := range e.attrs {
		if a.Name.Local == local && (a.Name.Space == "" || a.Name.Space == e.space) {
			return a.Value
		}
	}
	return ""
}

func (e *element) child(local string) *element {
	for _, c := range e.children {
		if c.local == local && c.space == e.space {
			return c
		}
	}
	return nil
}

func (e *element) all(local string) []*element {
	var out []*element
	for _, c := range e.children {
		if c.local == local && c.space == e.space {
			out = append(out, c)
		}
	}
	return out
}

func (e *element) content() string { return strings.TrimSpace(e.text.String()) }

// textOf returns the text of e's <text> child (DMN 1.1 writes typeRef and
// unary tests in children too).
func (e *element) textOf() string {
	if e == nil {
		return ""
	}
	if t := e.child("text"); t != nil {
		return t.text.String()
	}
	return ""
}

type importer struct {
	file string
	ns   string
}

func (im *importer) errAt(e *element, format string, args ...any) error {
	name := e.get("id")
	if name == "" {
		name = e.get("name")
	}
	if name == "" {
		name = e.local
	}
	return &Error{File: im.file, Line: e.pos.Line, Col: e.pos.Column, Element: name, Msg: fmt.Sprintf(format, args...)}
}

// Import reads one DMN model. file names it in errors.
//
// # Errors
//
// *Error for XML that is not well-formed, a root that is no DMN
// definitions, and elements of the wrong shape.
func Import(file string, data []byte) (*model.DMNDefinitions, error) {
	root, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if _, ok := namespaces[root.space]; !ok || root.local != "definitions" {
		return nil, &Error{File: file, Line: root.pos.Line, Col: root.pos.Column,
			Msg: fmt.Sprintf("root element {%s}%s is no DMN 1.1-1.5 definitions", root.space, root.local)}
	}
	im := &importer{file: file, ns: root.space}
	defs := &model.DMNDefinitions{ID: root.get("id"), Name: root.get("name"), Namespace: root.get("namespace"), File: file}
	for _, c := range root.children {
		if c.space != root.space {
			continue // extensions, DMNDI
		}
		switch c.local {
		case "import":
			defs.Imports = append(defs.Imports, &model.DMNImport{Name: c.get("name"), Namespace: c.get("namespace"),
				LocationURI: c.get("locationURI"), ImportType: c.get("importType"), Pos: c.pos})
		case "itemDefinition":
			defs.ItemDefinitions = append(defs.ItemDefinitions, im.itemDefinition(c))
		case "decision":
			d, err := im.decision(c)
			if err != nil {
				return nil, err
			}
			defs.Decisions = append(defs.Decisions, d)
		case "inputData":
			defs.InputData = append(defs.InputData, &model.InputData{ID: c.get("id"), Name: c.get("name"),
				Variable: im.variable(c), Pos: c.pos})
		case "businessKnowledgeModel":
			b, err := im.bkm(c)
			if err != nil {
				return nil, err
			}
			defs.BKMs = append(defs.BKMs, b)
		case "decisionService":
			s := &model.DecisionService{ID: c.get("id"), Name: c.get("name"), Variable: im.variable(c), Pos: c.pos}
			for _, r := range c.children {
				href := r.get("href")
				switch r.local {
				case "outputDecision":
					s.Outputs = append(s.Outputs, href)
				case "encapsulatedDecision":
					s.Encapsulated = append(s.Encapsulated, href)
				case "inputDecision":
					s.InputDecisions = append(s.InputDecisions, href)
				case "inputData":
					s.Inputs = append(s.Inputs, href)
				}
			}
			defs.Services = append(defs.Services, s)
		}
	}
	return defs, nil
}

// variable returns the element's variable (name and type), defaulting to
// the element's name.
func (im *importer) variable(e *element) model.InformationItem {
	v := model.InformationItem{Name: e.get("name")}
	if c := e.child("variable"); c != nil {
		if n := c.get("name"); n != "" {
			v.Name = n
		}
		v.TypeRef = typeRef(c)
	}
	return v
}

// typeRef reads a typeRef attribute (or DMN 1.1's child element),
// dropping a feel: prefix.
func typeRef(e *element) string {
	t := e.get("typeRef")
	if t == "" {
		if c := e.child("typeRef"); c != nil {
			t = c.content()
		}
	}
	return cleanType(t)
}

func cleanType(t string) string {
	t = strings.TrimSpace(t)
	for _, p := range []string{"feel:", "FEEL:"} {
		t = strings.TrimPrefix(t, p)
	}
	return t
}

func (im *importer) itemDefinition(e *element) *model.ItemDefinition {
	it := &model.ItemDefinition{Name: e.get("name"), TypeRef: typeRef(e),
		IsCollection: e.get("isCollection") == "true", Pos: e.pos}
	if av := e.child("allowedValues"); av != nil {
		it.AllowedValues = av.textOf()
	}
	for _, c := range e.all("itemComponent") {
		it.Components = append(it.Components, im.itemDefinition(c))
	}
	if f := e.child("functionItem"); f != nil {
		fi := &model.FunctionItem{OutputType: cleanType(f.get("outputTypeRef"))}
		for _, p := range f.all("parameters") {
			fi.Params = append(fi.Params, model.InformationItem{Name: p.get("name"), TypeRef: typeRef(p)})
		}
		it.Function = fi
	}
	return it
}

func (im *importer) requirements(e *element) ([]model.Requirement, error) {
	var out []model.Requirement
	for _, r := range e.children {
		var kind model.RequirementKind
		var ref *element
		switch r.local {
		case "informationRequirement":
			if ref = r.child("requiredDecision"); ref != nil {
				kind = model.RequiresDecision
			} else if ref = r.child("requiredInput"); ref != nil {
				kind = model.RequiresInput
			}
		case "knowledgeRequirement":
			kind = model.RequiresKnowledge
			ref = r.child("requiredKnowledge")
		default:
			continue
		}
		if ref == nil || ref.get("href") == "" {
			return nil, im.errAt(r, "%s names no required element (href)", r.local)
		}
		out = append(out, model.Requirement{Kind: kind, Href: ref.get("href"), Pos: ref.pos})
	}
	return out, nil
}

func (im *importer) decision(e *element) (*model.Decision, error) {
	d := &model.Decision{ID: e.get("id"), Name: e.get("name"), Variable: im.variable(e), Pos: e.pos}
	if ext := e.child("extensionElements"); ext != nil {
		for _, c := range ext.children {
			if c.local == "versionTag" {
				d.VersionTag = c.get("value")
			}
		}
	}
	reqs, err := im.requirements(e)
	if err != nil {
		return nil, err
	}
	d.Requires = reqs
	for _, c := range e.children {
		if b, err := im.boxed(c); err != nil {
			return nil, err
		} else if b != nil {
			d.Logic = b
			break
		}
	}
	return d, nil
}

func (im *importer) bkm(e *element) (*model.BKM, error) {
	b := &model.BKM{ID: e.get("id"), Name: e.get("name"), Variable: im.variable(e), Pos: e.pos}
	reqs, err := im.requirements(e)
	if err != nil {
		return nil, err
	}
	b.Requires = reqs
	if l := e.child("encapsulatedLogic"); l != nil {
		f, err := im.function(l)
		if err != nil {
			return nil, err
		}
		b.Logic = f
	}
	return b, nil
}

// boxedNames are the elements that are boxed expressions.
var boxedNames = map[string]bool{"literalExpression": true, "decisionTable": true, "context": true,
	"invocation": true, "list": true, "relation": true, "functionDefinition": true, "conditional": true,
	"filter": true, "for": true, "some": true, "every": true}

// boxed reads e as a boxed expression, or returns nil when e is none.
func (im *importer) boxed(e *element) (model.BoxedExpression, error) {
	if e.space != im.ns || !boxedNames[e.local] {
		return nil, nil
	}
	base := model.Boxed{ID: e.get("id"), TypeRef: typeRef(e), Pos: e.pos}
	switch e.local {
	case "literalExpression":
		l := &model.LiteralExpression{Boxed: base, Text: e.textOf(), Language: e.get("expressionLanguage")}
		return l, nil
	case "decisionTable":
		return im.table(e, base)
	case "context":
		c := &model.ContextExpression{Boxed: base}
		for _, en := range e.all("contextEntry") {
			var entry model.ContextEntry
			if v := en.child("variable"); v != nil {
				entry.Variable = &model.InformationItem{Name: v.get("name"), TypeRef: typeRef(v)}
			}
			val, err := im.first(en)
			if err != nil {
				return nil, err
			}
			entry.Value = val
			c.Entries = append(c.Entries, entry)
		}
		return c, nil
	case "invocation":
		inv := &model.Invocation{Boxed: base}
		for _, c := range e.children {
			if c.local == "binding" {
				var b model.Binding
				if p := c.child("parameter"); p != nil {
					b.Param = model.InformationItem{Name: p.get("name"), TypeRef: typeRef(p)}
				} else {
					return nil, im.errAt(c, "binding without parameter")
				}
				v, err := im.first(c)
				if err != nil {
					return nil, err
				}
				b.Value = v
				inv.Bindings = append(inv.Bindings, b)
				continue
			}
			if inv.Callee == nil {
				v, err := im.boxed(c)
				if err != nil {
					return nil, err
				}
				inv.Callee = v
			}
		}
		if inv.Callee == nil {
			return nil, im.errAt(e, "invocation names no function")
		}
		return inv, nil
	case "list":
		l := &model.ListExpression{Boxed: base}
		for _, c := range e.children {
			v, err := im.boxed(c)
			if err != nil {
				return nil, err
			}
			if v != nil {
				l.Items = append(l.Items, v)
			}
		}
		return l, nil
	case "relation":
		r := &model.Relation{Boxed: base}
		for _, c := range e.all("column") {
			r.Columns = append(r.Columns, model.InformationItem{Name: c.get("name"), TypeRef: typeRef(c)})
		}
		for _, row := range e.all("row") {
			var cells []model.BoxedExpression
			for _, c := range row.children {
				v, err := im.boxed(c)
				if err != nil {
					return nil, err
				}
				if v != nil {
					cells = append(cells, v)
				}
			}
			if len(cells) != len(r.Columns) {
				return nil, im.errAt(row, "relation row has %d cells for %d columns", len(cells), len(r.Columns))
			}
			r.Rows = append(r.Rows, cells)
		}
		return r, nil
	case "functionDefinition":
		return im.function(e)
	case "conditional":
		c := &model.Conditional{Boxed: base}
		var err error
		if c.If, err = im.part(e, "if"); err != nil {
			return nil, err
		}
		if c.Then, err = im.part(e, "then"); err != nil {
			return nil, err
		}
		if c.Else, err = im.part(e, "else"); err != nil {
			return nil, err
		}
		return c, nil
	case "filter":
		f := &model.FilterExpression{Boxed: base}
		var err error
		if f.In, err = im.part(e, "in"); err != nil {
			return nil, err
		}
		if f.Match, err = im.part(e, "match"); err != nil {
			return nil, err
		}
		return f, nil
	default: // for, some, every
		it := &model.Iterator{Boxed: base, Kind: e.local, Variable: e.get("iteratorVariable")}
		if it.Variable == "" {
			return nil, im.errAt(e, "%s without iteratorVariable", e.local)
		}
		var err error
		if it.In, err = im.part(e, "in"); err != nil {
			return nil, err
		}
		body := "satisfies"
		if e.local == "for" {
			body = "return"
		}
		if it.Body, err = im.part(e, body); err != nil {
			return nil, err
		}
		return it, nil
	}
}

// part reads the boxed expression inside e's child named local.
func (im *importer) part(e *element, local string) (model.BoxedExpression, error) {
	c := e.child(local)
	if c == nil {
		return nil, im.errAt(e, "%s without <%s>", e.local, local)
	}
	v, err := im.first(c)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, im.errAt(c, "<%s> holds no expression", local)
	}
	return v, nil
}

// first returns the first boxed expression among e's children, or nil.
func (im *importer) first(e *element) (model.BoxedExpression, error) {
	for _, c := range e.children {
		v, err := im.boxed(c)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

func (im *importer) function(e *element) (*model.FunctionDefinition, error) {
	f := &model.FunctionDefinition{Boxed: model.Boxed{ID: e.get("id"), TypeRef: typeRef(e), Pos: e.pos}, Kind: e.get("kind")}
	if f.Kind == "" {
		f.Kind = "FEEL"
	}
	for _, c := range e.children {
		if c.local == "formalParameter" {
			f.Params = append(f.Params, model.InformationItem{Name: c.get("name"), TypeRef: typeRef(c)})
			continue
		}
		if f.Body == nil {
			v, err := im.boxed(c)
			if err != nil {
				return nil, err
			}
			f.Body = v
		}
	}
	return f, nil
}

// hitPolicies are the hit policies DMN defines.
var hitPolicies = map[string]bool{"UNIQUE": true, "ANY": true, "PRIORITY": true, "FIRST": true,
	"RULE ORDER": true, "OUTPUT ORDER": true, "COLLECT": true}

func (im *importer) table(e *element, base model.Boxed) (*model.DecisionTable, error) {
	t := &model.DecisionTable{Boxed: base, HitPolicy: model.HitPolicy(e.get("hitPolicy")),
		Aggregation: e.get("aggregation"), OutputLabel: e.get("outputLabel")}
	if t.HitPolicy == "" {
		t.HitPolicy = "UNIQUE"
	}
	if !hitPolicies[string(t.HitPolicy)] {
		return nil, im.errAt(e, "unknown hit policy %q (UNIQUE, ANY, PRIORITY, FIRST, RULE ORDER, OUTPUT ORDER, COLLECT)", t.HitPolicy)
	}
	switch t.Aggregation {
	case "", "SUM", "MIN", "MAX", "COUNT":
	default:
		return nil, im.errAt(e, "unknown aggregation %q (SUM, MIN, MAX, COUNT)", t.Aggregation)
	}
	if t.Aggregation != "" && t.HitPolicy != "COLLECT" {
		return nil, im.errAt(e, "aggregation %s with hit policy %s: only COLLECT aggregates", t.Aggregation, t.HitPolicy)
	}
	for _, c := range e.all("input") {
		in := model.DecisionInput{ID: c.get("id"), Label: c.get("label"), Pos: c.pos}
		if ie := c.child("inputExpression"); ie != nil {
			in.Expression = model.LiteralExpression{Boxed: model.Boxed{ID: ie.get("id"), TypeRef: typeRef(ie), Pos: ie.pos},
				Text: ie.textOf(), Language: ie.get("expressionLanguage")}
		} else {
			return nil, im.errAt(c, "input without inputExpression")
		}
		if iv := c.child("inputValues"); iv != nil {
			in.InputValues = iv.textOf()
		}
		t.Inputs = append(t.Inputs, in)
	}
	for _, c := range e.all("output") {
		out := model.DecisionOutput{ID: c.get("id"), Name: c.get("name"), Label: c.get("label"), TypeRef: typeRef(c), Pos: c.pos}
		if ov := c.child("outputValues"); ov != nil {
			out.OutputValues = ov.textOf()
		}
		if d := c.child("defaultOutputEntry"); d != nil {
			out.Default = d.textOf()
		}
		t.Outputs = append(t.Outputs, out)
	}
	if len(t.Outputs) == 0 {
		return nil, im.errAt(e, "decision table without output")
	}
	if len(t.Outputs) > 1 {
		for _, o := range t.Outputs {
			if o.Name == "" {
				return nil, im.errAt(e, "decision table with %d outputs: every output needs a name", len(t.Outputs))
			}
		}
	}
	for _, r := range e.all("rule") {
		rule := model.DecisionRule{ID: r.get("id"), Pos: r.pos}
		for _, ie := range r.all("inputEntry") {
			rule.Inputs = append(rule.Inputs, ie.textOf())
		}
		for _, oe := range r.all("outputEntry") {
			rule.Outputs = append(rule.Outputs, oe.textOf())
		}
		if len(rule.Inputs) != len(t.Inputs) {
			return nil, im.errAt(r, "rule has %d input entries for %d inputs", len(rule.Inputs), len(t.Inputs))
		}
		if len(rule.Outputs) != len(t.Outputs) {
			return nil, im.errAt(r, "rule has %d output entries for %d outputs", len(rule.Outputs), len(t.Outputs))
		}
		t.Rules = append(t.Rules, rule)
	}
	return t, nil
}

// parse reads data into an element tree.
func parse(file string, data []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(charset string, r io.Reader) (io.Reader, error) {
		if strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "us-ascii") {
			return r, nil
		}
		return nil, fmt.Errorf("unsupported charset %q (write the model in UTF-8)", charset)
	}
	var root *element
	var stack []*element
	for {
		line, col := d.InputPos()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &Error{File: file, Line: se.Line, Msg: "malformed XML: " + se.Msg}
			}
			line, col = d.InputPos()
			return nil, &Error{File: file, Line: line, Col: col, Msg: "malformed XML: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			pos := model.Position{Line: line, Column: col}
			if len(stack) >= maxDepth {
				return nil, &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf("elements nested deeper than %d levels", maxDepth)}
			}
			e := &element{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr, pos: pos}
			if len(stack) == 0 {
				root = e
			} else {
				stack[len(stack)-1].children = append(stack[len(stack)-1].children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: "no root element"}
	}
	return root, nil
}
