package model

// Index assigns dense Node.Index and Flow.Index values and builds the id
// lookup behind Process.Node. Importers call it once after adding every node
// and flow; it returns the first duplicate id it meets as a Problem. It
// indexes every node and flow even then, so later checks can still run on
// the process and report their own problems (the first node with an id
// keeps it in the lookup).
func (p *Process) Index() error {
	p.byID = make(map[string]*Node, len(p.Nodes))
	seen := make(map[string]bool, len(p.Nodes)+len(p.Flows))
	var dup error
	note := func(id string) {
		if id == "" {
			return // a missing id is a problem of its own (EXT.003)
		}
		if seen[id] && dup == nil {
			dup = &Problem{ProcessID: p.ID, ElementID: id, RuleID: "XSD.id", Rule: "duplicate id: give every element its own id"}
		}
		seen[id] = true
	}
	for i, n := range p.Nodes {
		note(n.ID)
		n.Index = i
		if _, ok := p.byID[n.ID]; !ok {
			p.byID[n.ID] = n
		}
	}
	for i, f := range p.Flows {
		note(f.ID)
		f.Index = i
	}
	return dup
}
