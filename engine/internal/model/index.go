package model

// Index assigns dense Node.Index and Flow.Index values and builds the id
// lookup behind Process.Node. Importers call it once after adding every node
// and flow; it returns the first duplicate id it meets as a Problem.
func (p *Process) Index() error {
	p.byID = make(map[string]*Node, len(p.Nodes))
	seen := make(map[string]bool, len(p.Nodes)+len(p.Flows))
	for i, n := range p.Nodes {
		if seen[n.ID] {
			return &Problem{ProcessID: p.ID, ElementID: n.ID, RuleID: "XSD.id", Rule: "duplicate id: give every element its own id"}
		}
		seen[n.ID] = true
		n.Index = i
		p.byID[n.ID] = n
	}
	for i, f := range p.Flows {
		if seen[f.ID] {
			return &Problem{ProcessID: p.ID, ElementID: f.ID, RuleID: "XSD.id", Rule: "duplicate id: give every element its own id"}
		}
		seen[f.ID] = true
		f.Index = i
	}
	return nil
}
