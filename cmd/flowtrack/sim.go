package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// simSynopsis is sim's synopsis, for its --help.
const simSynopsis = "model.bpmn [more.bpmn...] [--with FILE]... [--process ID] [--vars JSON]"

// simCmd is the interactive mode: it starts an instance on a virtual
// clock and, until the instance ends or the input does, shows the waiting
// tokens and numbered next actions, reads one choice a line from in, does
// it and prints the trace of what it made happen. A choice is an action's
// number, optionally followed by a JSON object of variables (a job's
// result, a message's or signal's payload), or v (variables), h
// (history), t (tokens), q (quit). Bad input prints an error and the
// prompt again.
func simCmd(ctx context.Context, args []string, in io.Reader, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	processID := fs.String("process", "", "process `ID` to start (default: the model's first process)")
	varsJSON := fs.String("vars", "", "start variables as a JSON object")
	var with fileList
	fs.Var(&with, "with", "also deploy model `FILE` (repeatable), e.g. the processes the model's call activities call")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 0, err
	}
	if len(pos) == 0 {
		return 0, usageError{"sim needs a model file"}
	}
	var start map[string]any
	if *varsJSON != "" {
		if err := unmarshalExact([]byte(*varsJSON), &start); err != nil {
			return 0, usageError{fmt.Sprintf("--vars: not a JSON object: %v", err)}
		}
	}
	e, err := host.New(ctx)
	if err != nil {
		return 0, err
	}
	defer e.Close(ctx)
	process := *processID
	for _, f := range append(pos, with...) {
		d, err := deploy(ctx, e, f)
		if err != nil {
			return 0, err
		}
		for _, p := range d.Processes {
			if process == "" {
				process = p.ID
			}
			fmt.Fprintf(stdout, "deployed %s: process %s\n", f, p.ID)
		}
	}
	if process == "" {
		return 0, fmt.Errorf("%w: %s has no executable process", errInput, pos[0])
	}
	s := &sim{e: e, out: stdout, tr: &tracer{out: stdout, epoch: e.Now()}, fam: &family{}}
	e.Subscribe(s.observe)
	key, err := e.Start(ctx, process, start)
	if err != nil {
		if errors.Is(err, engine.ErrUnknownProcess) || errors.Is(err, engine.ErrNoNoneStart) {
			return 0, usageError{err.Error()}
		}
		return 0, err
	}
	s.key = key
	lines := bufio.NewScanner(in)
	for {
		info, err := e.Instance(ctx, key)
		if err != nil {
			return 0, err
		}
		if info.State != engine.Active {
			break
		}
		acts, err := s.actions(ctx)
		if err != nil {
			return 0, err
		}
		if err := s.show(ctx, acts); err != nil {
			return 0, err
		}
		fmt.Fprint(stdout, "> ")
		if !lines.Scan() {
			fmt.Fprintln(stdout, "\nend of input")
			break
		}
		quit, err := s.choose(ctx, acts, strings.TrimSpace(lines.Text()))
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stdout, "error:", ue.msg)
			continue
		}
		if err != nil {
			return 0, err
		}
		if quit {
			break
		}
	}
	if err := lines.Err(); err != nil {
		return 0, fmt.Errorf("%w: reading the input: %v", errInput, err)
	}
	_, code, err := report(ctx, e, key, stdout, false)
	return code, err
}

// sim is an interactive session's state.
type sim struct {
	e   *host.Engine
	out io.Writer
	tr  *tracer
	fam *family
	key int64
	// subs are the messages and signals the family's tokens await, in the
	// order they were subscribed, as the events told.
	subs []awaited
	// received counts messages and signals received, to tell one nobody
	// received.
	received int
}

// awaited is a message or signal a token awaits.
type awaited struct {
	instance      int64
	token         int
	element       string
	signal        bool
	name, corrKey string
}

func (s *sim) observe(ev engine.Event) {
	s.fam.observe(ev)
	s.tr.print(ev)
	gone := func(a awaited) bool { return a.instance == ev.InstanceKey && a.token == ev.TokenID }
	switch ev.Type {
	case engine.MessageSubscribed, engine.SignalSubscribed:
		if s.fam.keys[ev.InstanceKey] {
			s.subs = append(s.subs, awaited{instance: ev.InstanceKey, token: ev.TokenID, element: ev.ElementID,
				signal: ev.Type == engine.SignalSubscribed, name: ev.Name, corrKey: ev.CorrelationKey})
		}
	case engine.MessageCorrelated, engine.SignalReceived, engine.TimerFired:
		// The token's wait is over: its other catches (an event-based
		// gateway's) are gone with it.
		s.received++
		s.subs = slices.DeleteFunc(s.subs, gone)
	case engine.ElementLeft:
		s.subs = slices.DeleteFunc(s.subs, func(a awaited) bool { return gone(a) && a.element == ev.ElementID })
	case engine.InstanceCompleted, engine.InstanceTerminated:
		s.subs = slices.DeleteFunc(s.subs, func(a awaited) bool { return a.instance == ev.InstanceKey })
	}
}

