// Package decision compiles DMN models (model.DMNDefinitions) and
// evaluates their decisions: decision tables with every hit policy,
// literal expressions and the boxed expressions, business knowledge
// models, decision services, item definitions with their coercion, and
// imports between models. FEEL is engine/internal/expr's.
//
// A Set is compiled once (every expression compiled, every requirement
// resolved, cycles refused) and is immutable: evaluations may run
// concurrently.
package decision

import (
	"fmt"
	"strings"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Options configure compilation. The zero value is ready to use.
type Options struct {
	// Clock is what now() and today() read. Default: clock.Real{}.
	Clock clock.Clock
	// Lenient compiles a model whose decision or business knowledge
	// model has an expression that does not compile: evaluating that
	// element fails (its result is null) and Set.Problems lists it, as
	// the DMN TCK expects of a model with one erroneous decision among
	// many. Default: such a model is refused (a deployment is).
	Lenient bool
}

// CompileError is a model that does not compile: the file, the position
// and the element, and what is wrong.
type CompileError struct {
	File    string
	Pos     model.Position
	Element string
	Err     error
}

// Error renders "file:line:col: element X: problem".
func (e *CompileError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %v", e.File, e.Pos.Line, e.Pos.Column, e.Element, e.Err)
}

// Unwrap returns the cause.
func (e *CompileError) Unwrap() error { return e.Err }

// ErrUnknownDecision is returned by Evaluate for a decision that no model
// of the set has.
var ErrUnknownDecision = api.ErrUnknownDecision

// Set is a compiled set of DMN models that may import each other.
type Set struct {
	models   []*modelC
	opts     Options
	problems []error
}

// Problems lists the elements that did not compile (Options.Lenient).
func (s *Set) Problems() []error { return s.problems }

// deferred returns the compile error err as what evaluating the element
// yields, when the set is lenient.
func (m *modelC) deferred(err error) (evalFn, bool) {
	if !m.set.opts.Lenient {
		return nil, false
	}
	m.set.problems = append(m.set.problems, err)
	return func(*run, map[string]any) (any, error) { return nil, err }, true
}

// modelC is one compiled model.
type modelC struct {
	set      *Set
	defs     *model.DMNDefinitions
	names    []string
	itemDefs map[string]*model.ItemDefinition
	types    map[string]*dtype
	// resolving are the item definitions being resolved (cycles).
	resolving map[string]bool
	imports   map[string]*modelC
	byID      map[string]any // *decisionC, *inputC, *bkmC, *serviceC
	decisions []*decisionC
	clock     clock.Clock
}

type decisionC struct {
	m     *modelC
	d     *model.Decision
	typ   *dtype
	logic evalFn
	reqs  []reqC
}

type inputC struct {
	m   *modelC
	d   *model.InputData
	typ *dtype
}

type bkmC struct {
	m    *modelC
	b    *model.BKM
	fn   *funcC
	reqs []reqC
}

type serviceC struct {
	m       *modelC
	s       *model.DecisionService
	typ     *dtype
	outputs []*decisionC
	inDecs  []*decisionC
	inputs  []*inputC
}

// reqC is a resolved requirement: the element, and the import name
// under which the requiring model sees it ("" for its own).
type reqC struct {
	imp  string
	elem any
}

func (m *modelC) exprOpts() expr.Options {
	return expr.Options{Language: "FEEL", Names: m.names, Clock: m.clock, Types: m.namedType}
}

// namedType is the test of an item definition named in "instance of".
func (m *modelC) namedType(name string) (func(any) bool, bool) {
	t, err := m.resolveType(name)
	if err != nil || t == nil {
		return nil, false
	}
	return func(v any) bool { return v != nil && conformsAs(v, t, false) }, true
}

// Compile compiles models: the first is the main one; the others are the
// models they import (found by namespace).
//
// # Errors
//
// *CompileError for an expression that does not compile, an unknown
// type, a requirement that names nothing, a cycle of requirements, or an
// import of a model not given.
func Compile(models []*model.DMNDefinitions, opts Options) (*Set, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	s := &Set{opts: opts}
	byNS := map[string]*modelC{}
	for _, d := range models {
		m := &modelC{set: s, defs: d, itemDefs: map[string]*model.ItemDefinition{}, types: map[string]*dtype{},
			resolving: map[string]bool{}, imports: map[string]*modelC{}, byID: map[string]any{}, clock: opts.Clock}
		for _, it := range d.ItemDefinitions {
			m.itemDefs[it.Name] = it
		}
		s.models = append(s.models, m)
		if d.Namespace != "" {
			byNS[d.Namespace] = m
		}
	}
	for _, m := range s.models {
		for _, imp := range m.defs.Imports {
			if imp.ImportType != "" && !strings.Contains(strings.ToLower(imp.ImportType), "dmn") {
				continue
			}
			im := byNS[imp.Namespace]
			if im == nil {
				return nil, &CompileError{File: m.defs.File, Pos: imp.Pos, Element: "import " + imp.Name,
					Err: fmt.Errorf("imports namespace %s, which no model given has", imp.Namespace)}
			}
			m.imports[imp.Name] = im
		}
	}
	for _, m := range s.models {
		m.collectNames()
		m.declare()
	}
	for _, m := range s.models {
		if err := m.compile(); err != nil {
			return nil, err
		}
	}
	for _, m := range s.models {
		for _, d := range m.decisions {
			if err := checkCycle(d, map[*decisionC]int{}); err != nil {
				return nil, &CompileError{File: m.defs.File, Pos: d.d.Pos, Element: "decision " + d.d.Name, Err: err}
			}
		}
	}
	return s, nil
}

// checkCycle refuses a decision that requires itself, directly or not.
func checkCycle(d *decisionC, state map[*decisionC]int) error {
	switch state[d] {
	case 1:
		return fmt.Errorf("decision %s requires itself (a cycle of requirements)", d.d.Name)
	case 2:
		return nil
	}
	state[d] = 1
	for _, r := range d.reqs {
		if rd, ok := r.elem.(*decisionC); ok {
			if err := checkCycle(rd, state); err != nil {
				return err
			}
		}
	}
	state[d] = 2
	return nil
}

// collectNames gathers every name an expression of m may read: the
// names of its elements and its imports' elements, item components,
// context entries, parameters and columns; FEEL reads them as one name
// even when they hold spaces.
func (m *modelC) collectNames() {
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			m.names = append(m.names, n)
		}
	}
	addDefs := func(d *model.DMNDefinitions) {
		for _, x := range d.Decisions {
			add(x.Name)
			add(x.Variable.Name)
			walkBoxed(x.Logic, add)
		}
		for _, x := range d.InputData {
			add(x.Name)
			add(x.Variable.Name)
		}
		for _, x := range d.BKMs {
			add(x.Name)
			if x.Logic != nil {
				walkBoxed(x.Logic, add)
			}
		}
		for _, x := range d.Services {
			add(x.Name)
		}
		var item func(it *model.ItemDefinition)
		item = func(it *model.ItemDefinition) {
			add(it.Name)
			for _, c := range it.Components {
				item(c)
			}
			if it.Function != nil {
				for _, p := range it.Function.Params {
					add(p.Name)
				}
			}
		}
		for _, it := range d.ItemDefinitions {
			item(it)
		}
		for _, imp := range d.Imports {
			add(imp.Name)
		}
	}
	addDefs(m.defs)
	for _, im := range m.imports {
		addDefs(im.defs)
	}
}

