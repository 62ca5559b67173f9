package model

import "fmt"

// Problem is one rule a model breaks, found at import or validation. The
// engine turns it into its public DeployError.
type Problem struct {
	// ProcessID is the process the element belongs to, when known.
	ProcessID string
	// ElementID is the offending element's id; empty for document-level
	// problems (malformed XML).
	ElementID string
	// Rule says what is wrong, in words a modeller understands.
	Rule string
}

// Error renders the problem as "element ID: rule".
func (p *Problem) Error() string {
	if p.ElementID == "" {
		return p.Rule
	}
	return fmt.Sprintf("element %s: %s", p.ElementID, p.Rule)
}
