package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flowtrack/flowtrack/engine"
)

// Observation is the normalized state of a run at one checkpoint (an expect
// step, or the end). It holds no keys, times or token ids, so runners that
// agree on behaviour produce equal observations.
type Observation struct {
	// Step is the 1-based index of the expect step, or 0 for the end.
	Step        int                `json:"step"`
	DeployError *DeployErrorExpect `json:"deployError,omitempty"`
	Instance    string             `json:"instance,omitempty"`
	State       string             `json:"state,omitempty"`
	Completed   []string           `json:"completed,omitempty"`
	Terminated  []string           `json:"terminated,omitempty"`
	Paths       [][]string         `json:"paths,omitempty"`
	Tokens      []string           `json:"tokens,omitempty"`
	Variables   map[string]any     `json:"variables,omitempty"`
	Jobs        []string           `json:"jobs,omitempty"`
	JobInfo     []JobInfo          `json:"jobInfo,omitempty"`
	Incidents   []string           `json:"incidents,omitempty"`
	Events      []string           `json:"events,omitempty"`
	// Trace is the instance's whole history in order, one "type element"
	// line per record. An instance's order is a function of the model and
	// its inputs (RATIONALE.md), so runners must agree on it exactly.
	Trace []string `json:"trace,omitempty"`
}

// JobInfo is the normalized form of an open job.
type JobInfo struct {
	Type     string            `json:"type"`
	Element  string            `json:"element"`
	Retries  int               `json:"retries"`
	Headers  map[string]string `json:"headers,omitempty"`
	ErrorMsg string            `json:"errorMessage,omitempty"`
}

// Result is what a run observed, checkpoint by checkpoint, and the
// expectation mismatches found.
type Result struct {
	Observations []Observation `json:"observations"`
	// Mismatches lists every expectation that did not hold; empty when
	// the scenario passed.
	Mismatches []string `json:"mismatches,omitempty"`
}

// run is the state of one scenario run.
type run struct {
	r         Runner
	s         *Scenario
	insts     map[string]int64
	last      string
	started   int
	deployErr *engine.DeployError
	res       Result
}

// Run plays s on r and returns the observations and mismatches. An error
// means the scenario could not be played (a step failed unexpectedly).
func Run(ctx context.Context, r Runner, s *Scenario) (*Result, error) {
	ru := &run{r: r, s: s, insts: map[string]int64{}}
	if s.BPMN != "" {
		if err := ru.deploy(ctx, s.BPMN); err != nil {
			return nil, err
		}
	}
	for i, st := range s.Steps {
		err := ru.step(ctx, i+1, st)
		if err == nil {
			err = r.Settle(ctx)
		}
		switch {
		case st.Error != "" && err == nil:
			return nil, fmt.Errorf("step %d (%s): succeeded, want error containing %q", i+1, st.Op, st.Error)
		case st.Error != "" && !strings.Contains(err.Error(), st.Error):
			return nil, fmt.Errorf("step %d (%s): error %q does not contain %q", i+1, st.Op, err, st.Error)
		case st.Error == "" && err != nil:
			return nil, fmt.Errorf("step %d (%s): %w", i+1, st.Op, err)
		}
	}
	if s.Expect != nil {
		if err := ru.expect(ctx, 0, s.Expect); err != nil {
			return nil, err
		}
	}
	return &ru.res, nil
}

func (ru *run) deploy(ctx context.Context, file string) error {
	data, err := os.ReadFile(filepath.Join(ru.s.Dir, file))
	if err != nil {
		return err
	}
	ru.deployErr = nil
	err = ru.r.Deploy(ctx, file, data)
	var de *engine.DeployError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de):
		ru.deployErr = de
		return nil
	default:
		return fmt.Errorf("deploy %s: %w", file, err)
	}
}

func (ru *run) instance(alias string) (int64, string, error) {
	if alias == "" {
		alias = ru.last
	}
	key, ok := ru.insts[alias]
	if !ok {
		return 0, alias, fmt.Errorf("no instance %q was started", alias)
	}
	return key, alias, nil
}