// walkBoxed calls add with every name a boxed expression declares.
func walkBoxed(b model.BoxedExpression, add func(string)) {
	switch x := b.(type) {
	case *model.ContextExpression:
		for _, e := range x.Entries {
			if e.Variable != nil {
				add(e.Variable.Name)
			}
			walkBoxed(e.Value, add)
		}
	case *model.Invocation:
		walkBoxed(x.Callee, add)
		for _, bd := range x.Bindings {
			add(bd.Param.Name)
			walkBoxed(bd.Value, add)
		}
	case *model.ListExpression:
		for _, i := range x.Items {
			walkBoxed(i, add)
		}
	case *model.Relation:
		for _, c := range x.Columns {
			add(c.Name)
		}
		for _, r := range x.Rows {
			for _, c := range r {
				walkBoxed(c, add)
			}
		}
	case *model.FunctionDefinition:
		if x == nil {
			return
		}
		for _, p := range x.Params {
			add(p.Name)
		}
		walkBoxed(x.Body, add)
	case *model.Conditional:
		walkBoxed(x.If, add)
		walkBoxed(x.Then, add)
		walkBoxed(x.Else, add)
	case *model.FilterExpression:
		walkBoxed(x.In, add)
		walkBoxed(x.Match, add)
	case *model.Iterator:
		add(x.Variable)
		walkBoxed(x.In, add)
		walkBoxed(x.Body, add)
	case *model.DecisionTable:
		for _, o := range x.Outputs {
			add(o.Name)
		}
	}
}

