package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/host"
)

// stateCommand is a command that works on the engine a state file holds.
type stateCommand struct {
	name string
	// args names the positional arguments, for usage; nargs counts them.
	args  string
	nargs int
	// more says nargs is a minimum: further arguments may follow.
	more bool
	doc  string
	// mutates says the command changes the engine, so the state file is
	// written back; create says it may start a new state file.
	mutates, create bool
	// setup registers the command's own flags and returns its action,
	// which gets the positional arguments.
	setup func(fs *flag.FlagSet) action
}

type action func(ctx context.Context, e *host.Engine, args []string) (any, error)

// stateCommands lists the state-file commands, in usage order.
var stateCommands = []stateCommand{
	{name: "deploy", args: "model.bpmn [more.bpmn...]", nargs: 1, more: true, doc: "deploy one or more models, in order, so a call activity may call a process of another file (starts the state file if there is none)", mutates: true, create: true,
		setup: func(*flag.FlagSet) action { return deployAction }},
	{name: "start", args: "PROCESS", nargs: 1, doc: "start an instance of a deployed process", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			vars := varsFlag(fs, "start variables")
			version := fs.Int("version", 0, "the process `VERSION` to start (see definitions); 0: the newest")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				v, err := vars()
				if err != nil {
					return nil, err
				}
				if *version < 0 {
					return nil, fmt.Errorf("%w: --version %d: must not be negative", errInput, *version)
				}
				s, err := e.StartVersion(ctx, args[0], *version, v)
				if err != nil {
					return nil, err
				}
				return started{InstanceKey: s.Key, ProcessID: args[0], State: s.State}, nil
			}
		}},
	{name: "jobs", doc: "list the activatable jobs",
		setup: func(fs *flag.FlagSet) action {
			typ := fs.String("type", "", "only jobs of this `TYPE`")
			inst := fs.Int64("instance", 0, "only jobs of instance `KEY`")
			el := fs.String("element", "", "only jobs at element `ID`")
			return func(ctx context.Context, e *host.Engine, _ []string) (any, error) {
				jobs, err := e.Jobs(ctx, engine.JobFilter{Type: *typ, InstanceKey: *inst, ElementID: *el})
				return jobList(orEmpty(jobs)), err
			}
		}},
	{name: "complete", args: "JOB", nargs: 1, doc: "complete a job; its variables are merged into the instance", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			vars := varsFlag(fs, "result variables")
			act := activationFlag(fs)
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				return nil, e.CompleteJob(ctx, key, v, engine.JobActivation(*act))
			}
		}},
	{name: "fail", args: "JOB", nargs: 1, doc: "report a failed attempt at a job: it keeps its retries minus one, or --retries N; with none left an incident holds it", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			retries := fs.Int("retries", 0, "attempts left; 0 raises an incident (default: the job's retries minus one, as Zeebe's clients fail a job)")
			msg := fs.String("message", "", "why the attempt failed")
			backoff := durationFlag(fs, "backoff", 0, "with retries left, how long (virtual time) before the job can be activated again")
			act := activationFlag(fs)
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				if *retries < 0 {
					return nil, fmt.Errorf("%w: --retries %d: must not be negative", errInput, *retries)
				}
				if !fs.Changed("retries") {
					// One attempt fewer than the job has; a job the engine
					// does not know gets 0, and FailJob says it is unknown.
					jobs, err := e.Jobs(ctx, engine.JobFilter{})
					if err != nil {
						return nil, err
					}
					if i := slices.IndexFunc(jobs, func(j engine.Job) bool { return j.Key == key }); i >= 0 {
						*retries = max(0, jobs[i].Retries-1)
					}
				}
				if *backoff < 0 {
					return nil, fmt.Errorf("%w: --backoff %s: must not be negative", errInput, isoDuration(*backoff))
				}
				return nil, e.FailJob(ctx, key, *retries, *msg, engine.JobActivation(*act), engine.RetryBackoff(*backoff))
			}
		}},
	{name: "throw", args: "JOB CODE", nargs: 2, doc: "throw the BPMN error CODE from a job's element", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			msg := fs.String("message", "", "the error's message")
			vars := varsFlag(fs, "variables set with the error")
			act := activationFlag(fs)
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				return nil, e.ThrowError(ctx, key, args[1], *msg, v, engine.JobActivation(*act))
			}
		}},
	{name: "activate", args: "TYPE", nargs: 1, doc: "activate jobs of a type for a worker, as a Zeebe job worker does", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			worker := fs.String("worker", "cli", "the worker's `NAME`, recorded in the jobs")
			timeout := durationFlag(fs, "timeout", 5*time.Minute, "how long (virtual time) the activation holds the jobs")
			maxJobs := fs.Int("max", 10, "at most `N` jobs")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				jobs, err := e.ActivateJobs(ctx, args[0], *worker, *timeout, *maxJobs)
				return jobList(orEmpty(jobs)), err
			}
		}},
	{name: "retries", args: "JOB N", nargs: 2, doc: "set how many retries a job has left (an incident holding it waits for resolve)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				n, err := strconv.Atoi(args[1])
				if err != nil {
					return nil, fmt.Errorf("%w: retries %q: not a whole number", errInput, args[1])
				}
				return nil, e.UpdateJobRetries(ctx, key, n)
			}
		}},
	{name: "publish", args: "MESSAGE", nargs: 1, doc: "publish a message (correlate it, or buffer it for --ttl)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			key := fs.String("key", "", "correlation `KEY`")
			ttl := durationFlag(fs, "ttl", 0, "how long an uncorrelated message stays buffered (virtual time)")
			id := fs.String("id", "", "message `ID`: a second publish with it while buffered is refused")
			vars := varsFlag(fs, "message variables")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				v, err := vars()
				if err != nil {
					return nil, err
				}
				if *ttl < 0 {
					return nil, fmt.Errorf("%w: --ttl %s: must not be negative", errInput, isoDuration(*ttl))
				}
				return nil, e.PublishMessage(ctx, engine.Message{Name: args[0], CorrelationKey: *key, Variables: v, TTL: *ttl, MessageID: *id})
			}
		}},
	{name: "signal", args: "SIGNAL", nargs: 1, doc: "broadcast a signal", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			vars := varsFlag(fs, "signal variables")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				v, err := vars()
				if err != nil {
					return nil, err
				}
				return nil, e.BroadcastSignal(ctx, args[0], v)
			}
		}},
	{name: "advance", args: "[DURATION]", nargs: -1, doc: "move virtual time by DURATION (90s, 1h30m, PT90S, P1D), --to TIME or --next", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			to := fs.String("to", "", "move to this RFC 3339 `TIME`")
			next := fs.Bool("next", false, "move to when the next timer is due")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				if n := len(args) + boolInt(*to != "") + boolInt(*next); n != 1 {
					return nil, usageError{"advance needs exactly one of DURATION, --to TIME, --next"}
				}
				var err error
				switch {
				case len(args) == 1:
					d, perr := parseDuration(args[0])
					if perr != nil {
						return nil, fmt.Errorf("%w: advance: %v", errInput, perr)
					}
					if d < 0 {
						return nil, fmt.Errorf("%w: advance: %s is negative: time moves forward only", errInput, args[0])
					}
					err = e.Advance(ctx, d)
				case *to != "":
					t, perr := time.Parse(time.RFC3339Nano, *to)
					if perr != nil {
						return nil, fmt.Errorf("%w: advance --to: %v", errInput, perr)
					}
					err = e.AdvanceTo(ctx, t)
				default:
					due, ok := e.NextDeadline()
					if !ok {
						return nil, errNoTimer
					}
					err = e.AdvanceTo(ctx, due)
				}
				return nowResult{Now: e.Now()}, err
			}
		}},
	{name: "incidents", doc: "list the open incidents",
		setup: func(fs *flag.FlagSet) action {
			inst := fs.Int64("instance", 0, "only incidents of instance `KEY`")
			el := fs.String("element", "", "only incidents at element `ID`")
			typ := fs.String("type", "", "only incidents of `TYPE` job (no retries left) or element (anything else)")
			return func(ctx context.Context, e *host.Engine, _ []string) (any, error) {
				f := engine.IncidentFilter{InstanceKey: *inst, ElementID: *el, Type: engine.IncidentType(*typ)}
				if err := f.Check(); err != nil {
					return nil, fmt.Errorf("%w: --type: %v", errInput, err)
				}
				inc, err := e.FindIncidents(ctx, f)
				return incidentList(orEmpty(inc)), err
			}
		}},
	{name: "resolve", args: "INCIDENT", nargs: 1, doc: "retry what an incident holds", mutates: true,
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("incident", args[0])
				if err != nil {
					return nil, err
				}
				return nil, e.ResolveIncident(ctx, key)
			}
		}},
	{name: "cancel", args: "INSTANCE", nargs: 1, doc: "terminate an instance", mutates: true,
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				return nil, e.Cancel(ctx, key)
			}
		}},
	{name: "instances", doc: "list the live instances and the finished ones still kept",
		setup: func(*flag.FlagSet) action { return instancesAction }},
	{name: "instance", args: "INSTANCE", nargs: 1, doc: "show an instance: state, variables, incidents, tokens",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				info, err := e.Instance(ctx, key)
				if err != nil {
					return nil, err
				}
				toks, err := e.Tokens(ctx, key)
				if err != nil {
					return nil, err
				}
				info.Incidents = orEmpty(info.Incidents)
				return instanceView{InstanceInfo: info, Tokens: orEmpty(toks)}, nil
			}
		}},
	{name: "tokens", args: "INSTANCE", nargs: 1, doc: "show where an instance's tokens are and what they wait for",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				toks, err := e.Tokens(ctx, key)
				return tokenList(orEmpty(toks)), err
			}
		}},
	{name: "history", args: "INSTANCE", nargs: 1, doc: "show an instance's event stream",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				evs, err := e.History(ctx, key)
				return history(orEmpty(evs)), err
			}
		}},
	{name: "variables", args: "INSTANCE", nargs: 1, doc: "show an instance's variables, or a scope's",
		setup: func(fs *flag.FlagSet) action {
			scope := scopeFlags(fs)
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				var vars map[string]any
				if s := scope(); s != (engine.Scope{}) {
					vars, err = e.ScopeVariables(ctx, key, s)
				} else {
					vars, err = e.Variables(ctx, key)
				}
				if vars == nil {
					vars = map[string]any{}
				}
				return variables(vars), err
			}
		}},
	{name: "definitions", doc: "list the deployed versions of every process",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, _ []string) (any, error) {
				defs, err := e.Definitions(ctx)
				return definitionList(orEmpty(defs)), err
			}
		}},
	{name: "definition", args: "PROCESS", nargs: 1, doc: "print the BPMN document that deployed a version of a process",
		setup: func(fs *flag.FlagSet) action {
			version := fs.Int("version", 0, "the `VERSION`; 0: the newest")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				name, xml, err := e.DefinitionXML(ctx, args[0], *version)
				if err != nil {
					return nil, err
				}
				return definitionXML{Name: name, XML: string(xml)}, nil
			}
		}},
	{name: "metrics", doc: "show what an operator reads: open counts, jobs by type, the oldest job, instances by process with latency",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, _ []string) (any, error) {
				m, err := e.Metrics(ctx)
				return metrics(m), err
			}
		}},
	{name: "modify", args: "INSTANCE", nargs: 1, doc: "repair an instance: start tokens before elements, terminate tokens (as Zeebe's ModifyProcessInstance)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			var m engine.Modification
			funcFlag(fs, "activate", "start a token before element `ID` (repeatable)", func(id string) error {
				m.Activate = append(m.Activate, engine.Activation{ElementID: id})
				return nil
			})
			funcFlag(fs, "terminate", "terminate token `TOKEN` (repeatable; ids from tokens)", func(s string) error {
				id, err := strconv.Atoi(s)
				if err != nil {
					return fmt.Errorf("token %q: not a whole number", s)
				}
				m.Terminate = append(m.Terminate, id)
				return nil
			})
			scope := fs.Int("scope", 0, "for --activate: the `TOKEN` waiting at the enclosing sub-process")
			vars := varsFlag(fs, "variables set in the activated elements' scope")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				if len(m.Activate) == 0 && len(m.Terminate) == 0 {
					return nil, fmt.Errorf("%w: modify needs --activate or --terminate", errInput)
				}
				for i := range m.Activate {
					m.Activate[i].Scope, m.Activate[i].Variables = *scope, v
				}
				return nil, e.ModifyInstance(ctx, key, m)
			}
		}},
	{name: "set-variables", args: "INSTANCE", nargs: 1, doc: "set variables on an instance or a sub-process scope (as Zeebe's SetVariables)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			vars := varsFlag(fs, "variables to set")
			scope := scopeFlags(fs)
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				if len(v) == 0 {
					return nil, fmt.Errorf("%w: set-variables needs --vars", errInput)
				}
				return nil, e.SetVariables(ctx, key, v, scope())
			}
		}},
	{name: "export-instance", args: "INSTANCE", nargs: 1, doc: "write one instance with its call tree to --out FILE, a state document import-instance adds to another state file",
		setup: func(fs *flag.FlagSet) action {
			out := fs.String("out", "", "the `FILE` to write (required)")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				if *out == "" {
					return nil, fmt.Errorf("%w: export-instance needs --out FILE", errInput)
				}
				doc, err := e.CheckpointInstance(ctx, key)
				if err != nil {
					return nil, err
				}
				if err := os.WriteFile(*out, doc, 0o600); err != nil { // it holds process variables
					return nil, fmt.Errorf("export-instance: %w", err)
				}
				return nil, nil
			}
		}},
	{name: "import-instance", args: "FILE", nargs: 1, doc: "add the instance of an export-instance document to the state: it keeps its key, its jobs and incidents get new ones", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				doc, err := os.ReadFile(args[0])
				if err != nil {
					return nil, fmt.Errorf("%w: import-instance: %v", errInput, err)
				}
				return nil, e.RestoreInstance(ctx, doc)
			}
		}},
}

