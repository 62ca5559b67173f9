package model

import (
	"cmp"
	"fmt"
	"slices"
)

// Problem is one rule a model breaks, found at import, validation or
// compilation. The engine turns it into its public Problem.
type Problem struct {
	// RuleID names the broken rule: "EXT.127" or "REF.12" for a rule of
	// the BPMN 2.0 constraint catalogue (the extended constraints and the
	// reference table BPMNspector numbers), "XSD.<what>" for a schema rule,
	// "FT.<what>" for a rule of flowtrack's own (RULES.md lists them all).
	RuleID string
	// ProcessID is the process the element belongs to, when known.
	ProcessID string
	// ElementID is the offending element's id; empty for document-level
	// problems (malformed XML).
	ElementID string
	// Pos is where the offending element starts in the document; zero
	// when unknown.
	Pos Position
	// Rule says what is wrong and how to fix it, in one line a modeller
	// understands.
	Rule string
}

// Position is a place in a source document: 1-based line and column
// (counted in bytes, as encoding/xml does). The zero Position is unknown.
type Position struct {
	Line, Column int
}

// Error renders the problem as "element ID: rule".
func (p *Problem) Error() string {
	if p.ElementID == "" {
		return p.Rule
	}
	return fmt.Sprintf("element %s: %s", p.ElementID, p.Rule)
}

// Locate sets the position of each problem that has none from the
// positions of the definitions' elements, by element id.
func (d *Definitions) Locate(ps []*Problem) {
	if d == nil {
		return
	}
	for _, p := range ps {
		if p.Pos == (Position{}) && p.ElementID != "" {
			p.Pos = d.Positions[p.ElementID]
		}
	}
}

// SortProblems orders problems by position in the document (unknown
// positions first: they concern the whole document), then by rule and
// element, and drops exact duplicates, which several checks may find.
func SortProblems(ps []*Problem) []*Problem {
	slices.SortFunc(ps, func(a, b *Problem) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.ElementID, b.ElementID), cmp.Compare(a.RuleID, b.RuleID), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.ProcessID, b.ProcessID))
	})
	return slices.CompactFunc(ps, func(a, b *Problem) bool { return *a == *b })
}

// MergeStages joins the problems of the checking stages (import,
// validation, compilation), earlier stages first, into one sorted list. A
// later stage's problem is dropped when an earlier stage already reported
// the same rule on the same element: several stages look at some rules
// (a missing message reference stops both validation and compilation),
// and the modeller needs to hear about each broken rule once.
func MergeStages(stages ...[]*Problem) []*Problem {
	type key struct{ rule, process, element string }
	var out []*Problem
	for _, ps := range stages {
		seen := make(map[key]bool, len(out))
		for _, p := range out {
			seen[key{p.RuleID, p.ProcessID, p.ElementID}] = true
		}
		for _, p := range ps {
			if p.ElementID == "" || !seen[key{p.RuleID, p.ProcessID, p.ElementID}] {
				out = append(out, p)
			}
		}
	}
	return SortProblems(out)
}