func (ru *run) step(ctx context.Context, idx int, st Step) error {
	r := ru.r
	switch st.Op {
	case "deploy":
		return ru.deploy(ctx, st.File)
	case "start":
		key, err := r.Start(ctx, st.Process, st.Variables)
		if err != nil {
			return err
		}
		ru.started++
		alias := st.As
		if alias == "" {
			alias = strconv.Itoa(ru.started)
		}
		ru.insts[alias], ru.last = key, alias
		return nil
	case "publishMessage":
		m := Message{Name: st.Name, CorrelationKey: st.CorrelationKey, Variables: st.Variables, MessageID: st.MessageID}
		if st.TTL != "" {
			d, err := ParseDuration(st.TTL)
			if err != nil {
				return err
			}
			m.TTL = d
		}
		return r.PublishMessage(ctx, m)
	case "broadcastSignal":
		return r.BroadcastSignal(ctx, st.Name, st.Variables)
	case "advanceTime":
		d, err := ParseDuration(st.Duration)
		if err != nil {
			return err
		}
		return r.Advance(ctx, d)
	case "cancel":
		key, _, err := ru.instance(st.Instance)
		if err != nil {
			return err
		}
		return r.Cancel(ctx, key)
	case "activateAdHoc":
		key, _, err := ru.instance(st.Instance)
		if err != nil {
			return err
		}
		return r.ActivateAdHoc(ctx, key, st.Element, st.Elements)
	case "completeJobs", "failJob", "throwError":
		jobs, err := ru.matchJobs(ctx, st)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			switch st.Op {
			case "completeJobs":
				err = r.CompleteJob(ctx, j.Key, st.Variables)
			case "failJob":
				err = r.FailJob(ctx, j.Key, st.Retries, st.Message)
			default:
				err = r.ThrowError(ctx, j.Key, st.Code, st.Message, st.Variables)
			}
			if err != nil {
				return fmt.Errorf("job %s@%s: %w", j.Type, j.ElementID, err)
			}
		}
		return nil
	case "resolveIncident":
		incs, err := r.Incidents(ctx)
		if err != nil {
			return err
		}
		n := 0
		for _, inc := range incs {
			if st.Element != "" && inc.ElementID != st.Element {
				continue
			}
			if err := r.ResolveIncident(ctx, inc.Key); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("no open incident at element %q", st.Element)
		}
		return nil
	case "expect":
		if st.Expect == nil {
			return errors.New("expect step without expect")
		}
		return ru.expect(ctx, idx, st.Expect)
	}
	return fmt.Errorf("unknown op %q", st.Op)
}

