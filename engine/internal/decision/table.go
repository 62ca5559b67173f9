package decision

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// tableC is a compiled decision table.
type tableC struct {
	t           *model.DecisionTable
	inputs      []*expr.Program
	inputValues []*expr.Tests
	outTypes    []*dtype
	// outValues are each output's allowed values, in priority order (the
	// first is the highest), or nil.
	outValues  [][]any
	outTests   []*expr.Tests
	defaults   []*expr.Program
	rules      []ruleC
	hasDefault bool
}

type ruleC struct {
	tests   []*expr.Tests
	outputs []*expr.Program
}

func (m *modelC) compileTable(t *model.DecisionTable) (evalFn, error) {
	opts := m.exprOpts()
	tc := &tableC{t: t}
	for i, in := range t.Inputs {
		p, err := expr.Compile(model.Expression{Text: in.Expression.Text, Language: "FEEL"}, expr.Value, opts)
		if err != nil {
			return nil, fmt.Errorf("input %d (%s): %w", i+1, in.Expression.Text, err)
		}
		tc.inputs = append(tc.inputs, p)
		var iv *expr.Tests
		if strings.TrimSpace(in.InputValues) != "" {
			if iv, err = expr.CompileTests(in.InputValues, opts); err != nil {
				return nil, fmt.Errorf("input %d input values: %w", i+1, err)
			}
		}
		tc.inputValues = append(tc.inputValues, iv)
	}
	for i, out := range t.Outputs {
		typ, err := m.resolveType(out.TypeRef)
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", i+1, err)
		}
		tc.outTypes = append(tc.outTypes, typ)
		var values []any
		var tests *expr.Tests
		if strings.TrimSpace(out.OutputValues) != "" {
			if tests, err = expr.CompileTests(out.OutputValues, opts); err != nil {
				return nil, fmt.Errorf("output %d output values: %w", i+1, err)
			}
			if l, err := expr.Literal("["+out.OutputValues+"]", opts); err == nil {
				values, _ = l.([]any)
			}
		}
		tc.outValues = append(tc.outValues, values)
		tc.outTests = append(tc.outTests, tests)
		var def *expr.Program
		if strings.TrimSpace(out.Default) != "" {
			if def, err = expr.Compile(model.Expression{Text: out.Default, Language: "FEEL"}, expr.Value, opts); err != nil {
				return nil, fmt.Errorf("output %d default output entry: %w", i+1, err)
			}
			tc.hasDefault = true
		}
		tc.defaults = append(tc.defaults, def)
	}
	for k, r := range t.Rules {
		var rc ruleC
		for i, text := range r.Inputs {
			ts, err := expr.CompileTests(text, opts)
			if err != nil {
				return nil, fmt.Errorf("rule %d input entry %d: %w", k+1, i+1, err)
			}
			rc.tests = append(rc.tests, ts)
		}
		for i, text := range r.Outputs {
			if isBlank(text) {
				rc.outputs = append(rc.outputs, nil)
				continue
			}
			p, err := expr.Compile(model.Expression{Text: text, Language: "FEEL"}, expr.Value, opts)
			if err != nil {
				return nil, fmt.Errorf("rule %d output entry %d: %w", k+1, i+1, err)
			}
			if err := tc.checkConstant(m, i, text); err != nil {
				return nil, fmt.Errorf("rule %d output entry %d: %w", k+1, i+1, err)
			}
			rc.outputs = append(rc.outputs, p)
		}
		tc.rules = append(tc.rules, rc)
	}
	return tc.eval, nil
}

// checkConstant refuses, at compile, an output entry that is a constant
// outside its output's output values (a strict compile: a lenient one
// leaves it to the evaluation, which fails when the rule matches).
func (tc *tableC) checkConstant(m *modelC, i int, text string) error {
	ts := tc.outTests[i]
	if ts == nil || m.set.opts.Lenient {
		return nil
	}
	v, err := expr.Literal(text, expr.Options{})
	if err != nil || v == nil {
		return nil // not a constant: it reads names
	}
	if ok, err := ts.Match(v, map[string]any{}); err == nil && !ok {
		return fmt.Errorf("%s is not among the output's output values (%s)", strings.TrimSpace(text), ts.Text())
	}
	return nil
}