// errNoTimer is advance --next with no timer pending.
var errNoTimer = errors.New("advance --next: no timer is pending")

// stateEnv names the environment variable that gives --state its default.
const stateEnv = "FLOWTRACK_STATE"

func findStateCommand(name string) (stateCommand, bool) {
	i := slices.IndexFunc(stateCommands, func(c stateCommand) bool { return c.name == name })
	if i < 0 {
		return stateCommand{}, false
	}
	return stateCommands[i], true
}

// stateCmd runs one state command: it loads the state file, applies the
// command, and writes the file back if the command changed the engine.
func stateCmd(ctx context.Context, c stateCommand, args []string, stdout io.Writer) (code int, err error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	file := fs.String("state", "", "state `FILE` (default $"+stateEnv+")")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the trace")
	act := c.setup(fs)
	out := outcome{Command: c.name, Events: []engine.Event{}}
	defer func() { err = printOutcomeIf(*asJSON, args, stdout, &out, code, err) }()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 0, err
	}
	if *file == "" {
		*file = os.Getenv(stateEnv)
	}
	switch {
	case c.more && len(pos) < c.nargs:
		return 0, usageError{fmt.Sprintf("%s needs at least %s, got %d", c.name, plural(c.nargs, "argument"), len(pos))}
	case !c.more && c.nargs >= 0 && len(pos) != c.nargs:
		return 0, usageError{fmt.Sprintf("%s needs %s, got %d arguments", c.name, plural(c.nargs, "argument"), len(pos))}
	case c.nargs < 0 && len(pos) > 1:
		return 0, usageError{fmt.Sprintf("%s takes at most one argument, got %d", c.name, len(pos))}
	case *file == "":
		return 0, usageError{fmt.Sprintf("%s needs --state FILE (or $%s)", c.name, stateEnv)}
	}
	if i := slices.Index(pos, ""); i >= 0 {
		names := strings.Fields(c.args)
		return 0, usageError{fmt.Sprintf("%s: %s is empty", c.name, strings.Trim(names[min(i, len(names)-1)], "[]."))}
	}
	e, sf, err := openState(ctx, *file, c.create)
	if err != nil {
		return 0, err
	}
	defer e.Close(ctx)
	tr := &tracer{out: stdout, epoch: clock.Epoch}
	e.Subscribe(func(ev engine.Event) {
		out.Events = append(out.Events, ev)
		if !*asJSON {
			tr.print(ev)
		}
	})
	res, err := act(ctx, e, pos)
	if err != nil {
		return 0, err
	}
	if c.mutates {
		if err := sf.save(ctx, e); err != nil {
			return 0, err
		}
	}
	now := e.Now()
	out.Now, out.Result = &now, res
	if due, ok := e.NextDeadline(); ok {
		out.NextDeadline = &due
	}
	if !*asJSON {
		if t, ok := res.(texter); ok {
			tr.now = now
			t.text(stdout, tr)
		}
	}
	return exitOK, nil
}