// simAction is one numbered choice.
type simAction struct {
	text string
	do   func(ctx context.Context, vars map[string]any) error
	// sends names what a message or signal action sends ("" otherwise),
	// to trace it when nobody received it.
	sends string
}

// actions lists what can happen next: complete each open job, publish
// each awaited message, broadcast each awaited signal, fire the next
// timer.
func (s *sim) actions(ctx context.Context) ([]simAction, error) {
	jobs, err := s.fam.jobs(ctx, s.e)
	if err != nil {
		return nil, err
	}
	var acts []simAction
	for _, j := range jobs {
		acts = append(acts, simAction{fmt.Sprintf("complete job %d %s at %s", j.Key, j.Type, j.ElementID),
			func(ctx context.Context, v map[string]any) error { return s.e.CompleteJob(ctx, j.Key, v) }, ""})
	}
	seen := map[string]bool{}
	for _, a := range s.subs {
		id := fmt.Sprintf("%t %q %q", a.signal, a.name, a.corrKey)
		if seen[id] {
			continue
		}
		seen[id] = true
		if a.signal {
			acts = append(acts, simAction{fmt.Sprintf("broadcast signal %q (awaited at %s)", a.name, a.element),
				func(ctx context.Context, v map[string]any) error {
					return s.e.BroadcastSignal(ctx, a.name, v)
				}, "signal"})
			continue
		}
		acts = append(acts, simAction{fmt.Sprintf("publish message %q key %q (awaited at %s)", a.name, a.corrKey, a.element),
			func(ctx context.Context, v map[string]any) error {
				return s.e.PublishMessage(ctx, engine.Message{Name: a.name, CorrelationKey: a.corrKey, Variables: v})
			}, "message"})
	}
	if due, ok := s.e.NextDeadline(); ok {
		acts = append(acts, simAction{fmt.Sprintf("fire the next timer: advance time to %s (%s)", due.Format(time.RFC3339), strings.TrimSpace(s.tr.stamp(due))),
			func(ctx context.Context, _ map[string]any) error { return s.e.AdvanceTo(ctx, due) }, ""})
	}
	return acts, nil
}

// show prints the waiting tokens and the numbered actions.
func (s *sim) show(ctx context.Context, acts []simAction) error {
	for _, k := range slices.Sorted(maps.Keys(s.fam.keys)) {
		toks, err := s.e.Tokens(ctx, k)
		if err != nil {
			return err
		}
		for _, t := range toks {
			fmt.Fprintf(s.out, "waiting: i%d t%d at %s for %s\n", k, t.ID, t.ElementID, t.Waiting)
		}
	}
	for i, a := range acts {
		fmt.Fprintf(s.out, "  %d) %s\n", i+1, a.text)
	}
	if len(acts) == 0 {
		fmt.Fprintln(s.out, "  (nothing can happen: the instance is stuck)")
	}
	fmt.Fprintln(s.out, "  v) variables  h) history  t) tokens  q) quit")
	return nil
}

// choose does the chosen action; bad input is a usageError the prompt
// prints. It reports whether the user quit.
func (s *sim) choose(ctx context.Context, acts []simAction, line string) (bool, error) {
	choice, rest, _ := strings.Cut(line, " ")
	switch choice {
	case "":
		return false, nil
	case "q", "quit":
		return true, nil
	case "v":
		info, err := s.e.Instance(ctx, s.key)
		if err != nil {
			return false, err
		}
		data, _ := json.Marshal(info.Variables) // map keys are sorted
		fmt.Fprintf(s.out, "variables: %s\n", data)
		return false, nil
	case "h":
		evs, err := s.e.History(ctx, s.key)
		if err != nil {
			return false, err
		}
		history(evs).text(s.out, s.tr)
		return false, nil
	case "t":
		return false, nil // show lists the tokens before the prompt
	}
	n, err := strconv.Atoi(choice)
	if err != nil || n < 1 || n > len(acts) {
		return false, usageError{fmt.Sprintf("%q is no choice: give a number from 1 to %d, or v, h, t, q", choice, len(acts))}
	}
	var v map[string]any
	if rest = strings.TrimSpace(rest); rest != "" {
		if err := unmarshalExact([]byte(rest), &v); err != nil {
			return false, usageError{fmt.Sprintf("variables: not a JSON object: %v", err)}
		}
	}
	before := s.received
	a := acts[n-1]
	s.tr.note(s.e.Now(), "%s%s", a.text, vars(v))
	if err := a.do(ctx, v); err != nil {
		// The engine refused it (e.g. a job that is gone): say so and
		// prompt again.
		return false, usageError{err.Error()}
	}
	if a.sends != "" && s.received == before {
		unheard(s.tr, s.e.Now(), a.sends, 0)
	}
	return false, nil
}
