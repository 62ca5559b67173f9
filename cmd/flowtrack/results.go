package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/host"
)

// The results of the state commands: what --json prints as "result",
// and how each prints itself readably.

// texter is a result that prints itself readably.
type texter interface{ text(w io.Writer, tr *tracer) }

type deployed engine.Deployment

func (d deployed) text(w io.Writer, _ *tracer) {
	for _, p := range d.Warnings {
		fmt.Fprintln(w, problem(d.Name, p, "warning: "))
	}
	for _, p := range d.Processes {
		fmt.Fprintf(w, "deployed %s: process %s (version %d)\n", d.Name, p.ID, p.Version)
	}
}

// deployedList is what deploy of several files answers, one a file.
type deployedList []deployed

func (l deployedList) text(w io.Writer, tr *tracer) {
	for _, d := range l {
		d.text(w, tr)
	}
}

type started struct {
	InstanceKey int64        `json:"instanceKey"`
	ProcessID   string       `json:"processId"`
	State       engine.State `json:"state"`
}

func (s started) text(w io.Writer, _ *tracer) {
	fmt.Fprintf(w, "instance %d of %s: %s\n", s.InstanceKey, s.ProcessID, s.State)
}

type jobList []engine.Job

func (l jobList) text(w io.Writer, tr *tracer) {
	for _, j := range l {
		fmt.Fprintf(w, "job %d %s at %s (instance %d, retries %d%s)%s\n", j.Key, j.Type, j.ElementID, j.InstanceKey, j.Retries, jobHold(j, tr.now), vars(j.Variables))
	}
	if len(l) == 0 {
		fmt.Fprintln(w, "no jobs")
	}
}

// jobHold says who holds a job and until when, or when its back-off ends,
// as of now (the engine clock): an activation whose deadline passed holds
// the job no longer, and a back-off that ended is not shown.
func jobHold(j engine.Job, now time.Time) string {
	switch {
	case j.Activation != 0 && j.Deadline != nil && now.Before(*j.Deadline):
		return fmt.Sprintf(", activation %d by %s until %s", j.Activation, j.Worker, j.Deadline.Format(time.RFC3339))
	case j.Activation != 0 && j.Deadline != nil:
		return fmt.Sprintf(", activation %d by %s timed out at %s", j.Activation, j.Worker, j.Deadline.Format(time.RFC3339))
	case j.RetryAt != nil && now.Before(*j.RetryAt):
		return ", back-off until " + j.RetryAt.Format(time.RFC3339)
	}
	return ""
}

type incidentList []engine.Incident

func (l incidentList) text(w io.Writer, _ *tracer) {
	for _, inc := range l {
		fmt.Fprintf(w, "incident %d at %s (instance %d): %s\n", inc.Key, inc.ElementID, inc.InstanceKey, inc.Message)
	}
	if len(l) == 0 {
		fmt.Fprintln(w, "no incidents")
	}
}

type nowResult struct {
	Now time.Time `json:"now"`
}

func (n nowResult) text(w io.Writer, tr *tracer) {
	fmt.Fprintf(w, "%s  now %s\n", tr.stamp(n.Now), n.Now.Format(time.RFC3339Nano))
}

type tokenList []engine.Token

func (l tokenList) text(w io.Writer, _ *tracer) {
	for _, t := range l {
		fmt.Fprintf(w, "token %d at %s", t.ID, t.ElementID)
		if t.Waiting != "" {
			fmt.Fprintf(w, " waiting for %s", t.Waiting)
		}
		if t.JobKey != 0 {
			fmt.Fprintf(w, " (job %d)", t.JobKey)
		}
		if t.IncidentKey != 0 {
			fmt.Fprintf(w, " (incident %d)", t.IncidentKey)
		}
		fmt.Fprintln(w)
	}
	if len(l) == 0 {
		fmt.Fprintln(w, "no tokens")
	}
}

type history []engine.Event

func (h history) text(_ io.Writer, tr *tracer) {
	for _, ev := range h {
		tr.print(ev)
	}
}

type variables map[string]any

func (v variables) text(w io.Writer, _ *tracer) {
	data, _ := json.Marshal(map[string]any(v)) // map keys are sorted
	fmt.Fprintf(w, "%s\n", data)
}

// instanceView is what instance shows: the instance and its tokens.
type instanceView struct {
	*host.InstanceInfo
	Tokens []engine.Token `json:"tokens"`
}

func (v instanceView) text(w io.Writer, tr *tracer) {
	fmt.Fprintf(w, "instance %d of %s: %s\n", v.Key, v.ProcessID, v.State)
	if v.Message != "" {
		fmt.Fprintf(w, "reason: %s\n", v.Message)
	}
	data, _ := json.Marshal(v.Variables) // map keys are sorted
	fmt.Fprintf(w, "variables: %s\n", data)
	incidentList(v.Incidents).text(w, tr)
	tokenList(v.Tokens).text(w, tr)
}

// instanceSummary is one line of instances.
type instanceSummary struct {
	Key       int64        `json:"key"`
	ProcessID string       `json:"processId"`
	State     engine.State `json:"state"`
	// Parent is the calling instance of one a call activity started.
	Parent int64 `json:"parent,omitempty"`
}

type instanceList []instanceSummary

func (l instanceList) text(w io.Writer, _ *tracer) {
	for _, i := range l {
		fmt.Fprintf(w, "instance %d of %s: %s\n", i.Key, i.ProcessID, i.State)
	}
	if len(l) == 0 {
		fmt.Fprintln(w, "no instances")
	}
}

type metrics engine.Metrics

func (m metrics) text(w io.Writer, _ *tracer) {
	o := m.Open
	fmt.Fprintf(w, "open: %d instances, %d jobs, %d incidents, %d message and %d signal subscriptions, %d timers\n",
		o.Instances, o.Jobs, o.Incidents, o.MessageSubscriptions, o.SignalSubscriptions, o.Timers)
	types := make([]string, 0, len(m.JobsByType))
	for t := range m.JobsByType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		fmt.Fprintf(w, "jobs %s: %d\n", t, m.JobsByType[t])
	}
	if j := m.OldestJob; j != nil {
		fmt.Fprintf(w, "oldest job %d %s at %s (instance %d), waiting %s\n", j.Key, j.Type, j.ElementID, j.InstanceKey,
			isoDuration(time.Duration(j.WaitingMs*float64(time.Millisecond))))
	}
	for _, p := range m.Processes {
		fmt.Fprintf(w, "process %s: %d active, %d completed, %d terminated, %d failed", p.ProcessID, p.Active, p.Completed, p.Terminated, p.Failed)
		if p.Completed > 0 {
			fmt.Fprintf(w, "; latency mean %s, max %s", isoDuration(time.Duration(p.MeanLatencyMs*float64(time.Millisecond))),
				isoDuration(time.Duration(p.MaxLatencyMs*float64(time.Millisecond))))
		}
		fmt.Fprintln(w)
	}
}

type definitionList []engine.Definition

func (l definitionList) text(w io.Writer, _ *tracer) {
	for _, d := range l {
		latest := ""
		if d.Latest {
			latest = ", latest"
		}
		fmt.Fprintf(w, "process %s version %d (key %d, from %s%s)\n", d.ProcessID, d.Version, d.Key, d.Resource, latest)
	}
	if len(l) == 0 {
		fmt.Fprintln(w, "no processes deployed")
	}
}

// definitionXML is a deployed document; the text output is the document.
type definitionXML struct {
	Name string `json:"name"`
	XML  string `json:"xml"`
}

func (d definitionXML) text(w io.Writer, _ *tracer) { fmt.Fprint(w, d.XML) }
