package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

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
	doc   string
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
	{name: "deploy", args: "model.bpmn", nargs: 1, doc: "deploy a model (starts the state file if there is none)", mutates: true, create: true,
		setup: func(*flag.FlagSet) action { return deployAction }},
	{name: "start", args: "PROCESS", nargs: 1, doc: "start an instance of a deployed process", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			vars := varsFlag(fs, "start variables")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				v, err := vars()
				if err != nil {
					return nil, err
				}
				s, err := e.StartInstance(ctx, args[0], v)
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
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				return nil, e.CompleteJob(ctx, key, v)
			}
		}},
	{name: "fail", args: "JOB", nargs: 1, doc: "report a failed attempt at a job (no retries left: an incident)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			retries := fs.Int("retries", 0, "attempts left; 0 raises an incident")
			msg := fs.String("message", "", "why the attempt failed")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				if *retries < 0 {
					return nil, fmt.Errorf("%w: --retries %d: must not be negative", errInput, *retries)
				}
				return nil, e.FailJob(ctx, key, *retries, *msg)
			}
		}},
	{name: "throw", args: "JOB CODE", nargs: 2, doc: "throw the BPMN error CODE from a job's element", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			msg := fs.String("message", "", "the error's message")
			vars := varsFlag(fs, "variables set with the error")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("job", args[0])
				if err != nil {
					return nil, err
				}
				v, err := vars()
				if err != nil {
					return nil, err
				}
				return nil, e.ThrowError(ctx, key, args[1], *msg, v)
			}
		}},
	{name: "publish", args: "MESSAGE", nargs: 1, doc: "publish a message (correlate it, or buffer it for --ttl)", mutates: true,
		setup: func(fs *flag.FlagSet) action {
			key := fs.String("key", "", "correlation `KEY`")
			ttl := fs.Duration("ttl", 0, "how long an uncorrelated message stays buffered (virtual time)")
			id := fs.String("id", "", "message `ID`: a second publish with it while buffered is refused")
			vars := varsFlag(fs, "message variables")
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				v, err := vars()
				if err != nil {
					return nil, err
				}
				if *ttl < 0 {
					return nil, fmt.Errorf("%w: --ttl %s: must not be negative", errInput, *ttl)
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
	{name: "advance", args: "[DURATION]", nargs: -1, doc: "move virtual time by DURATION (90s, 1h), --to TIME or --next", mutates: true,
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
					d, perr := time.ParseDuration(args[0])
					if perr != nil || d < 0 {
						return nil, fmt.Errorf("%w: advance: %q is not a duration such as 90s or 1h30m", errInput, args[0])
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
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, _ []string) (any, error) {
				inc, err := e.Incidents(ctx)
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
	{name: "variables", args: "INSTANCE", nargs: 1, doc: "show an instance's variables",
		setup: func(*flag.FlagSet) action {
			return func(ctx context.Context, e *host.Engine, args []string) (any, error) {
				key, err := keyArg("instance", args[0])
				if err != nil {
					return nil, err
				}
				vars, err := e.Variables(ctx, key)
				if vars == nil {
					vars = map[string]any{}
				}
				return variables(vars), err
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
	case c.nargs >= 0 && len(pos) != c.nargs:
		return 0, usageError{fmt.Sprintf("%s needs %s, got %d arguments", c.name, plural(c.nargs, "argument"), len(pos))}
	case c.nargs < 0 && len(pos) > 1:
		return 0, usageError{fmt.Sprintf("%s takes at most one argument, got %d", c.name, len(pos))}
	case *file == "":
		return 0, usageError{fmt.Sprintf("%s needs --state FILE (or $%s)", c.name, stateEnv)}
	}
	if i := slices.Index(pos, ""); i >= 0 {
		return 0, usageError{fmt.Sprintf("%s: %s is empty", c.name, strings.Trim(strings.Fields(c.args)[i], "[]"))}
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
			t.text(stdout, tr)
		}
	}
	return exitOK, nil
}

func deployAction(ctx context.Context, e *host.Engine, args []string) (any, error) {
	d, err := deploy(ctx, e, args[0])
	if err != nil {
		return nil, err
	}
	d.Warnings = orEmpty(d.Warnings)
	return deployed(*d), nil
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

// varsFlag registers --vars and returns its parser: the variables as a
// JSON object, nil when the flag is absent.
func varsFlag(fs *flag.FlagSet, what string) func() (map[string]any, error) {
	s := fs.String("vars", "", what+" as a JSON `OBJECT`")
	return func() (map[string]any, error) {
		if *s == "" {
			return nil, nil
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(*s), &v); err != nil {
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
