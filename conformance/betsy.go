package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// BetsySuite is the part of betsy's cases.json the runner reads.
type BetsySuite struct {
	Cases           []BetsyCase `json:"cases"`
	ConstraintCases []BetsyCase `json:"constraint_cases"`
}

// BetsyCase is one behaviour case, or one must-reject constraint case.
type BetsyCase struct {
	ID                      string       `json:"id"`
	Group                   string       `json:"group"`
	File                    string       `json:"bpmn_file_local"`
	ExpectDeploymentFailure bool         `json:"expect_deployment_failure"`
	ExpectedTrace           []string     `json:"expected_trace"`
	StartSequence           []BetsyStart `json:"start_sequence"`
	WaitAfterStartMS        int          `json:"wait_after_start_ms"`
	Requires                []string     `json:"requires"`
}

// BetsyStart is one entry of a case's start_sequence.
type BetsyStart struct {
	ProcessID string                   `json:"process_id"`
	Variables map[string]BetsyVariable `json:"variables"`
}

// BetsyVariable is a typed start variable.
type BetsyVariable struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// LoadBetsy reads dir/cases.json.
func LoadBetsy(dir string) (*BetsySuite, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var s BetsySuite
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("betsy cases.json: %w", err)
	}
	for i := range s.ConstraintCases {
		s.ConstraintCases[i].Group = "MUST-REJECT"
	}
	return &s, nil
}

// BetsyOutcome is the result of one case.
type BetsyOutcome struct {
	Pass  bool
	Trace []string
	// Blocker names what made a failing case fail: the first unsupported
	// features at deploy, an incident, a trace mismatch.
	Blocker string
	// Detail says more about a wrong trace.
	Detail string
	// Rule is the rule a must-reject case names ("EXT.058", or "REF"
	// for the reference cases, which name no single rule).
	Rule string
	// WrongRule marks a must-reject case that deploy rejected, but not by
	// the rule the case names nor one implying it (for example only as an
	// unsupported element): it does not pass.
	WrongRule bool
}

// betsyMaxRounds bounds the job and timer rounds of one case, so that a
// case looping forever is reported instead of hanging.
const betsyMaxRounds = 1000