// declare registers m's elements by id, before any is compiled, so that
// requirements resolve in any order.
func (m *modelC) declare() {
	for _, d := range m.defs.Decisions {
		dc := &decisionC{m: m, d: d}
		m.decisions = append(m.decisions, dc)
		m.byID[d.ID] = dc
	}
	for _, d := range m.defs.InputData {
		m.byID[d.ID] = &inputC{m: m, d: d}
	}
	for _, b := range m.defs.BKMs {
		m.byID[b.ID] = &bkmC{m: m, b: b}
	}
	for _, s := range m.defs.Services {
		m.byID[s.ID] = &serviceC{m: m, s: s}
	}
}

// resolve finds a requirement's element: "#id" in m, "namespace#id" in
// an imported model (seen under the import's name).
func (m *modelC) resolve(href string) (reqC, error) {
	ns, id, found := strings.Cut(href, "#")
	if !found {
		id, ns = href, ""
	}
	if ns == "" || ns == m.defs.Namespace {
		if e, ok := m.byID[id]; ok {
			return reqC{elem: e}, nil
		}
		return reqC{}, fmt.Errorf("requires %s, which the model does not have", href)
	}
	for name, im := range m.imports {
		if im.defs.Namespace == ns {
			if e, ok := im.byID[id]; ok {
				return reqC{imp: name, elem: e}, nil
			}
		}
	}
	return reqC{}, fmt.Errorf("requires %s, which no imported model has", href)
}

func (m *modelC) compile() error {
	file := m.defs.File
	for _, in := range m.defs.InputData {
		ic := m.byID[in.ID].(*inputC)
		t, err := m.resolveType(in.Variable.TypeRef)
		if err != nil {
			return &CompileError{File: file, Pos: in.Pos, Element: "input data " + in.Name, Err: err}
		}
		ic.typ = t
	}
	for _, b := range m.defs.BKMs {
		bc := m.byID[b.ID].(*bkmC)
		for _, r := range b.Requires {
			rc, err := m.resolve(r.Href)
			if err != nil {
				return &CompileError{File: file, Pos: r.Pos, Element: "business knowledge model " + b.Name, Err: err}
			}
			bc.reqs = append(bc.reqs, rc)
		}
		if b.Logic != nil {
			f, err := m.compileFunction(b.Logic)
			if err != nil {
				cerr := &CompileError{File: file, Pos: b.Pos, Element: "business knowledge model " + b.Name, Err: err}
				fail, ok := m.deferred(cerr)
				if !ok {
					return cerr
				}
				f = &funcC{def: b.Logic, body: fail, types: make([]*dtype, len(b.Logic.Params))}
			}
			bc.fn = f
		}
	}
	for _, dc := range m.decisions {
		d := dc.d
		t, err := m.resolveType(d.Variable.TypeRef)
		if err != nil {
			return &CompileError{File: file, Pos: d.Pos, Element: "decision " + d.Name, Err: err}
		}
		dc.typ = t
		for _, r := range d.Requires {
			rc, err := m.resolve(r.Href)
			if err != nil {
				return &CompileError{File: file, Pos: r.Pos, Element: "decision " + d.Name, Err: err}
			}
			dc.reqs = append(dc.reqs, rc)
		}
		if d.Logic != nil {
			f, err := m.compileBoxed(d.Logic)
			if err != nil {
				cerr := &CompileError{File: file, Pos: posOf(d.Logic, d.Pos), Element: "decision " + d.Name, Err: err}
				fail, ok := m.deferred(cerr)
				if !ok {
					return cerr
				}
				f = fail
			}
			dc.logic = f
		}
	}
	for _, s := range m.defs.Services {
		sc := m.byID[s.ID].(*serviceC)
		t, err := m.resolveType(s.Variable.TypeRef)
		if err != nil {
			return &CompileError{File: file, Pos: s.Pos, Element: "decision service " + s.Name, Err: err}
		}
		sc.typ = t
		for _, lists := range []struct {
			hrefs []string
			dec   *[]*decisionC
			in    *[]*inputC
		}{{s.Outputs, &sc.outputs, nil}, {s.InputDecisions, &sc.inDecs, nil}, {s.Inputs, nil, &sc.inputs}} {
			for _, h := range lists.hrefs {
				rc, err := m.resolve(h)
				if err != nil {
					return &CompileError{File: file, Pos: s.Pos, Element: "decision service " + s.Name, Err: err}
				}
				switch e := rc.elem.(type) {
				case *decisionC:
					if lists.dec == nil {
						return &CompileError{File: file, Pos: s.Pos, Element: "decision service " + s.Name, Err: fmt.Errorf("%s is a decision, not input data", h)}
					}
					*lists.dec = append(*lists.dec, e)
				case *inputC:
					if lists.in == nil {
						return &CompileError{File: file, Pos: s.Pos, Element: "decision service " + s.Name, Err: fmt.Errorf("%s is input data, not a decision", h)}
					}
					*lists.in = append(*lists.in, e)
				default:
					return &CompileError{File: file, Pos: s.Pos, Element: "decision service " + s.Name, Err: fmt.Errorf("%s is no decision or input data", h)}
				}
			}
		}
	}
	return nil
}

