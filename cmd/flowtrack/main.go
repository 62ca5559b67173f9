// Command flowtrack runs, validates and steps BPMN 2.0 models on
// flowtrack's WebAssembly module (embedded), through wazero.
//
//	flowtrack run model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON] [--scenario FILE] [--state FILE] [--json]
//	flowtrack validate [--json] model.bpmn|model.dmn
//	flowtrack decide model.dmn [--with FILE]... [--decision ID] [--vars JSON] [--json]
//	flowtrack sim model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON]
//	flowtrack COMMAND --state FILE [--json] [flags] ARGS
//	flowtrack serve [--data DIR | --nats URL[,URL...]] [--config FILE | --port N] [--cluster NAME] [--replicas N] [--node ID --partitions P ...]
//	flowtrack cluster status [--nats URL[,URL...]] [--cluster NAME] [--json]
//	flowtrack store check FILE
//
// run deploys the model (and the other files given, positional or
// --with, so its call activities can call their processes), starts an instance, completes every job it
// creates (with empty variables, or as the scenario says), performs the
// scenario's steps, advances virtual time to each next timer, and prints
// the trace, the final state and the variables; with --json one object
// shaped as a state command's, its result the instance with its tokens.
// With --state FILE it runs in the engine the file holds (a new one if
// there is no file) and writes the engine back at the end, so the state
// commands go on from where the run stopped (a stuck instance, an
// incident); its virtual time is the engine's, and advancing it fires the
// other instances' timers too.
//
// validate checks the model as a validator does, every process of it,
// executable or not (deploy executes only executable ones), resolving its
// imports relative to the file, and prints every problem and warning, one a
// line, as "file:line:col: rule: element: message" (the form editors and CI
// annotate; warnings say "warning:" before the message), or with --json
// one object {"file", "valid", "processes", "errors", "warnings"}.
//
// A DMN model validates too (its decision tables, expressions, types and
// requirements); decide evaluates one of its decisions over --vars and
// prints the rules that matched and the output (decide.go).
//
// sim is the interactive mode (sim.go): it starts an instance and, one
// choice a line read from stdin, completes its jobs, publishes the
// messages and broadcasts the signals it awaits and fires its timers,
// printing the trace after each.
//
// The state commands let separate invocations drive one engine, as a
// script or a person at a shell would: deploy, start, jobs, complete,
// fail, throw, publish, signal, advance, incidents, resolve, cancel,
// instances, instance, tokens, history, variables. Each loads the engine
// from the state file (engine/STATE.md; $FLOWTRACK_STATE by default),
// applies itself, lets the engine settle, and, if it changed the engine,
// writes the file back atomically (a temporary file renamed over it).
// Only deploy (and run --state) starts a missing state file. Time is
// virtual: it moves only with advance, and the state file keeps it. The
// output is the trace of what the command made happen and its answer, or
// with --json one object {"command", "ok", "result", "events", "now",
// "nextDeadline", "error"} (README.md, "The CLI"). An invocation that
// finds the file changed by another since it read it writes nothing and
// fails (STATE_CHANGED).
//
// serve runs the native engine (not the module: a server runs on the real
// clock, with a store, and needs neither the sandbox nor portability) as
// a long-running server over NATS, durable in JetStream (package server;
// README.md, "flowtrack serve"); with --node, one node of a partitioned
// cluster (package cluster, docs/cluster.md), whose state cluster status
// prints.
//
// store check verifies a store file of engine.WithStore (package
// boltstore) without changing it: its meta pages and size, then bbolt's
// consistency check (store.go).
//
// Exit codes: 0 the instance completed (validate: the model is valid; a
// state command: it succeeded); 1 the instance failed, was terminated,
// holds an incident or is stuck waiting (a state command: the engine
// refused it, e.g. an unknown key); 2 usage error, unreadable or invalid
// input (model, variables, state file).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	// pflag, as the package flag: GNU-style long flags (--json) in help
	// and parsing, flags anywhere among the arguments.
	flag "github.com/spf13/pflag"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// Exit codes.
