package decision

import (
	"maps"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Entries returns a decision's result as Camunda 7's decision result: a
// list with one entry per matched rule (a decision table; an aggregated
// COLLECT table or a single-hit policy gives at most one), each a
// context of output name to value; any other decision gives one entry,
// its variable's name to its value. Values are JSON values (Normalize).
func (s *Set) Entries(ref string, v any) []map[string]any {
	d := s.find(ref)
	if d == nil {
		return nil
	}
	t, isTable := d.d.Logic.(*model.DecisionTable)
	if !isTable {
		return []map[string]any{{d.d.Variable.Name: expr.Normalize(v)}}
	}
	if v == nil {
		return []map[string]any{}
	}
	row := func(x any) map[string]any {
		if len(t.Outputs) > 1 {
			if c, ok := x.(map[string]any); ok {
				out := maps.Clone(c)
				for k, e := range out {
					out[k] = expr.Normalize(e)
				}
				return out
			}
		}
		name := t.Outputs[0].Name
		if name == "" {
			name = t.Outputs[0].Label
		}
		if name == "" {
			name = d.d.Variable.Name
		}
		return map[string]any{name: expr.Normalize(x)}
	}
	multi := t.HitPolicy == "RULE ORDER" || t.HitPolicy == "OUTPUT ORDER" || t.HitPolicy == "COLLECT" && t.Aggregation == ""
	if !multi {
		return []map[string]any{row(v)}
	}
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		out = append(out, row(x))
	}
	return out
}