func posOf(b model.BoxedExpression, def model.Position) model.Position {
	if b == nil {
		return def
	}
	p, _ := b.Where()
	if p.Line == 0 {
		return def
	}
	return p
}

// MatchedRule is a rule of a decision table that matched in an
// evaluation.
type MatchedRule struct {
	// ID is the rule's id; Index its 1-based position in the table.
	ID    string
	Index int
}

// Evaluated is one decision evaluated in an evaluation: its result (a raw
// FEEL value) and, for a decision table, the rules that matched.
type Evaluated struct {
	DecisionID, DecisionName string
	Value                    any
	Matched                  []MatchedRule
	// Err says why the decision's result is null, when it failed.
	Err error
}

// Result is an evaluation's outcome: the requested decision's value and
// every decision evaluated for it, required ones first.
type Result struct {
	Value     any
	Evaluated []Evaluated
}

// run is one evaluation.
type run struct {
	set    *Set
	inputs map[string]any
	// ambient, when set, are variables in scope of every decision and
	// BKM of ambientModel beneath their requirements (EvaluateInScope).
	ambient      map[string]any
	ambientModel *modelC
	memo         map[*decisionC]any
	given        map[*decisionC]any
	active       map[*decisionC]bool
	trace        []Evaluated
	// matched collects the matched rules of the decision tables of the
	// decision being evaluated.
	matched *[]MatchedRule
	// calls is how deeply calls of business knowledge models, boxed
	// functions and decision services nest now (maxCalls bounds it: a
	// model may recurse without end).
	calls int
	// steps counts the iterations of boxed for, some, every and filter
	// of the evaluation, bounded by maxSteps (nested iterations over
	// large lists would otherwise run without end).
	steps int64
}

// maxSteps bounds the boxed iterations of one evaluation (each FEEL
// expression has its own budgets besides).
const maxSteps = expr.DefaultMaxSteps

// step counts one boxed iteration.
func (r *run) step() error {
	r.steps++
	if r.steps > maxSteps {
		return fmt.Errorf("more than %d iterations of boxed for, some, every and filter in one evaluation", maxSteps)
	}
	return nil
}

// maxCalls bounds the nesting of calls in one evaluation.
const maxCalls = 64

// enter counts a call into a function of the model, failing past
// maxCalls; leave undoes it.
func (r *run) enter(what string) error {
	if r.calls >= maxCalls {
		return fmt.Errorf("%s: calls nested more than %d deep", what, maxCalls)
	}
	r.calls++
	return nil
}

func (r *run) leave() { r.calls-- }

// Decisions lists the decisions of the main model (id and name), in
// document order.
func (s *Set) Decisions() []model.InformationItem {
	var out []model.InformationItem
	if len(s.models) == 0 {
		return nil
	}
	for _, d := range s.models[0].decisions {
		out = append(out, model.InformationItem{Name: d.d.Name, TypeRef: d.d.ID})
	}
	return out
}

// Definitions returns the main model.
func (s *Set) Definitions() *model.DMNDefinitions {
	if len(s.models) == 0 {
		return nil
	}
	return s.models[0].defs
}

func (s *Set) find(ref string) *decisionC {
	for _, m := range s.models[:min(1, len(s.models))] {
		for _, d := range m.decisions {
			if d.d.ID == ref {
				return d
			}
		}
		for _, d := range m.decisions {
			if d.d.Name == ref {
				return d
			}
		}
	}
	return nil
}

// HasDecision reports whether the main model has a decision of that id
// or name.
func (s *Set) HasDecision(ref string) bool { return s.find(ref) != nil }

