package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
)

// printed is what a state command prints with --json.
type printed struct {
	Command      string          `json:"command"`
	OK           bool            `json:"ok"`
	Result       json.RawMessage `json:"result"`
	Events       []engine.Event  `json:"events"`
	Now          *time.Time      `json:"now"`
	NextDeadline *time.Time      `json:"nextDeadline"`
	Error        *failure        `json:"error"`
}

// ft runs one command with --json on the state file and decodes what it
// printed; the exit code must be code.
func ft(t *testing.T, code int, state string, args ...string) printed {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--state", state, "--json")
	got := run(args, &stdout, &stderr)
	require.Equal(t, code, got, "%v\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
	var p printed
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&p), "%v printed %s", args, stdout.String())
	require.Equal(t, args[0], p.Command)
	require.Equal(t, code == exitOK, p.OK)
	return p
}

// result decodes p's result into a value of type T.
func result[T any](t *testing.T, p printed) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(p.Result, &v), "%s", p.Result)
	return v
}

// types lists the event types of p, in order.
func types(p printed) []engine.EventType {
	var out []engine.EventType
	for _, ev := range p.Events {
		out = append(out, ev.Type)
	}
	return out
}

// TestStateFile_Journey chains separate invocations on one state file
// through a process with a job, a keyed message catch, a timer and a
// parallel join, with an incident on the way and a BPMN error at the end,
// as a script would.
func TestStateFile_Journey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")

	p := ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	dep := result[engine.Deployment](t, p)
	require.Len(t, dep.Processes, 1)
	assert.Equal(t, "shipment", dep.Processes[0].ID)
	assert.Equal(t, clock.Epoch, *p.Now)
	assert.Nil(t, p.NextDeadline)

	p = ft(t, exitOK, state, "start", "shipment", "--vars", `{"orderId":"o-1"}`)
	st := result[started](t, p)
	assert.Equal(t, engine.Active, st.State)
	key := st.InstanceKey
	assert.Contains(t, types(p), engine.JobCreated)
	assert.Contains(t, types(p), engine.TimerScheduled)
	require.NotNil(t, p.NextDeadline, "the timer is pending")
	assert.Equal(t, clock.Epoch.Add(time.Hour), *p.NextDeadline)

	jobs := result[[]engine.Job](t, ft(t, exitOK, state, "jobs"))
	require.Len(t, jobs, 1)
	pack := jobs[0]
	assert.Equal(t, "pack", pack.Type)
	assert.Equal(t, map[string]any{"orderId": "o-1"}, pack.Variables)

	// A failed attempt leaves the job its retries minus one, as Zeebe's
	// clients fail a job: it is tried again until none is left, then an
	// incident holds it; resolving that makes the job activatable again.
	require.Equal(t, 3, pack.Retries)
	for left := 2; left > 0; left-- {
		p = ft(t, exitOK, state, "fail", itoa(pack.Key), "--message", "printer jam")
		assert.Equal(t, []engine.EventType{engine.JobFailed}, types(p))
		jobs = result[[]engine.Job](t, ft(t, exitOK, state, "jobs"))
		require.Len(t, jobs, 1)
		assert.Equal(t, left, jobs[0].Retries)
	}
	p = ft(t, exitOK, state, "fail", itoa(pack.Key), "--message", "printer jam")
	assert.Equal(t, []engine.EventType{engine.JobFailed, engine.IncidentCreated}, types(p))
	incs := result[[]engine.Incident](t, ft(t, exitOK, state, "incidents"))
	require.Len(t, incs, 1)
	assert.Equal(t, pack.Key, incs[0].JobKey)
	assert.Equal(t, "printer jam", incs[0].Message)
	assert.Empty(t, result[[]engine.Job](t, ft(t, exitOK, state, "jobs")))
	ft(t, exitOK, state, "resolve", itoa(incs[0].Key))
	assert.Empty(t, result[[]engine.Incident](t, ft(t, exitOK, state, "incidents")))
	jobs = result[[]engine.Job](t, ft(t, exitOK, state, "jobs", "--type", "pack"))
	require.Len(t, jobs, 1)
	assert.Equal(t, pack.Key, jobs[0].Key)

	p = ft(t, exitOK, state, "complete", itoa(pack.Key), "--vars", `{"packed":true}`)
	assert.Contains(t, types(p), engine.MessageSubscribed)
	toks := result[[]engine.Token](t, ft(t, exitOK, state, "tokens", itoa(key)))
	require.Len(t, toks, 2)
	waits := map[string]engine.WaitReason{}
	for _, tok := range toks {
		waits[tok.ElementID] = tok.Waiting
	}
	assert.Equal(t, map[string]engine.WaitReason{"waitPaid": engine.WaitMessage, "cool": engine.WaitTimer}, waits)

	// The message reaches the join first; the join waits for the timer.
	p = ft(t, exitOK, state, "publish", "paid", "--key", "o-1", "--vars", `{"paid":true}`)
	assert.Contains(t, types(p), engine.MessageCorrelated)
	assert.Empty(t, result[[]engine.Job](t, ft(t, exitOK, state, "jobs")))

	p = ft(t, exitOK, state, "advance", "--next")
	assert.Equal(t, clock.Epoch.Add(time.Hour), result[nowResult](t, p).Now)
	assert.Equal(t, clock.Epoch.Add(time.Hour), *p.Now)
	assert.Contains(t, types(p), engine.TimerFired)
	assert.Contains(t, types(p), engine.JobCreated)
	assert.Nil(t, p.NextDeadline)
	jobs = result[[]engine.Job](t, ft(t, exitOK, state, "jobs", "--instance", itoa(key)))
	require.Len(t, jobs, 1)
	assert.Equal(t, "ship", jobs[0].Type)

	p = ft(t, exitOK, state, "throw", itoa(jobs[0].Key), "NO_STOCK", "--message", "out of stock")
	assert.Equal(t, engine.InstanceCompleted, types(p)[len(p.Events)-1])

	assert.Equal(t, []instanceSummary{{Key: key, ProcessID: "shipment", State: engine.Completed}},
		result[[]instanceSummary](t, ft(t, exitOK, state, "instances")))
	assert.Equal(t, map[string]any{"orderId": "o-1", "packed": true, "paid": true, "errorCode": "NO_STOCK", "errorMessage": "out of stock"},
		result[map[string]any](t, ft(t, exitOK, state, "variables", itoa(key))))
	var path []string
	for _, ev := range result[[]engine.Event](t, ft(t, exitOK, state, "history", itoa(key))) {
		if ev.Type == engine.ElementEntered {
			path = append(path, ev.ElementID)
		}
	}
	assert.Equal(t, []string{"start", "fork", "pack", "cool", "waitPaid", "join", "ship", "noStock", "backordered"}, path)

	// Writing goes through a temporary file renamed over the state file:
	// nothing else is left in the directory.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "state.json", entries[0].Name())
}