const (
	exitOK      = 0
	exitProcess = 1
	exitUsage   = 2
)

// usage is the top-level usage text; stateUsage adds the state commands.
var usage = `usage:
  flowtrack run model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON] [--scenario FILE] [--state FILE] [--json]
  flowtrack validate [--json] model.bpmn|model.dmn
  flowtrack decide model.dmn [--with FILE]... [--decision ID] [--vars JSON] [--json]
  flowtrack sim model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON]
  flowtrack serve [--data DIR | --nats URL[,URL...]] [--config FILE | --port N] [--cluster NAME] [--replicas N] [--node ID --partitions P ...]
  flowtrack cluster status [--nats URL[,URL...]] [--cluster NAME] [--json]
` + storeUsage + stateUsage() + `
Every state command loads --state FILE (default $FLOWTRACK_STATE), applies
itself, and writes the file back when it changed the engine; --json prints
one JSON object. "flowtrack COMMAND --help" describes a command's flags.
Durations are Go's (90s, 1h30m) or ISO 8601's (PT90S, PT1H30M, P1D), and
print as ISO 8601. "flowtrack run --help" describes the --scenario file.

Exit codes: 0 ok; 1 process failed/incident/stuck (run), or the engine
refused the command (unknown key, ended instance...); 2 usage error,
unreadable or invalid input (model, variables, state file).
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// usageError is a command-line mistake.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// helpError is a request for a command's usage (-h, --help): the text.
type helpError struct{ text string }

func (e helpError) Error() string { return e.text }

func run(args []string, stdout, stderr io.Writer) int { return runIO(args, os.Stdin, stdout, stderr) }

// runIO is run with the input sim reads its choices from.
func runIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	ctx := context.Background()
	var code int
	var err error
	if c, ok := findStateCommand(args[0]); ok {
		code, err = stateCmd(ctx, c, args[1:], stdout)
	} else {
		switch args[0] {
		case "run":
			code, err = runCmd(ctx, args[1:], stdout, stderr)
		case "validate":
			code, err = validateCmd(ctx, args[1:], stdout)
		case "decide":
			code, err = decideCmd(ctx, args[1:], stdout)
		case "serve":
			code, err = serveCmd(ctx, args[1:], stdout)
		case "cluster":
			code, err = clusterCmd(ctx, args[1:], stdout)
		case "sim":
			code, err = simCmd(ctx, args[1:], stdin, stdout)
		case "store":
			code, err = storeCmd(ctx, args[1:], stdout)
		default:
			err = usageError{fmt.Sprintf("unknown command %q", args[0])}
		}
	}
	if err != nil {
		var he helpError
		if errors.As(err, &he) {
			fmt.Fprint(stdout, he.text)
			return exitOK
		}
		fmt.Fprintln(stderr, "flowtrack:", err)
		var ue usageError
		var de *engine.DeployError
		switch {
		case errors.As(err, &ue):
			// One line pointing at the help, not the whole usage after the error.
			if known(args[0]) {
				fmt.Fprintf(stderr, "Run 'flowtrack %s --help' for its usage.\n", args[0])
			} else {
				fmt.Fprintln(stderr, "Run 'flowtrack --help' for usage.")
			}
			return exitUsage
		case errors.As(err, &de):
			for _, p := range de.Problems {
				fmt.Fprintln(stderr, problem(de.File, p, ""))
			}
			return exitUsage
		case errors.Is(err, errInput):
			return exitUsage
		}
		return exitProcess
	}
	return code
}

// known reports whether name is a command.
func known(name string) bool {
	if _, ok := findStateCommand(name); ok {
		return true
	}
	return slices.Contains([]string{"run", "validate", "serve", "cluster", "sim"}, name)
}

// errInput marks bad input (exit 2): a file that cannot be read or is
// malformed (model, scenario, state file), variables that are not a JSON
// object, a flag value out of range, a state file that cannot be written.
var errInput = errors.New("bad input")

// synopses are the argument lines of run and validate, for their --help.
var synopses = map[string]string{
	"run":      "model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON] [--scenario FILE] [--state FILE] [--json]",
	"validate": "[--json] model.bpmn|model.dmn",
	"decide":   "model.dmn [--with FILE]... [--decision ID] [--vars JSON] [--json]",
	"sim":      simSynopsis,
}

// parse parses flags around the one positional argument (the model file).
func parse(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageError{fmt.Sprintf("%s needs exactly one model file, got %d", fs.Name(), len(pos))}
	}
	return pos[0], nil
}

// parseArgs parses GNU-style flags (--json, --vars JSON, --vars=JSON)
// that may come before, between or after the positional arguments, and
// returns those; "--" ends the flags. -h or --help is a helpError holding
// the command's usage.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.SortFlags = false // in the order the command registers them
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, helpError{commandUsage(fs)}
		}
		return nil, usageError{err.Error()}
	}
	return fs.Args(), nil
}

// commandUsage is one command's usage: its synopsis, what it does, its flags.
func commandUsage(fs *flag.FlagSet) string {
	var b strings.Builder
	if c, ok := findStateCommand(fs.Name()); ok {
		fmt.Fprintf(&b, "usage: flowtrack %s\n\n%s.\n\nflags:\n", strings.TrimSpace(c.name+" --state FILE [flags] "+c.args), c.doc)
	} else {
		fmt.Fprintf(&b, "usage: flowtrack %s %s\n\nflags:\n", fs.Name(), synopses[fs.Name()])
	}
	b.WriteString(fs.FlagUsages())
	if fs.Name() == "run" {
		b.WriteString("\n" + scenarioHelp)
	}
	return b.String()
}

func validateCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	file, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	res, err := validate(ctx, file)
	if err != nil {
		return 0, err
	}
	code := exitOK
	if !res.Valid {
		code = exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return code, enc.Encode(res)
	}
	for _, p := range res.Errors {
		fmt.Fprintln(stdout, problem(file, p, ""))
	}
	for _, p := range res.Warnings {
		fmt.Fprintln(stdout, problem(file, p, "warning: "))
	}
	for _, p := range res.Processes {
		fmt.Fprintf(stdout, "ok: process %s (version %d)\n", p.ID, p.Version)
	}
	for _, d := range res.Decisions {
		fmt.Fprintf(stdout, "ok: decision %s (version %d)\n", d.ID, d.Version)
	}
	if res.Valid && len(res.Processes) == 0 && len(res.Decisions) == 0 {
		fmt.Fprintln(stdout, "ok: no executable process (nothing would deploy)")
	}
	return code, nil
}

// validate checks file as a validator does (engine.Validate: every
// process, executable or not, its imports read relative to the file),
// then deploys its executable processes into a new engine to list them.
func validate(ctx context.Context, file string) (validation, error) {
	res := validation{File: file, Errors: []engine.Problem{}, Warnings: []engine.Problem{}}
	xml, err := os.ReadFile(file)
	if err != nil {
		return res, fmt.Errorf("%w: %v", errInput, err)
	}
	if engine.IsDMN(xml) {
		return validateDeploy(ctx, file, res)
	}
	dir := filepath.Dir(file)
	v, err := engine.Validate(file, xml, func(location string) ([]byte, error) {
		if !filepath.IsAbs(location) {
			location = filepath.Join(dir, filepath.FromSlash(location))
		}
		return os.ReadFile(location)
	})
	var de *engine.DeployError
	switch {
	case errors.As(err, &de):
		res.Errors = de.Problems
		return res, nil
	case err != nil:
		return res, err
	}
	res.Valid = true
	res.Warnings = append(res.Warnings, v.Warnings...)
	if len(v.Executable) == 0 {
		return res, nil
	}
	return validateDeploy(ctx, file, res)
}

// validateDeploy deploys file into a new engine and adds what it
// registered (processes, decisions), its warnings, or its problems to res.
// A DMN file is checked this way alone: the constraint catalogue is BPMN's.
func validateDeploy(ctx context.Context, file string, res validation) (validation, error) {
	e, d, err := deployFile(ctx, file)
	var de *engine.DeployError
	if err != nil && !errors.As(err, &de) {
		return res, err
	}
	if e != nil {
		defer e.Close(ctx)
	}
	if de != nil {
		res.Valid = false
		res.Errors = de.Problems
		return res, nil
	}
	res.Valid = true
	res.Processes = d.Processes
	res.Decisions = d.Decisions
	for _, w := range d.Warnings {
		if !slices.ContainsFunc(res.Warnings, func(p engine.Problem) bool { return p == w }) {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return res, nil
}

// validation is what validate --json prints.
type validation struct {
	File      string            `json:"file"`
	Valid     bool              `json:"valid"`
	Processes []engine.Process  `json:"processes,omitempty"`
	Decisions []engine.Decision `json:"decisions,omitempty"`
	Errors    []engine.Problem  `json:"errors"`
	Warnings  []engine.Problem  `json:"warnings"`
}

// fileList is a repeatable file flag (run --with).
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

func (*fileList) Type() string { return "file" }

func (l *fileList) Set(s string) error {
	if s == "" {
		return errors.New("empty file name")
	}
	*l = append(*l, s)
	return nil
}

// deployFile deploys a model file into a new engine.
func deployFile(ctx context.Context, file string) (*host.Engine, *engine.Deployment, error) {
	e, err := host.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	d, err := deploy(ctx, e, file)
	if err != nil {
		e.Close(ctx)
		return nil, nil, err
	}
	return e, d, nil
}

// deploy deploys a model file into e.
func deploy(ctx context.Context, e *host.Engine, file string) (*engine.Deployment, error) {
	xml, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInput, err)
	}
	return e.Deploy(ctx, file, xml)
}

// problem renders p as "file:line:col: rule: element: message", leaving
// out the position, rule or element when unknown; kind ("warning: ")
// precedes the message.
func problem(file string, p engine.Problem, kind string) string {
	var b strings.Builder
	b.WriteString(file)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Column)
	}
	b.WriteString(": ")
	if p.RuleID != "" {
		b.WriteString(p.RuleID + ": ")
	}
	if p.ElementID != "" {
		b.WriteString(p.ElementID + ": ")
	}
	b.WriteString(kind + p.Rule)
	return b.String()
}

// scenario drives a run; every field is optional. scenarioHelp, which
// run --help prints and docs/cli.md repeats, describes the format.
type scenario struct {
	Process   string                 `json:"process"`
	Variables map[string]any         `json:"variables"`
	Jobs      map[string]jobBehavior `json:"jobs"`
	Steps     []step                 `json:"steps"`
}

// scenarioHelp describes the --scenario file of run.
const scenarioHelp = `The --scenario FILE is a JSON object; every field is optional:

  {
    "process": "order",
    "variables": {"amount": 250},
    "jobs": {
      "check-order": {"variables": {"valid": true}},
      "charge-payment": {"error": "DECLINED", "message": "card declined"},
      "ship": {"fail": "carrier down"}
    },
    "steps": [
      {"publishMessage": {"name": "paid", "correlationKey": "o-1", "variables": {"paid": true}, "ttl": "PT1H"}},
      {"broadcastSignal": {"name": "stop"}},
      {"advance": "PT1M"}
    ]
  }