// deployAction deploys every file in order. One file's result is its
// deployment; several files' is the list of their deployments.
func deployAction(ctx context.Context, e *host.Engine, args []string) (any, error) {
	var list deployedList
	for _, file := range args {
		d, err := deploy(ctx, e, file)
		if err != nil {
			return nil, err
		}
		d.Warnings = orEmpty(d.Warnings)
		list = append(list, deployed(*d))
	}
	if len(list) == 1 {
		return list[0], nil
	}
	return list, nil
}

// instancesAction lists instances from the engine's state document
// (engine/STATE.md): the ABI has no operation that lists instances, and
// the document names every live instance and the finished ones the
// engine keeps.
func instancesAction(ctx context.Context, e *host.Engine, _ []string) (any, error) {
	data, err := e.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Instances []struct {
			Key     int64        `json:"key"`
			Process string       `json:"process"`
			State   engine.State `json:"state"`
			Parent  int64        `json:"parent"`
		} `json:"instances"`
		Finished []struct {
			Key     int64        `json:"key"`
			Process string       `json:"process"`
			State   engine.State `json:"state"`
		} `json:"finished"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read state document: %w", err)
	}
	list := instanceList{}
	for _, i := range doc.Instances {
		list = append(list, instanceSummary{Key: i.Key, ProcessID: i.Process, State: i.State, Parent: i.Parent})
	}
	for _, i := range doc.Finished {
		list = append(list, instanceSummary{Key: i.Key, ProcessID: i.Process, State: i.State})
	}
	slices.SortFunc(list, func(a, b instanceSummary) int { return cmp.Compare(a.Key, b.Key) })
	return list, nil
}

// unmarshalExact is json.Unmarshal keeping the digits of numbers as
// json.Number, which the engine holds exactly: --vars '{"id":
// 12345678901234567890}' is that integer, not the nearest float64.
func unmarshalExact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// varsFlag registers --vars and returns its parser: the variables as a
// JSON object, nil when the flag is absent.
func varsFlag(fs *flag.FlagSet, what string) func() (map[string]any, error) {
	s := fs.String("vars", "", what+" as a JSON `OBJECT`")
	return func() (map[string]any, error) {
		if *s == "" {
			return nil, nil
		}
		var v map[string]any
		if err := unmarshalExact([]byte(*s), &v); err != nil {
			return nil, fmt.Errorf("%w: --vars: not a JSON object: %v", errInput, err)
		}
		return v, nil
	}
}

// keyArg parses a key given as a positional argument.
func keyArg(what, s string) (int64, error) {
	k, err := strconv.ParseInt(s, 10, 64)
	if err != nil || k <= 0 {
		return 0, usageError{fmt.Sprintf("%s key %q is not a positive integer", what, s)}
	}
	return k, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// stateUsage lists the state commands for the usage text.
func stateUsage() string {
	var b strings.Builder
	b.WriteString("\nstate commands: flowtrack COMMAND --state FILE [--json] [flags] ARGS\n")
	for _, c := range stateCommands {
		fmt.Fprintf(&b, "  %-24s %s\n", c.name+" "+c.args, c.doc)
	}
	return b.String()
}

// activationFlag registers --activation, the activation a job result
// answers (activate's jobs carry it).
func activationFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("activation", 0, "the activation `KEY` this result answers (from activate): refused once the job went to another worker")
}

// scopeFlags registers --scope and --local, which name a variable scope.
func scopeFlags(fs *flag.FlagSet) func() engine.Scope {
	token := fs.Int("scope", 0, "the `TOKEN` waiting at a sub-process whose scope is meant (see tokens); 0: the process")
	local := fs.Bool("local", false, "the scope's own variables only, not propagating to the scopes above")
	return func() engine.Scope { return engine.Scope{Token: *token, Local: *local} }
}