// hit is a matched rule with its outputs.
type hit struct {
	index   int
	outputs []any
	prio    []int
}

func (tc *tableC) eval(r *run, scope map[string]any) (any, error) {
	t := tc.t
	ins := make([]any, len(tc.inputs))
	for i, p := range tc.inputs {
		v, err := p.EvalFEEL(scope)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i+1, err)
		}
		if iv := tc.inputValues[i]; iv != nil && v != nil {
			ok, err := iv.Match(v, scopeFor(scope))
			if err != nil || !ok {
				return nil, fmt.Errorf("input %d: %s is not among its input values (%s)", i+1, show(v), iv.Text())
			}
		}
		ins[i] = v
	}
	var hits []hit
	vars := scopeFor(scope)
	for k, rule := range tc.rules {
		ok := true
		for i, ts := range rule.tests {
			m, err := ts.Match(ins[i], vars)
			if err != nil || !m {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		h := hit{index: k}
		for i, p := range rule.outputs {
			var v any
			if p != nil {
				var err error
				if v, err = p.EvalFEEL(vars); err != nil {
					return nil, fmt.Errorf("rule %d output %d: %w", k+1, i+1, err)
				}
			}
			if v, err := tc.checkOutput(i, v); err != nil {
				return nil, fmt.Errorf("rule %d: %w", k+1, err)
			} else {
				h.outputs = append(h.outputs, v)
			}
		}
		h.prio = tc.priority(h.outputs)
		hits = append(hits, h)
	}
	if len(hits) == 0 {
		return tc.defaultResult(vars)
	}
	// The rules the result comes from: the first for FIRST, the
	// chosen one for PRIORITY, all that matched otherwise.
	used := hits
	switch t.HitPolicy {
	case "FIRST":
		used = hits[:1]
	case "PRIORITY":
		used = tc.byPriority(hits)[:1]
	case "OUTPUT ORDER":
		used = tc.byPriority(hits)
	}
	if r.matched != nil {
		for _, h := range used {
			*r.matched = append(*r.matched, MatchedRule{ID: t.Rules[h.index].ID, Index: h.index + 1})
		}
	}
	switch t.HitPolicy {
	case "UNIQUE":
		if len(hits) > 1 {
			return nil, fmt.Errorf("hit policy UNIQUE: rules %s matched", ruleList(hits))
		}
		return tc.result(hits[0]), nil
	case "ANY":
		for _, h := range hits[1:] {
			if !expr.Equal(tc.result(h), tc.result(hits[0])) {
				return nil, fmt.Errorf("hit policy ANY: rules %s matched with different outputs", ruleList(hits))
			}
		}
		return tc.result(hits[0]), nil
	case "FIRST":
		return tc.result(hits[0]), nil
	case "PRIORITY":
		sorted := tc.byPriority(hits)
		return tc.result(sorted[0]), nil
	case "OUTPUT ORDER":
		return tc.results(tc.byPriority(hits)), nil
	case "RULE ORDER":
		return tc.results(hits), nil
	}
	// COLLECT
	if t.Aggregation == "" {
		return tc.results(hits), nil
	}
	if len(t.Outputs) != 1 {
		return nil, fmt.Errorf("hit policy COLLECT %s with %d outputs: aggregation needs one", t.Aggregation, len(t.Outputs))
	}
	vals := make([]any, 0, len(hits))
	for _, h := range hits {
		if h.outputs[0] != nil {
			vals = append(vals, h.outputs[0])
		}
	}
	return aggregate(t.Aggregation, vals)
}

// aggregations are the programs of the COLLECT aggregations, compiled
// once: compiling one per evaluation cost ten times the 100 rules of a
// table it aggregates (make bench-dmn).
var aggregations = sync.OnceValues(func() (map[string]*expr.Program, error) {
	out := map[string]*expr.Program{}
	for agg, fn := range map[string]string{"SUM": "sum(v)", "MIN": "min(v)", "MAX": "max(v)", "COUNT": "count(v)"} {
		p, err := expr.Compile(model.Expression{Text: fn, Language: "FEEL"}, expr.Value, expr.Options{})
		if err != nil {
			return nil, fmt.Errorf("aggregation %s: %w", agg, err)
		}
		out[agg] = p
	}
	return out, nil
})

// aggregate applies a COLLECT aggregation with FEEL's own functions.
func aggregate(agg string, vals []any) (any, error) {
	if agg == "SUM" && len(vals) == 0 {
		return nil, nil
	}
	progs, err := aggregations()
	if err != nil {
		return nil, err
	}
	p := progs[agg]
	if p == nil {
		return nil, fmt.Errorf("unknown aggregation %q", agg)
	}
	return p.EvalFEEL(map[string]any{"v": vals})
}

// scopeFor copies scope for the unary tests, which set "?".
func scopeFor(scope map[string]any) map[string]any {
	s := make(map[string]any, len(scope)+1)
	for k, v := range scope {
		s[k] = v
	}
	return s
}

// checkOutput coerces an output entry's value to the output's type and
// checks it against the output values.
func (tc *tableC) checkOutput(i int, v any) (any, error) {
	v, err := coerce(v, tc.outTypes[i])
	if err != nil {
		return nil, fmt.Errorf("output %d: %w", i+1, err)
	}
	if ts := tc.outTests[i]; ts != nil && v != nil {
		ok, err := ts.Match(v, map[string]any{})
		if err != nil || !ok {
			return nil, fmt.Errorf("output %d: %s is not among its output values (%s)", i+1, show(v), ts.Text())
		}
	}
	return v, nil
}

// priority ranks outputs by their positions in the output values (lower
// first); an output without output values ranks all alike.
func (tc *tableC) priority(outs []any) []int {
	p := make([]int, len(outs))
	for i, v := range outs {
		vals := tc.outValues[i]
		p[i] = len(vals)
		for j, ov := range vals {
			if expr.Equal(v, ov) {
				p[i] = j
				break
			}
		}
	}
	return p
}

func (tc *tableC) byPriority(hits []hit) []hit {
	sorted := slices.Clone(hits)
	slices.SortStableFunc(sorted, func(a, b hit) int { return slices.Compare(a.prio, b.prio) })
	return sorted
}

// result is one hit's result: the value of a single output, or a context
// of the outputs by name.
func (tc *tableC) result(h hit) any {
	if len(tc.t.Outputs) == 1 {
		return h.outputs[0]
	}
	c := make(map[string]any, len(h.outputs))
	for i, o := range tc.t.Outputs {
		c[o.Name] = h.outputs[i]
	}
	return c
}

func (tc *tableC) results(hits []hit) any {
	out := make([]any, len(hits))
	for i, h := range hits {
		out[i] = tc.result(h)
	}
	return out
}

// defaultResult is the table's result when no rule matched: the default
// output entries, or null.
func (tc *tableC) defaultResult(vars map[string]any) (any, error) {
	if !tc.hasDefault {
		switch {
		case tc.t.HitPolicy == "COLLECT" && tc.t.Aggregation == "COUNT":
			return 0.0, nil
		case tc.t.HitPolicy == "COLLECT" && tc.t.Aggregation == "", tc.t.HitPolicy == "RULE ORDER", tc.t.HitPolicy == "OUTPUT ORDER":
			return []any{}, nil
		}
		return nil, nil
	}
	h := hit{}
	for i, p := range tc.defaults {
		var v any
		if p != nil {
			var err error
			if v, err = p.EvalFEEL(vars); err != nil {
				return nil, fmt.Errorf("output %d default: %w", i+1, err)
			}
		}
		v, err := tc.checkOutput(i, v)
		if err != nil {
			return nil, err
		}
		h.outputs = append(h.outputs, v)
	}
	return tc.result(h), nil
}

func ruleList(hits []hit) string {
	s := make([]string, len(hits))
	for i, h := range hits {
		s[i] = fmt.Sprint(h.index + 1)
	}
	return strings.Join(s, ", ")
}