// matchJobs returns the open jobs a job step selects: at least one.
func (ru *run) matchJobs(ctx context.Context, st Step) ([]engine.Job, error) {
	jobs, err := ru.r.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var inst int64
	if st.Instance != "" {
		if inst, _, err = ru.instance(st.Instance); err != nil {
			return nil, err
		}
	}
	var out []engine.Job
	for _, j := range jobs {
		if (st.Type != "" && j.Type != st.Type) || (st.Element != "" && j.ElementID != st.Element) ||
			(inst != 0 && j.InstanceKey != inst) {
			continue
		}
		out = append(out, j)
		if st.Count > 0 && len(out) == st.Count {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no open job matches type %q element %q", st.Type, st.Element)
	}
	return out, nil
}

// expect observes the run and checks e against the observation.
func (ru *run) expect(ctx context.Context, idx int, e *Expect) error {
	obs, err := ru.observe(ctx, e.Instance)
	if err != nil {
		return err
	}
	obs.Step = idx
	ru.res.Observations = append(ru.res.Observations, obs)
	where := "end"
	if idx > 0 {
		where = fmt.Sprintf("step %d", idx)
	}
	for _, m := range Check(e, obs) {
		ru.res.Mismatches = append(ru.res.Mismatches, where+": "+m)
	}
	return nil
}

// observe normalizes what the runner reports.
func (ru *run) observe(ctx context.Context, alias string) (Observation, error) {
	var obs Observation
	if de := ru.deployErr; de != nil {
		obs.DeployError = &DeployErrorExpect{Element: de.ElementID, Rule: de.Rule}
	}
	jobs, err := ru.r.Jobs(ctx)
	if err != nil {
		return obs, err
	}
	for _, j := range jobs {
		obs.JobInfo = append(obs.JobInfo, JobInfo{Type: j.Type, Element: j.ElementID, Retries: j.Retries, Headers: j.Headers, ErrorMsg: j.ErrorMessage})
	}
	sort.Slice(obs.JobInfo, func(a, b int) bool {
		x, y := obs.JobInfo[a], obs.JobInfo[b]
		return x.Element < y.Element || (x.Element == y.Element && x.Type < y.Type)
	})
	for _, j := range obs.JobInfo {
		obs.Jobs = append(obs.Jobs, j.Type+"@"+j.Element)
	}
	sort.Strings(obs.Jobs) // a multiset, compared sorted as "type@element"
	incs, err := ru.r.Incidents(ctx)
	if err != nil {
		return obs, err
	}
	for _, inc := range incs {
		obs.Incidents = append(obs.Incidents, inc.ElementID)
	}
	sort.Strings(obs.Incidents)
	if len(ru.insts) == 0 && alias == "" {
		return obs, nil
	}
	key, alias, err := ru.instance(alias)
	if err != nil {
		return obs, err
	}
	snap, err := ru.r.Snapshot(ctx, key)
	if err != nil {
		return obs, err
	}
	obs.Instance = alias
	obs.State = string(snap.State)
	obs.Variables = snap.Variables
	paths := map[int][]string{}
	var order []int
	for _, ev := range snap.History {
		obs.Events = append(obs.Events, string(ev.Type))
		obs.Trace = append(obs.Trace, strings.TrimSpace(string(ev.Type)+" "+ev.ElementID))
		if ev.Type == engine.ElementTerminated {
			obs.Terminated = append(obs.Terminated, ev.ElementID)
		}
		if ev.Type != engine.ElementLeft {
			continue
		}
		obs.Completed = append(obs.Completed, ev.ElementID)
		if _, ok := paths[ev.TokenID]; !ok {
			order = append(order, ev.TokenID)
		}
		paths[ev.TokenID] = append(paths[ev.TokenID], ev.ElementID)
	}
	sort.Strings(obs.Completed)
	sort.Strings(obs.Events)
	for _, id := range order {
		obs.Paths = append(obs.Paths, paths[id])
	}
	sortPaths(obs.Paths)
	for _, t := range snap.Tokens {
		obs.Tokens = append(obs.Tokens, tokenString(t.ElementID, string(t.Waiting)))
	}
	sort.Strings(obs.Tokens)
	return obs, nil
}

func tokenString(element, waiting string) string {
	if waiting == "" {
		return element
	}
	return element + ":" + waiting
}

// sortPaths orders paths element by element. (Comparing joined strings
// instead allocated two strings per comparison, which made a scenario with
// 10,000 paths spend most of its time here.)
func sortPaths(p [][]string) { slices.SortFunc(p, slices.Compare[[]string]) }

// Check returns the expectations of e that obs does not meet.
func Check(e *Expect, obs Observation) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	switch {
	case e.DeployError == nil && obs.DeployError != nil:
		fail("unexpected deploy error: element %q: %s", obs.DeployError.Element, obs.DeployError.Rule)
	case e.DeployError != nil && obs.DeployError == nil:
		fail("deploy succeeded, want error at element %q with rule containing %q", e.DeployError.Element, e.DeployError.Rule)
	case e.DeployError != nil:
		if obs.DeployError.Element != e.DeployError.Element || !strings.Contains(obs.DeployError.Rule, e.DeployError.Rule) {
			fail("deploy error: element %q rule %q, want element %q rule containing %q",
				obs.DeployError.Element, obs.DeployError.Rule, e.DeployError.Element, e.DeployError.Rule)
		}
	}
	if e.State != "" && e.State != obs.State {
		fail("state %q, want %q", obs.State, e.State)
	}
	multiset := func(what string, want, got []string) {
		if want == nil {
			return
		}
		w := slices.Clone(want)
		sort.Strings(w)
		if !slices.Equal(w, got) && !(len(w) == 0 && len(got) == 0) {
			fail("%s %q, want %q", what, got, w)
		}
	}
	multiset("completed", e.Completed, obs.Completed)
	if e.Terminated != nil && !slices.Equal(e.Terminated, obs.Terminated) && !(len(e.Terminated) == 0 && len(obs.Terminated) == 0) {
		fail("terminated %q, want %q (in this order)", obs.Terminated, e.Terminated)
	}
	multiset("tokens", e.Tokens, obs.Tokens)
	multiset("jobs", e.Jobs, obs.Jobs)
	multiset("incidents", e.Incidents, obs.Incidents)
	if e.Paths != nil {
		w := make([][]string, len(e.Paths))
		for i, p := range e.Paths {
			w[i] = slices.Clone(p)
		}
		sortPaths(w)
		if !reflect.DeepEqual(w, obs.Paths) && !(len(w) == 0 && len(obs.Paths) == 0) {
			fail("paths %q, want %q", obs.Paths, w)
		}
	}
	for el, want := range e.JobHeaders {
		if j := findJob(obs.JobInfo, el); j == nil {
			fail("no open job at %s, want headers %v", el, want)
		} else if !reflect.DeepEqual(j.Headers, want) {
			fail("job at %s has headers %v, want %v", el, j.Headers, want)
		}
	}
	for el, want := range e.JobRetries {
		if j := findJob(obs.JobInfo, el); j == nil {
			fail("no open job at %s, want retries %d", el, want)
		} else if j.Retries != want {
			fail("job at %s has retries %d, want %d", el, j.Retries, want)
		}
	}
	for k, want := range e.Variables {
		got, ok := obs.Variables[k]
		if !ok {
			fail("variable %q not set, want %v", k, want)
		} else if !reflect.DeepEqual(normalize(got), normalize(want)) {
			fail("variable %q = %#v, want %#v", k, got, want)
		}
	}
	if e.Events != nil {
		have := map[string]int{}
		for _, ev := range obs.Events {
			have[ev]++
		}
		for _, ev := range e.Events {
			if have[ev] == 0 {
				fail("no %s event (or fewer than expected) in history", ev)
			}
			have[ev]--
		}
	}
	return bad
}

func findJob(jobs []JobInfo, element string) *JobInfo {
	for i := range jobs {
		if jobs[i].Element == element {
			return &jobs[i]
		}
	}
	return nil
}

// normalize turns integer kinds into float64, as JSON decoding does.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = normalize(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = normalize(v)
		}
		return out
	}
	return v
}