// Evaluate evaluates the main model's decision named ref (its id or its
// name) over inputs, keyed by input data name (an imported model's input
// data under its import's name, as a context). Values are raw FEEL values
// or JSON values (numbers, strings, booleans, lists, maps; a string where
// a date or a duration is declared is read as one).
//
// # Errors
//
// ErrUnknownDecision (wrapped) for a decision the model does not have.
// A decision whose logic fails yields null, not an error: the failure is
// in its Evaluated.Err, and the first one is returned too as
// *EvaluationError beside the result.
func (s *Set) Evaluate(ref string, inputs map[string]any) (*Result, error) {
	return s.evaluate(ref, inputs, false)
}

// EvaluateInScope evaluates as Evaluate does, with every one of vars in
// scope of every decision and business knowledge model of the main model,
// beneath the names its requirements declare, as Camunda evaluates a
// business rule task's decision over the process variables: decision
// tables modelled in Camunda Modeler read variables by name, with no
// input data elements. The DMN TCK's models see only what they require
// (Evaluate).
func (s *Set) EvaluateInScope(ref string, vars map[string]any) (*Result, error) {
	return s.evaluate(ref, vars, true)
}

func (s *Set) evaluate(ref string, inputs map[string]any, ambient bool) (*Result, error) {
	d := s.find(ref)
	if d == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownDecision, ref)
	}
	r := &run{set: s, inputs: inputs, memo: map[*decisionC]any{}, active: map[*decisionC]bool{}}
	if ambient && len(s.models) > 0 {
		r.ambient, r.ambientModel = inputs, s.models[0]
	}
	v := r.decision(d)
	res := &Result{Value: v, Evaluated: r.trace}
	for _, e := range r.trace {
		if e.Err != nil && e.DecisionID == d.d.ID {
			return res, &EvaluationError{Decision: e.DecisionName, Err: e.Err}
		}
	}
	return res, nil
}

// EvaluationError is a decision whose evaluation failed (its result is
// null).
type EvaluationError struct {
	Decision string
	Err      error
}

// Error names the decision and the failure.
func (e *EvaluationError) Error() string {
	return fmt.Sprintf("decision %s: %v", e.Decision, e.Err)
}

// Unwrap returns the cause.
func (e *EvaluationError) Unwrap() error { return e.Err }

// Invoke calls the main model's decision service named name (or id) with
// arguments by parameter name (its input decisions and input data).
func (s *Set) Invoke(name string, args map[string]any) (any, error) {
	if len(s.models) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownDecision, name)
	}
	m := s.models[0]
	for _, sv := range m.defs.Services {
		if sv.Name == name || sv.ID == name {
			sc := m.byID[sv.ID].(*serviceC)
			r := &run{set: s, memo: map[*decisionC]any{}, active: map[*decisionC]bool{}}
			params, vals := sc.params(), make([]any, 0)
			for _, p := range params {
				vals = append(vals, args[p])
			}
			return r.service(sc, vals)
		}
	}
	return nil, fmt.Errorf("%w: no decision service %q", ErrUnknownDecision, name)
}

// inputValue reads the value given for input data in.
func (r *run) inputValue(in *inputC, imp string) (any, error) {
	var v any
	var ok bool
	if imp != "" {
		if c, isCtx := r.inputs[imp].(map[string]any); isCtx {
			v, ok = c[in.d.Name]
		}
		if !ok {
			v, ok = r.inputs[imp+"."+in.d.Name]
		}
	}
	if !ok {
		v = r.inputs[in.d.Name]
	}
	v = fromJSON(v, in.typ)
	return coerce(v, in.typ)
}

// fromJSON reads JSON text as the temporal value a type declares.
func fromJSON(v any, t *dtype) any {
	s, ok := v.(string)
	if !ok || t == nil {
		if l, isList := v.([]any); isList && t != nil && t.collection {
			out := make([]any, len(l))
			for i, e := range l {
				out[i] = fromJSON(e, t.elem)
			}
			return out
		}
		if c, isCtx := v.(map[string]any); isCtx && t != nil && len(t.comps) > 0 {
			out := make(map[string]any, len(c))
			for k, e := range c {
				out[k] = e
			}
			for _, comp := range t.comps {
				if e, has := c[comp.name]; has {
					out[comp.name] = fromJSON(e, comp.typ)
				}
			}
			return out
		}
		return v
	}
	for b := t; b != nil; b = b.base {
		switch b.feel {
		case "date", "time", "date and time", "days and time duration", "years and months duration":
			if tv, ok := expr.ParseTemporal(s); ok {
				return tv
			}
			return v
		}
	}
	return v
}