// TestStateFile_ReadOnly checks that commands that only look leave the
// state file as it was, and that the readable output traces what a
// command did.
func TestStateFile_ReadOnly(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/shipment.bpmn")
	var out bytes.Buffer
	require.Equal(t, exitOK, run([]string{"start", "--state", state, "shipment", "--vars", `{"orderId":"o-2"}`}, &out, &out), out.String())
	// The trace names instance and token, so the parallel branches read apart.
	assert.Contains(t, out.String(), "   +PT0S  i2 t1     job       3 pack created at pack\n")
	assert.Contains(t, out.String(), "   +PT0S  i2 t2     flow      f3 taken\n")
	assert.Contains(t, out.String(), "instance 2 of shipment: active\n")
	before, err := os.ReadFile(state)
	require.NoError(t, err)
	for _, args := range [][]string{{"jobs"}, {"incidents"}, {"instances"}, {"instance", "2"}, {"tokens", "2"}, {"history", "2"}, {"variables", "2"}} {
		ft(t, exitOK, state, args...)
	}
	out.Reset()
	require.Equal(t, exitOK, run([]string{"instance", "2", "--state", state}, &out, &out), out.String())
	assert.Equal(t, "instance 2 of shipment: active\nvariables: {\"orderId\":\"o-2\"}\nno incidents\n"+
		"token 1 at pack waiting for job (job 3)\ntoken 2 at cool waiting for timer\n", out.String())
	after, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "a command that only looks wrote the state file")
}