// RunBetsy plays one case on r and compares its trace with the expected
// one as a multiset.
func RunBetsy(ctx context.Context, r Runner, dir string, c BetsyCase) BetsyOutcome {
	out := betsyPlay(ctx, r, dir, c)
	want := slices.Clone(c.ExpectedTrace)
	got := slices.Clone(out.Trace)
	if slices.Contains(want, "ERROR") {
		for i, l := range got {
			if l == "ERROR_runtime" || l == "ERROR_deployment" {
				got[i] = "ERROR"
			}
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	out.Pass = slices.Equal(want, got) && !out.WrongRule
	if out.Pass {
		out.Blocker = ""
	} else if out.Blocker == "" {
		what := strings.Join(c.Requires, ", ")
		if what == "" {
			what, _, _ = strings.Cut(c.ID, "#")
		}
		out.Blocker = fmt.Sprintf("wrong trace (%s)", what)
		out.Detail = fmt.Sprintf("trace %q, want %q", got, want)
	}
	return out
}

func betsyPlay(ctx context.Context, r Runner, dir string, c BetsyCase) BetsyOutcome {
	var out BetsyOutcome
	data, err := os.ReadFile(filepath.Join(dir, c.File))
	if err != nil {
		return BetsyOutcome{Blocker: err.Error()}
	}
	if err := r.Deploy(ctx, filepath.Base(c.File), data); err != nil {
		out.Trace = []string{"ERROR_deployment"}
		var de *engine.DeployError
		if !errors.As(err, &de) {
			out.Blocker = "deploy failed without a DeployError: " + err.Error()
			out.Trace = nil
		} else if !c.ExpectDeploymentFailure {
			out.Blocker = deployBlocker(de)
		} else {
			out.Rule = BetsyRule(c.ID)
			if !RejectedBy(de, out.Rule) {
				out.WrongRule = true
				out.Blocker = fmt.Sprintf("rejected, but not by %s (%s)", out.Rule, ruleIDs(de))
			}
		}
		return out
	}
	if c.ExpectDeploymentFailure {
		out.Rule = BetsyRule(c.ID)
		out.Blocker = "missing validation: " + out.Rule
		return out
	}
	h := &betsyHarness{r: r, expected: c.ExpectedTrace}
	var keys []int64
	for _, st := range c.StartSequence {
		vars, err := betsyVariables(st.Variables)
		if err != nil {
			return BetsyOutcome{Blocker: err.Error()}
		}
		key, err := r.Start(ctx, st.ProcessID, vars)
		if err != nil {
			h.trace = append(h.trace, "ERROR_runtime")
			out.Blocker = "start: " + err.Error()
			continue
		}
		keys = append(keys, key)
		if err := h.drive(ctx, 0); err != nil {
			return BetsyOutcome{Trace: h.trace, Blocker: err.Error()}
		}
	}
	if err := h.drive(ctx, time.Duration(c.WaitAfterStartMS)*time.Millisecond); err != nil {
		return BetsyOutcome{Trace: h.trace, Blocker: err.Error()}
	}
	incs, err := r.Incidents(ctx)
	if err != nil {
		return BetsyOutcome{Trace: h.trace, Blocker: err.Error()}
	}
	thrown, failed := false, false
	for _, key := range keys {
		snap, err := r.Snapshot(ctx, key)
		if err != nil {
			return BetsyOutcome{Trace: h.trace, Blocker: err.Error()}
		}
		held := false
		for _, inc := range incs {
			if inc.InstanceKey == key {
				held = true
				if out.Blocker == "" {
					out.Blocker = "incident: " + Feature(inc.Message)
				}
			}
		}
		if snap.State == engine.Failed {
			held = true
		}
		if !held {
			continue
		}
		errorEnd := false
		for _, ev := range snap.History {
			if ev.Type == engine.ErrorThrown && ev.ElementType == "endEvent" {
				errorEnd = true
			}
		}
		if errorEnd {
			thrown = true
		} else {
			failed = true
		}
	}
	if thrown {
		h.trace = append(h.trace, "ERROR_thrownErrorEvent")
	}
	if failed {
		h.trace = append(h.trace, "ERROR_runtime")
	}
	if h.marker && slices.Contains(c.ExpectedTrace, "MARKER_exists") {
		h.trace = append(h.trace, "MARKER_exists")
	}
	if h.parallel {
		h.trace = append(h.trace, "EXECUTION_parallel")
	}
	out.Trace = h.trace
	return out
}

// betsyHarness plays the part of betsy's script engine and log files.
type betsyHarness struct {
	r        Runner
	expected []string
	trace    []string
	elapsed  time.Duration // virtual time moved since the case began
	marker   bool
	parallel bool
	// busy holds the jobs of WAIT_TEN_SECONDS scripts: they finish ten
	// virtual seconds after they started, and timers may fire meanwhile.
	busy map[int64]time.Duration
}

// betsyWait is how long a WAIT_TEN_SECONDS script runs.
const betsyWait = 10 * time.Second

// drive runs jobs and timers until nothing is left to do within budget
// more of virtual time, then moves the clock to the end of the budget.
func (h *betsyHarness) drive(ctx context.Context, budget time.Duration) error {
	limit := h.elapsed + budget
	for round := 0; ; round++ {
		if round == betsyMaxRounds {
			return fmt.Errorf("still busy after %d rounds of jobs and timers", betsyMaxRounds)
		}
		if err := h.r.Settle(ctx); err != nil {
			return err
		}
		jobs, err := h.r.Jobs(ctx)
		if err != nil {
			return err
		}
		worked := false
		h.noteParallel(jobs)
		for _, j := range jobs {
			if _, waiting := h.busy[j.Key]; waiting {
				continue
			}
			if strings.TrimSpace(j.Headers["script"]) == "WAIT_TEN_SECONDS" {
				if h.busy == nil {
					h.busy = map[int64]time.Duration{}
				}
				h.busy[j.Key] = h.elapsed + betsyWait
				continue
			}
			if err := h.work(ctx, j); err != nil {
				return err
			}
			worked = true
		}
		if worked {
			continue
		}
		if done, err := h.finishWaits(ctx); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		due, ok, err := h.r.NextDeadline(ctx)
		if err != nil {
			return err
		}
		at := due.Sub(clock.Epoch)
		if next, waiting := h.nextWait(); waiting && (!ok || next < at) {
			at, ok = next, true
		}
		if !ok || at > limit {
			break
		}
		if at > h.elapsed {
			if err := h.r.Advance(ctx, at-h.elapsed); err != nil {
				return err
			}
			h.elapsed = at
		} else if err := h.r.Advance(ctx, 0); err != nil {
			return err
		}
	}
	if limit > h.elapsed {
		if err := h.r.Advance(ctx, limit-h.elapsed); err != nil {
			return err
		}
		h.elapsed = limit
		return h.r.Settle(ctx)
	}
	return nil
}

// finishWaits completes the waiting scripts whose time has come, and
// reports whether it completed any. A job that is gone (an interrupting
// boundary event ended its task meanwhile) is simply forgotten.
func (h *betsyHarness) finishWaits(ctx context.Context) (bool, error) {
	done := false
	for key, at := range h.busy {
		if at > h.elapsed {
			continue
		}
		delete(h.busy, key)
		err := h.r.CompleteJob(ctx, key, nil)
		if err != nil && !errors.Is(err, engine.ErrUnknownJob) {
			return false, err
		}
		done = done || err == nil
	}
	return done, nil
}

// nextWait returns when the earliest waiting script finishes.
func (h *betsyHarness) nextWait() (time.Duration, bool) {
	var next time.Duration
	found := false
	for _, at := range h.busy {
		if !found || at < next {
			next, found = at, true
		}
	}
	return next, found
}

// noteParallel records that the two timestamped scripts overlapped.
func (h *betsyHarness) noteParallel(jobs []engine.Job) {
	n := 0
	for _, j := range jobs {
		if s := strings.TrimSpace(j.Headers["script"]); s == "CREATE_TIMESTAMP_LOG_1" || s == "CREATE_TIMESTAMP_LOG_2" {
			n++
		}
	}
	if n == 2 {
		h.parallel = true
	}
}

var scriptTask = regexp.MustCompile(`^SCRIPT_task\d+$`)

// work executes a job the way betsy's scripts would.
func (h *betsyHarness) work(ctx context.Context, j engine.Job) error {
	script := strings.TrimSpace(j.Headers["script"])
	var vars map[string]any
	switch {
	case scriptTask.MatchString(script):
		h.trace = append(h.trace, script)
	case script == "INCREMENT_INTEGER_VARIABLE", script == "INCREMENT_INTEGER_VARIABLE_AND_LOG":
		n, _ := j.Variables["integerVariable"].(float64)
		vars = map[string]any{"integerVariable": n + 1}
		if script == "INCREMENT_INTEGER_VARIABLE_AND_LOG" {
			h.trace = append(h.trace, "INCREMENT_correct")
		}
	case script == "THROW_ERROR":
		return h.r.ThrowError(ctx, j.Key, "ERR_CODE", "THROW_ERROR", nil)
	case script == "SET_STRING_DATA":
		vars = map[string]any{"data": "String"}
	case script == "LOG_DATA":
		if j.Variables["data"] == "String" {
			h.trace = append(h.trace, "DATA_correct")
		}
	case script == "CREATE_MARKER_FILE":
		h.marker = true
	}
	// CREATE_LOG_FILE, timestamp logs and non-script jobs (service, user,
	// send tasks) just complete; WAIT_TEN_SECONDS is held open by drive.
	return h.r.CompleteJob(ctx, j.Key, vars)
}

// betsyVariables converts typed start variables to JSON values.
func betsyVariables(in map[string]BetsyVariable) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for name, v := range in {
		var val any
		if err := json.Unmarshal(v.Value, &val); err != nil {
			return nil, fmt.Errorf("variable %s: %w", name, err)
		}
		switch v.Type {
		case "Integer", "Long", "Double":
			if _, ok := val.(float64); !ok {
				return nil, fmt.Errorf("variable %s: %s value %s is not a number", name, v.Type, v.Value)
			}
		case "String":
			if _, ok := val.(string); !ok {
				return nil, fmt.Errorf("variable %s: String value %s is not a string", name, v.Value)
			}
		case "Boolean":
			if _, ok := val.(bool); !ok {
				return nil, fmt.Errorf("variable %s: Boolean value %s is not a boolean", name, v.Value)
			}
		default:
			return nil, fmt.Errorf("variable %s: unknown type %s", name, v.Type)
		}
		out[name] = val
	}
	return out, nil
}

// deployBlocker names every distinct feature a rejected case lacks, so a
// feature is credited only with the cases it alone would unlock.
func deployBlocker(de *engine.DeployError) string {
	seen := map[string]bool{}
	var fs []string
	for _, p := range de.Problems {
		f := Feature(p.Rule)
		if !seen[f] {
			seen[f] = true
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return Feature(de.Rule)
	}
	sort.Strings(fs)
	return strings.Join(fs, " + ")
}

// BetsyRule returns the rule a must-reject case is named after:
// "bpmn_constraints/EXT058_1_fail_noStartEvent" names EXT.058, and the
// REF_n cases name the reference rules as a whole ("REF").
func BetsyRule(id string) string {
	name := strings.TrimPrefix(id, "bpmn_constraints/")
	if strings.HasPrefix(name, "REF") {
		return "REF"
	}
	num, _, _ := strings.Cut(strings.TrimPrefix(name, "EXT"), "_")
	return "EXT." + num
}

// impliedBy lists, for a catalogue rule, the rules whose violation implies
// it: a sequence flow from an artifact breaks EXT.007, and the reference
// table says the same thing as REF.18 (a sequence flow's source must be a
// flow node).
var impliedBy = map[string][]string{
	"EXT.006": {"REF.19"},
	"EXT.007": {"REF.18"},
	"EXT.008": {"REF.36"},
	"EXT.009": {"REF.35"},
	"EXT.021": {"EXT.057", "REF.18"},
	"EXT.022": {"EXT.057", "REF.19"},
	"EXT.111": {"EXT.120"}, // one statement; EXT.120 reports it
	"EXT.028": {"EXT.152"},
	"EXT.152": {"EXT.028"},
	"EXT.129": {"EXT.059"}, // the betsy case is a copy of EXT059_4
	"EXT.130": {"EXT.110"}, // a cancel boundary without a definition
}

// RejectedBy reports whether one of de's problems breaks rule (an
// "EXT.nnn" id, or "REF" for any reference rule) or a rule implying it.
func RejectedBy(de *engine.DeployError, rule string) bool {
	for _, p := range de.Problems {
		switch {
		case p.RuleID == rule,
			rule == "REF" && strings.HasPrefix(p.RuleID, "REF."),
			slices.Contains(impliedBy[rule], p.RuleID):
			return true
		}
	}
	return false
}

// ruleIDs lists the distinct rules of de's problems.
func ruleIDs(de *engine.DeployError) string {
	var ids []string
	for _, p := range de.Problems {
		if !slices.Contains(ids, p.RuleID) {
			ids = append(ids, p.RuleID)
		}
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

var (
	unsupportedElement = regexp.MustCompile(`unsupported element (bpmn:\w+(?: with [\w ]+ trigger)?)`)
	insideContainer    = regexp.MustCompile(`unsupported element bpmn:\w+ inside (bpmn:\w+)`)
	triggerOn          = regexp.MustCompile(`unsupported (\w+) trigger on (bpmn:\w+)`)
)

// Feature reduces an error text to the missing feature it names, so
// failures group by feature: "unsupported element bpmn:subProcess ..."
// becomes "bpmn:subProcess".
func Feature(msg string) string {
	if m := triggerOn.FindStringSubmatch(msg); m != nil {
		return m[2] + " with " + m[1] + " trigger" // one wording per feature
	}
	if m := insideContainer.FindStringSubmatch(msg); m != nil {
		return m[1] // the container is what is missing, not its start event
	}
	if m := unsupportedElement.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}