// decision evaluates d (once per run).
func (r *run) decision(d *decisionC) any {
	if v, ok := r.given[d]; ok {
		return v
	}
	if v, ok := r.memo[d]; ok {
		return v
	}
	if r.active[d] {
		return nil
	}
	r.active[d] = true
	defer delete(r.active, d)
	scope, err := r.scopeOf(d.m, d.reqs)
	ev := Evaluated{DecisionID: d.d.ID, DecisionName: d.d.Name}
	var v any
	if err == nil && d.logic == nil {
		// A decision without logic takes its value from the inputs, as
		// input data does.
		v = fromJSON(r.inputs[d.d.Name], d.typ)
	}
	if err == nil && d.logic != nil {
		var matched []MatchedRule
		saved := r.matched
		r.matched = &matched
		v, err = d.logic(r, scope)
		r.matched = saved
		ev.Matched = matched
	}
	if err == nil {
		v, err = coerce(v, d.typ)
	}
	if err != nil {
		v = nil
		ev.Err = err
	}
	ev.Value = v
	r.memo[d] = v
	r.trace = append(r.trace, ev)
	return v
}

// scopeOf builds the names a decision or BKM sees: its required
// decisions, input data, BKMs and decision services (an imported
// model's under the import's name).
func (r *run) scopeOf(m *modelC, reqs []reqC) (map[string]any, error) {
	scope := map[string]any{}
	if m == r.ambientModel {
		for k, v := range r.ambient {
			scope[k] = v
		}
	}
	put := func(imp, name string, v any) {
		if imp == "" {
			scope[name] = v
			return
		}
		c, _ := scope[imp].(map[string]any)
		if c == nil {
			c = map[string]any{}
			scope[imp] = c
		}
		c[name] = v
	}
	for _, rq := range reqs {
		switch e := rq.elem.(type) {
		case *decisionC:
			put(rq.imp, e.d.Variable.Name, r.decision(e))
		case *inputC:
			v, err := r.inputValue(e, rq.imp)
			if err != nil {
				return nil, fmt.Errorf("input data %s: %w", e.d.Name, err)
			}
			put(rq.imp, e.d.Variable.Name, v)
		case *bkmC:
			put(rq.imp, e.b.Variable.Name, r.bkmValue(e))
		case *serviceC:
			put(rq.imp, e.s.Variable.Name, r.serviceValue(e))
		}
	}
	return scope, nil
}

// bkmValue is a BKM as a FEEL function value.
func (r *run) bkmValue(b *bkmC) any {
	if b.fn == nil {
		return nil
	}
	return &expr.Native{Params: b.fn.params(), Fn: func(args []any) (any, error) {
		scope, err := r.scopeOf(b.m, b.reqs)
		if err != nil {
			return nil, err
		}
		return b.fn.call(r, scope, args)
	}}
}

// params are the service's parameters: its input data, then its input
// decisions (the order the DMN TCK invokes them in).
func (sc *serviceC) params() []string {
	var ps []string
	for _, in := range sc.inputs {
		ps = append(ps, in.d.Name)
	}
	for _, d := range sc.inDecs {
		ps = append(ps, d.d.Name)
	}
	return ps
}

// serviceValue is a decision service as a FEEL function value.
func (r *run) serviceValue(sc *serviceC) any {
	return &expr.Native{Params: sc.params(), Fn: func(args []any) (any, error) {
		return r.service(sc, args)
	}}
}

// service evaluates sc's output decisions in a run of their own, the
// input decisions and input data given as args.
func (r *run) service(sc *serviceC, args []any) (any, error) {
	if err := r.enter("decision service " + sc.s.Name); err != nil {
		return nil, err
	}
	defer r.leave()
	sub := &run{set: r.set, inputs: map[string]any{}, memo: map[*decisionC]any{}, given: map[*decisionC]any{},
		active: map[*decisionC]bool{}, calls: r.calls}
	for i, in := range sc.inputs {
		sub.inputs[in.d.Name] = args[i]
	}
	for i, d := range sc.inDecs {
		v, err := coerce(args[len(sc.inputs)+i], d.typ)
		if err != nil {
			return nil, fmt.Errorf("decision service %s: %s: %w", sc.s.Name, d.d.Name, err)
		}
		sub.given[d] = v
	}
	if len(sc.outputs) == 1 {
		v := sub.decision(sc.outputs[0])
		return coerce(v, sc.typ)
	}
	out := map[string]any{}
	for _, d := range sc.outputs {
		out[d.d.Name] = sub.decision(d)
	}
	return coerce(out, sc.typ)
}