func TestStateFile_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	ft(t, exitOK, good, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, good, "start", "shipment", "--vars", `{"orderId":"o-3"}`)
	goodDoc, err := os.ReadFile(good)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "truncated.json")
	require.NoError(t, os.WriteFile(truncated, goodDoc[:len(goodDoc)/2], 0o600))
	foreign := filepath.Join(dir, "foreign.json")
	require.NoError(t, os.WriteFile(foreign, []byte(`{"format":"something-else","version":1}`), 0o600))
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))

	for _, tc := range []struct {
		name  string
		state string
		args  []string
		code  int
		errc  string // the JSON error code
		msg   string // in the error message
	}{
		{"missing state file", filepath.Join(dir, "none.json"), []string{"jobs"}, exitUsage, "BAD_INPUT", "none.json does not exist"},
		{"truncated state file", truncated, []string{"jobs"}, exitUsage, "BAD_INPUT", "truncated.json: not JSON at byte"},
		{"not a state document", foreign, []string{"jobs"}, exitUsage, "BAD_STATE", `foreign.json: bad state document: format "something-else"`},
		{"empty state file", empty, []string{"jobs"}, exitUsage, "BAD_INPUT", "empty.json is empty"},
		{"unknown job", good, []string{"complete", "99"}, exitProcess, "UNKNOWN_JOB", "job 99"},
		{"unknown instance", good, []string{"tokens", "99"}, exitProcess, "UNKNOWN_INSTANCE", "99"},
		{"unknown incident", good, []string{"resolve", "99"}, exitProcess, "UNKNOWN_INCIDENT", "99"},
		{"unknown process", good, []string{"start", "nope"}, exitProcess, "UNKNOWN_PROCESS", "nope"},
		{"bad JSON variables", good, []string{"complete", "3", "--vars", `{"x":`}, exitUsage, "BAD_INPUT", "--vars: not a JSON object"},
		{"variables not an object", good, []string{"publish", "paid", "--vars", `[1]`}, exitUsage, "BAD_INPUT", "--vars: not a JSON object"},
		{"key not a number", good, []string{"complete", "three"}, exitUsage, "USAGE", `job key "three" is not a positive integer`},
		{"missing argument", good, []string{"throw", "3"}, exitUsage, "USAGE", "throw needs 2 arguments, got 1"},
		{"empty name", good, []string{"publish", ""}, exitUsage, "USAGE", "publish: MESSAGE is empty"},
		{"empty error code", good, []string{"throw", "3", ""}, exitUsage, "USAGE", "throw: CODE is empty"},
		{"two ways to advance", good, []string{"advance", "1h", "--next"}, exitUsage, "USAGE", "exactly one of DURATION, --to TIME, --next"},
		{"bad duration", good, []string{"advance", "soon"}, exitUsage, "BAD_INPUT", `"soon" is not a duration`},
		{"unknown flag", good, []string{"jobs", "--bogus"}, exitUsage, "USAGE", "unknown flag: --bogus"},
		{"run with a missing model", good, []string{"run", "testdata/none.bpmn"}, exitUsage, "BAD_INPUT", "testdata/none.bpmn: no such file"},
		{"invalid model", filepath.Join(dir, "invalid.json"), []string{"deploy", "testdata/invalid.bpmn"}, exitUsage, "DEPLOY_FAILED", "targetRef nowhere"},
		{"unwritable state file", filepath.Join(dir, "no-dir", "s.json"), []string{"deploy", "testdata/timer.bpmn"}, exitUsage, "BAD_INPUT", "write state file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ft(t, tc.code, tc.state, tc.args...)
			require.NotNil(t, p.Error)
			assert.Equal(t, tc.errc, p.Error.Code)
			assert.Contains(t, p.Error.Message, tc.msg)
		})
	}
	// Nothing above changed the good state file, nor created a new one.
	after, err := os.ReadFile(good)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(goodDoc, after), "the good state file changed")
	assert.NoFileExists(t, filepath.Join(dir, "invalid.json"))
	assert.NoFileExists(t, filepath.Join(dir, "none.json"))
}

func TestStateFile_NoTimer(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "testdata/message.bpmn")
	p := ft(t, exitProcess, state, "advance", "--next")
	assert.Equal(t, "NO_TIMER", p.Error.Code)
	p = ft(t, exitOK, state, "advance", "90m")
	assert.Equal(t, clock.Epoch.Add(90*time.Minute), *p.Now)
	p = ft(t, exitOK, state, "advance", "--to", "2026-01-02T00:00:00Z")
	assert.Equal(t, clock.Epoch.Add(24*time.Hour), *p.Now)
	// The clock went on across invocations: it reads the state file's time.
	assert.Equal(t, clock.Epoch.Add(24*time.Hour), *ft(t, exitOK, state, "jobs").Now)
}