process      the process to start (--process wins; default: the model's first)
variables    its start variables (--vars wins)
jobs         what to do with each job, by job type: complete with "variables"
             (the default: no variables), throw the BPMN "error" code with a
             "message", or "fail" with that message; a failure leaves the
             job's retries minus one, so it is retried until none is left
             and an incident holds it
steps        done in order, one each time the instance waits for something
             other than a job: "publishMessage" (name, correlationKey,
             variables, "ttl" or "ttlMs": how long it stays buffered),
             "broadcastSignal" (name, variables), "advance" (a duration:
             PT1M or 1m) or "advanceMs" (milliseconds); each step has one
             of them. With no step left, time moves to the next timer.
`

type jobBehavior struct {
	Variables map[string]any `json:"variables"`
	Error     string         `json:"error"`
	Fail      string         `json:"fail"`
	Message   string         `json:"message"`
}

type step struct {
	PublishMessage *struct {
		Name           string         `json:"name"`
		CorrelationKey string         `json:"correlationKey"`
		Variables      map[string]any `json:"variables"`
		TTLMs          int64          `json:"ttlMs"`
		// TTL is the time to live as a duration (PT1H or 1h), for TTLMs.
		TTL string `json:"ttl"`
	} `json:"publishMessage"`
	BroadcastSignal *struct {
		Name      string         `json:"name"`
		Variables map[string]any `json:"variables"`
	} `json:"broadcastSignal"`
	AdvanceMs *int64 `json:"advanceMs"`
	// Advance is a duration (PT1M or 1m), for AdvanceMs.
	Advance *string `json:"advance"`
}

func readScenario(file string) (*scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInput, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	dec.UseNumber() // variables keep every digit (unmarshalExact)
	var sc scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("%w: scenario %s: %v", errInput, file, err)
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		n := 0
		for _, set := range []bool{st.PublishMessage != nil, st.BroadcastSignal != nil, st.AdvanceMs != nil, st.Advance != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("%w: scenario %s: step %d must have exactly one of publishMessage, broadcastSignal, advance, advanceMs", errInput, file, i+1)
		}
		if st.Advance != nil {
			d, err := parseDuration(*st.Advance)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("%w: scenario %s: step %d: advance: %q is not a duration of zero or more, such as PT1M or 1m", errInput, file, i+1, *st.Advance)
			}
			ms := d.Milliseconds()
			st.AdvanceMs = &ms
		}
		if m := st.PublishMessage; m != nil && m.TTL != "" {
			d, err := parseDuration(m.TTL)
			if err != nil || d < 0 || m.TTLMs != 0 {
				return nil, fmt.Errorf("%w: scenario %s: step %d: publishMessage ttl: %q is not a duration of zero or more (such as PT1H or 1h), or ttlMs is given too", errInput, file, i+1, m.TTL)
			}
			m.TTLMs = d.Milliseconds()
		}
	}
	return &sc, nil
}

// maxRounds bounds the run loop (a timer cycle would otherwise run forever).
const maxRounds = 10_000

// progressEvery is how many rounds of the run loop pass between progress
// lines on stderr (a variable so that a test can see them on a short run).
var progressEvery = 1000

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int, err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object instead of the trace")
	processID := fs.String("process", "", "process `ID` to start (default: the model's first process)")
	varsJSON := fs.String("vars", "", "start variables as a JSON object")
	scenarioFile := fs.String("scenario", "", "scenario `FILE` (JSON)")
	statePath := fs.String("state", "", "start from the engine in state `FILE` (none: a fresh one) and write it back at the end")
	var with fileList
	fs.Var(&with, "with", "also deploy model `FILE` (repeatable), e.g. the processes the model's call activities call")
	out := outcome{Command: "run", Events: []engine.Event{}}
	defer func() { err = printOutcomeIf(*asJSON, args, stdout, &out, code, err) }()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 0, err
	}
	if len(pos) == 0 {
		return 0, usageError{"run needs a model file"}
	}
	file, others := pos[0], append(pos[1:], with...)
	sc := &scenario{}
	if *scenarioFile != "" {
		if sc, err = readScenario(*scenarioFile); err != nil {
			return 0, err
		}
	}
	if *varsJSON != "" {
		if err := unmarshalExact([]byte(*varsJSON), &sc.Variables); err != nil {
			return 0, usageError{fmt.Sprintf("--vars: not a JSON object: %v", err)}
		}
	}
	if *processID != "" {
		sc.Process = *processID
	}

	var e *host.Engine
	var d *engine.Deployment
	var sf *stateFile
	if *statePath == "" {
		e, d, err = deployFile(ctx, file)
	} else if e, sf, err = openState(ctx, *statePath, true); err == nil {
		if d, err = deploy(ctx, e, file); err != nil {
			e.Close(ctx)
		}
	}
	if err != nil {
		return 0, err
	}
	defer e.Close(ctx)
	for _, f := range others {
		od, err := deploy(ctx, e, f)
		if err != nil {
			return 0, err
		}
		if !*asJSON {
			for _, p := range od.Processes {
				fmt.Fprintf(stdout, "deployed %s: process %s\n", f, p.ID)
			}
		}
	}
	if sc.Process == "" {
		if len(d.Processes) == 0 {
			return 0, fmt.Errorf("%w: %s has no executable process", errInput, file)
		}
		sc.Process = d.Processes[0].ID
	}
	tr := &tracer{out: stdout, epoch: e.Now(), auto: map[int64]bool{}}
	if *asJSON {
		tr.out = io.Discard
	}
	fam := &family{}
	e.Subscribe(func(ev engine.Event) {
		out.Events = append(out.Events, ev)
		fam.observe(ev)
		if !*asJSON {
			tr.print(ev)
		}
	})
	if !*asJSON {
		fmt.Fprintf(stdout, "deployed %s: process %s\n", file, sc.Process)
	}

	key, err := e.Start(ctx, sc.Process, sc.Variables)
	if err != nil {
		if errors.Is(err, engine.ErrUnknownProcess) || errors.Is(err, engine.ErrNoNoneStart) {
			return 0, usageError{err.Error()}
		}
		return 0, err
	}
	steps := sc.Steps
	for round := range maxRounds {
		info, err := e.Instance(ctx, key)
		if err != nil {
			return 0, err
		}
		if info.State != engine.Active || len(info.Incidents) > 0 {
			break
		}
		jobs, err := fam.jobs(ctx, e)
		if err != nil {
			return 0, err
		}
		if !*asJSON && round > 0 && round%progressEvery == 0 {
			fmt.Fprintf(stderr, "flowtrack: %s, %s, virtual time %s\n", plural(round, "step"), plural(len(out.Events), "event"), strings.TrimSpace(tr.stamp(e.Now())))
		}
		if len(jobs) > 0 {
			for _, j := range jobs {
				b, ok := sc.Jobs[j.Type]
				if !ok {
					tr.auto[j.Key] = true
				}
				if err := work(ctx, e, j, b); err != nil {
					return 0, err
				}
			}
			continue
		}
		if len(steps) > 0 {
			if err := do(ctx, e, steps[0], tr, func() int { return len(out.Events) }); err != nil {
				return 0, err
			}
			steps = steps[1:]
			continue
		}
		due, ok := e.NextDeadline()
		if !ok {
			break // waiting for something nobody will send
		}
		tr.note(due, "advance time to %s", due.Format(time.RFC3339))
		if err := e.AdvanceTo(ctx, due); err != nil {
			return 0, err
		}
	}
	view, code, err := report(ctx, e, key, stdout, *asJSON)
	if err != nil {
		return 0, err
	}
	if sf != nil {
		if err := sf.save(ctx, e); err != nil {
			return 0, err
		}
	}
	now := e.Now()
	out.Result, out.Now = view, &now
	if due, ok := e.NextDeadline(); ok {
		out.NextDeadline = &due
	}
	return code, nil
}

// family is the instance a run or sim started and the instances its call
// activities started, whose jobs they answer too. It learns them from the
// events: the first instance to start (events arrive while Start runs),
// then each instance that starts right after a member's callStarted.
type family struct {
	keys  map[int64]bool
	calls int
}

func (f *family) observe(ev engine.Event) {
	if f.keys == nil {
		f.keys = map[int64]bool{}
	}
	switch {
	case ev.Type == engine.CallStarted && f.keys[ev.InstanceKey]:
		f.calls++
	case ev.Type == engine.InstanceStarted && (len(f.keys) == 0 || f.calls > 0):
		if len(f.keys) > 0 {
			f.calls--
		}
		f.keys[ev.InstanceKey] = true
	}
}

// jobs returns the open jobs of the family, by instance and key.
func (f *family) jobs(ctx context.Context, e *host.Engine) ([]engine.Job, error) {
	var jobs []engine.Job
	for _, k := range slices.Sorted(maps.Keys(f.keys)) {
		js, err := e.Jobs(ctx, engine.JobFilter{InstanceKey: k})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, js...)
	}
	return jobs, nil
}

// work answers one job as the scenario says (complete by default).
func work(ctx context.Context, e *host.Engine, j engine.Job, b jobBehavior) error {
	switch {
	case b.Error != "":
		return e.ThrowError(ctx, j.Key, b.Error, b.Message, b.Variables)
	case b.Fail != "":
		return e.FailJob(ctx, j.Key, max(0, j.Retries-1), b.Fail) // as a Zeebe client fails a job

	}
	return e.CompleteJob(ctx, j.Key, b.Variables)
}

// do performs one scenario step and traces it; events counts the events
// so far, to tell a message or signal nobody received.
func do(ctx context.Context, e *host.Engine, st step, tr *tracer, events func() int) error {
	before := events()
	switch {
	case st.PublishMessage != nil:
		m := st.PublishMessage
		tr.note(e.Now(), "publish message %q key %q%s", m.Name, m.CorrelationKey, vars(m.Variables))
		err := e.PublishMessage(ctx, engine.Message{Name: m.Name, CorrelationKey: m.CorrelationKey,
			Variables: m.Variables, TTL: time.Duration(m.TTLMs) * time.Millisecond})
		if err == nil && events() == before {
			unheard(tr, e.Now(), "message", m.TTLMs)
		}
		return err
	case st.BroadcastSignal != nil:
		tr.note(e.Now(), "broadcast signal %q%s", st.BroadcastSignal.Name, vars(st.BroadcastSignal.Variables))
		err := e.BroadcastSignal(ctx, st.BroadcastSignal.Name, st.BroadcastSignal.Variables)
		if err == nil && events() == before {
			unheard(tr, e.Now(), "signal", 0)
		}
		return err
	default:
		d := time.Duration(*st.AdvanceMs) * time.Millisecond
		tr.note(e.Now(), "advance time by %s to %s", isoDuration(d), e.Now().Add(d).Format(time.RFC3339))
		return e.Advance(ctx, d)
	}
}

// unheard traces a message or signal no subscription received: a message
// with a time to live waits for one, anything else is gone.
func unheard(tr *tracer, at time.Time, what string, ttlMs int64) {
	if ttlMs > 0 {
		tr.note(at, "nobody received the %s: it is kept for %s", what, isoDuration(time.Duration(ttlMs)*time.Millisecond))
		return
	}
	tr.note(at, "nobody received the %s: it is dropped", what)
}

// report returns the instance's final state and the exit code, and
// prints them unless quiet.
func report(ctx context.Context, e *host.Engine, key int64, stdout io.Writer, quiet bool) (instanceView, int, error) {
	info, err := e.Instance(ctx, key)
	if err != nil {
		return instanceView{}, 0, err
	}
	toks, err := e.Tokens(ctx, key)
	if err != nil {
		return instanceView{}, 0, err
	}
	info.Incidents = orEmpty(info.Incidents)
	view := instanceView{InstanceInfo: info, Tokens: orEmpty(toks)}
	code := exitProcess
	if info.State == engine.Completed {
		code = exitOK
	}
	if quiet {
		return view, code, nil
	}
	vars, _ := json.Marshal(info.Variables) // map keys are sorted
	fmt.Fprintf(stdout, "final state: %s\nvariables: %s\n", info.State, vars)
	if info.Message != "" {
		fmt.Fprintf(stdout, "reason: %s\n", info.Message)
	}
	for _, inc := range info.Incidents {
		fmt.Fprintf(stdout, "incident %d at %s: %s\n", inc.Key, inc.ElementID, inc.Message)
	}
	if info.State == engine.Active && len(info.Incidents) == 0 {
		for _, t := range toks {
			fmt.Fprintf(stdout, "stuck: token %d at %s waiting for %s\n", t.ID, t.ElementID, t.Waiting)
		}
	}
	return view, code, nil
}

// tracer prints events as a readable trace, one line an event: the
// virtual time since the start, which instance and token the event moved
// ("i3 t2": token 2 of instance 3, so parallel branches read apart), and
// what happened.
type tracer struct {
	out   io.Writer
	epoch time.Time
	// now is the engine clock when a result prints, so that times in it
	// read as past or pending (a job's back-off that ended is no hold).
	now time.Time
	// auto marks the jobs run completes by itself (no scenario says how).
	auto map[int64]bool
}

// stamp is virtual time since the start, in ISO 8601 as every duration
// the CLI prints: "+PT0S", "+PT1H".
func (t *tracer) stamp(at time.Time) string {
	return fmt.Sprintf("%8s", "+"+isoDuration(at.Sub(t.epoch)))
}

// note prints a line that is no engine event (a scenario step, a choice
// in sim), at the engine time at.
func (t *tracer) note(at time.Time, format string, args ...any) {
	fmt.Fprintf(t.out, "%s  %-8s  %s\n", t.stamp(at), "", fmt.Sprintf(format, args...))
}

func (t *tracer) print(ev engine.Event) {
	var what string
	switch ev.Type {
	case engine.ElementEntered:
		what = fmt.Sprintf("entered   %s (%s)", ev.ElementID, ev.ElementType)
	case engine.ElementLeft:
		what = fmt.Sprintf("left      %s", ev.ElementID)
	case engine.FlowTaken:
		what = fmt.Sprintf("flow      %s taken", ev.FlowID)
	case engine.JobCreated:
		what = fmt.Sprintf("job       %d %s created at %s", ev.JobKey, ev.JobType, ev.ElementID)
	case engine.JobCompleted:
		how := ""
		if t.auto[ev.JobKey] {
			how = " automatically"
		}
		what = fmt.Sprintf("job       %d %s completed%s%s", ev.JobKey, ev.JobType, how, vars(ev.Variables))
	case engine.JobFailed:
		what = fmt.Sprintf("job       %d %s failed: %s", ev.JobKey, ev.JobType, ev.Message)
	case engine.TimerScheduled:
		what = fmt.Sprintf("timer     at %s due %s", ev.ElementID, ev.Due.Format(time.RFC3339))
	case engine.TimerFired:
		what = fmt.Sprintf("timer     at %s fired", ev.ElementID)
	case engine.MessageSubscribed:
		what = fmt.Sprintf("message   %q key %q awaited at %s", ev.Name, ev.CorrelationKey, ev.ElementID)
	case engine.MessageCorrelated:
		what = fmt.Sprintf("message   %q key %q correlated at %s%s", ev.Name, ev.CorrelationKey, ev.ElementID, vars(ev.Variables))
	case engine.SignalSubscribed:
		what = fmt.Sprintf("signal    %q awaited at %s", ev.Name, ev.ElementID)
	case engine.SignalReceived:
		what = fmt.Sprintf("signal    %q received at %s%s", ev.Name, ev.ElementID, vars(ev.Variables))
	case engine.IncidentCreated:
		what = fmt.Sprintf("incident  %d at %s: %s", ev.IncidentKey, ev.ElementID, ev.Message)
	case engine.VariablesUpdated:
		scope := "the process"
		if ev.TokenID != 0 {
			scope = fmt.Sprintf("the scope of token %d", ev.TokenID)
		}
		what = fmt.Sprintf("variables set on %s%s", scope, vars(ev.Variables))
	default:
		what = fmt.Sprintf("%-9s %s%s", ev.Type, ev.ElementID, vars(ev.Variables))
		if ev.Message != "" {
			what += ": " + ev.Message
		}
	}
	who := fmt.Sprintf("i%d", ev.InstanceKey)
	if ev.TokenID != 0 {
		who += fmt.Sprintf(" t%d", ev.TokenID)
	}
	fmt.Fprintf(t.out, "%s  %-8s  %s\n", t.stamp(ev.Time), who, strings.TrimRight(what, " "))
}

// vars formats variables compactly with sorted keys, or "" when none.
func vars(v map[string]any) string {
	if len(v) == 0 {
		return ""
	}
	data, _ := json.Marshal(v) // map keys are sorted
	return " " + string(data)
}