// TestStateFile_Environment checks that $FLOWTRACK_STATE stands in for
// --state (not parallel: it sets the environment).
func TestStateFile_Environment(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	t.Setenv(stateEnv, state)
	var out bytes.Buffer
	require.Equal(t, exitOK, run([]string{"deploy", "testdata/timer.bpmn"}, &out, &out), out.String())
	assert.FileExists(t, state)
	out.Reset()
	require.Equal(t, exitOK, run([]string{"start", "timer"}, &out, &out), out.String())
	assert.Contains(t, out.String(), "instance 2 of timer: active")
}

// TestUsage is not parallel: it clears $FLOWTRACK_STATE.
func TestUsage(t *testing.T) {
	t.Setenv(stateEnv, "")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"help", []string{"--help"}, exitOK, "state commands: flowtrack COMMAND --state FILE"},
		{"command help", []string{"complete", "--help"}, exitOK, "usage: flowtrack complete --state FILE [flags] JOB"},
		{"command help lists flags", []string{"publish", "-h"}, exitOK, "--ttl duration"},
		{"durations print as ISO 8601", []string{"activate", "--help"}, exitOK, "(default PT5M)"},
		{"run help describes the scenario", []string{"run", "--help"}, exitOK, `{"advance": "PT1M"}`},
		{"run help", []string{"run", "--help"}, exitOK, "usage: flowtrack run model.bpmn"},
		{"unknown flag", []string{"jobs", "--bogus"}, exitUsage, "flowtrack: unknown flag: --bogus\nRun 'flowtrack jobs --help' for its usage.\n"},
		{"single-dash long flag", []string{"jobs", "-json"}, exitUsage, "unknown shorthand flag: 'j' in -json"},
		{"no state file", []string{"jobs"}, exitUsage, "flowtrack: jobs needs --state FILE (or $FLOWTRACK_STATE)\nRun 'flowtrack jobs --help' for its usage.\n"},
		{"unknown command", []string{"bogus"}, exitUsage, "flowtrack: unknown command \"bogus\"\nRun 'flowtrack --help' for usage.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &out, &out), out.String())
			assert.Contains(t, out.String(), tc.out)
			if tc.code == exitUsage {
				// The error and one line pointing at the help, not the whole usage.
				assert.Equal(t, 2, strings.Count(out.String(), "\n"), "%q", out.String())
			}
		})
	}
}

func itoa(k int64) string { return strconv.FormatInt(k, 10) }

// TestRun_JSON checks that run --json prints the object the state
// commands print, its result the instance with its tokens.
func TestRun_JSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		state  engine.State
		tokens []engine.Token
		last   engine.EventType
	}{
		{"completed", []string{"run", "testdata/timer.bpmn", "--json"}, exitOK, engine.Completed, []engine.Token{}, engine.InstanceCompleted},
		{"stuck", []string{"run", "--json", "testdata/message.bpmn", "--vars", `{"key":"x"}`}, exitProcess, engine.Active,
			[]engine.Token{{ID: 1, ElementID: "wait_go", Waiting: engine.WaitMessage}}, engine.MessageSubscribed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, tc.code, run(tc.args, &stdout, &stderr), "%s%s", stdout.String(), stderr.String())
			var p printed
			dec := json.NewDecoder(&stdout)
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&p))
			assert.Equal(t, "run", p.Command)
			assert.Equal(t, tc.code == exitOK, p.OK)
			assert.Nil(t, p.Error)
			var view struct {
				State  engine.State   `json:"state"`
				Tokens []engine.Token `json:"tokens"`
			}
			require.NoError(t, json.Unmarshal(p.Result, &view))
			assert.Equal(t, tc.state, view.State)
			assert.Equal(t, tc.tokens, view.Tokens)
			require.NotEmpty(t, p.Events)
			assert.Equal(t, tc.last, p.Events[len(p.Events)-1].Type)
			assert.False(t, dec.More(), "one object")
		})
	}
}

// TestUsage_EveryCommand checks that every command answers --help with
// its own usage, on stdout, and exit 0.
func TestUsage_EveryCommand(t *testing.T) {
	t.Parallel()
	names := []string{"run", "validate"}
	for _, c := range stateCommands {
		names = append(names, c.name)
	}
	for _, name := range names {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, exitOK, run([]string{name, "--help"}, &stdout, &stderr), name)
		assert.True(t, strings.HasPrefix(stdout.String(), "usage: flowtrack "+name+" "), "%s: %s", name, stdout.String())
		assert.Contains(t, stdout.String(), "--json", name)
		assert.NotRegexp(t, `(^|\s)-[a-z]{2,}`, stdout.String(), "%s: every long flag has two dashes", name)
		assert.Empty(t, stderr.String(), name)
	}
}

// TestRun_State checks that run --state leaves a stuck instance in the
// state file, where the state commands go on with it.
func TestRun_State(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	var out bytes.Buffer
	require.Equal(t, exitProcess, run([]string{"run", "testdata/message.bpmn", "--vars", `{"key":"k-1"}`, "--state", state}, &out, &out), out.String())
	assert.Contains(t, out.String(), "stuck: token 1 at wait_go waiting for message")
	p := ft(t, exitOK, state, "publish", "go", "--key", "k-1")
	assert.Equal(t, engine.InstanceCompleted, p.Events[len(p.Events)-1].Type)
	// A second run deploys the model again into the same engine: a new
	// version, and the first instance is still found.
	out.Reset()
	require.Equal(t, exitOK, run([]string{"run", "testdata/timer.bpmn", "--state", state}, &out, &out), out.String())
	list := result[[]instanceSummary](t, ft(t, exitOK, state, "instances"))
	require.Len(t, list, 2)
	assert.Equal(t, instanceSummary{Key: list[0].Key, ProcessID: "message", State: engine.Completed}, list[0])
	assert.Equal(t, "timer", list[1].ProcessID)
}

// TestStateFile_Decimals: numbers keep every digit from --vars through a
// job, the state file and the next invocation.
func TestStateFile_Decimals(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	ft(t, exitOK, state, "deploy", "../../engine/testdata/decimals.bpmn")
	ft(t, exitOK, state, "start", "decimals", "--vars", `{"big":12345678901234567890}`)
	jobs := ft(t, exitOK, state, "jobs")
	assert.Contains(t, string(jobs.Result), `"bigIn": 12345678901234567890,`, "a job's variables keep every digit")
	assert.Contains(t, string(jobs.Result), `"third": 0.3333333333333333333333333333333333`)
	assert.Contains(t, string(jobs.Result), `"sum": 0.3,`)
	job := result[[]engine.Job](t, jobs)
	require.Len(t, job, 1)
	ft(t, exitOK, state, "complete", itoa(job[0].Key), "--vars", `{"paid":98765432109876543210.5}`)
	doc, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Contains(t, string(doc), `"paid":98765432109876543210.5`, "the state file holds the digits")
	p := ft(t, exitOK, state, "publish", "paid", "--key", "12345678901234567891")
	assert.Contains(t, types(p), engine.MessageCorrelated, "the correlation key is next's full text")
}

// TestStateFile_ExportImportInstance moves one instance from one state
// file to another that holds instances of its own: export-instance writes
// it, import-instance adds it, and it goes on there; a second import is
// refused.
func TestStateFile_ExportImportInstance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	from, to, doc := filepath.Join(dir, "from.json"), filepath.Join(dir, "to.json"), filepath.Join(dir, "instance.json")
	ft(t, exitOK, from, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, from, "start", "shipment", "--vars", `{"orderId":"o-0"}`)
	key := result[started](t, ft(t, exitOK, from, "start", "shipment", "--vars", `{"orderId":"o-1"}`)).InstanceKey
	ft(t, exitOK, to, "deploy", "testdata/shipment.bpmn")
	ft(t, exitOK, to, "start", "shipment", "--vars", `{"orderId":"o-9"}`)

	ft(t, exitOK, from, "export-instance", itoa(key), "--out", doc)
	ft(t, exitOK, to, "import-instance", doc)
	p := ft(t, exitProcess, to, "import-instance", doc)
	assert.Equal(t, "KEY_IN_USE", p.Error.Code)
	assert.Equal(t, "BAD_INPUT", ft(t, exitUsage, to, "export-instance", itoa(key)).Error.Code, "--out is required")

	jobs := result[[]engine.Job](t, ft(t, exitOK, to, "jobs", "--type", "pack"))
	var mine []engine.Job
	for _, j := range jobs {
		if j.InstanceKey == key {
			mine = append(mine, j)
		}
	}
	require.Len(t, mine, 1, "the imported instance waits on its job in the other state file")
	assert.Equal(t, map[string]any{"orderId": "o-1"}, mine[0].Variables)
	ft(t, exitOK, to, "complete", itoa(mine[0].Key))
}
