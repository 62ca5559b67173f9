package workload

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
)

// Remote drives a flowtrack server or cluster over NATS through package
// client, as an application would: every call is a request to whichever
// node answers, and the instances run on the server's clock.
//
// A remote call returns before the instance has moved on, so the target
// follows the engine's events (one subscription on every instance's
// subject): AwaitWaiting returns at the instance's first message
// subscription, Finish at its end. It reads only the event's type, from
// the raw JSON, so that following costs the driver little.
type Remote struct {
	C     *client.Client
	nc    *nats.Conn
	sub   *nats.Subscription
	mu    sync.Mutex
	insts map[int64]*remoteInst
}

// remoteInst is what the events said of one instance so far.
type remoteInst struct {
	subscribed, ended chan struct{}
	end               string // the event that ended it
}

// NewRemote returns a target on the server or cluster named cluster
// reachable through nc.
func NewRemote(nc *nats.Conn, cluster string) (*Remote, error) {
	r := &Remote{C: client.New(nc, cluster), nc: nc, insts: map[int64]*remoteInst{}}
	sub, err := nc.Subscribe(wire.AllEventsSubject(cluster), r.event)
	if err != nil {
		return nil, fmt.Errorf("follow the events of %q: %w", cluster, err)
	}
	// Every instance's events, from every partition, through one
	// subscription: lift the client library's default pending limits.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	r.sub = sub
	return r, nil
}

// Event types the target reacts to, as they appear in an event's JSON.
var (
	evSubscribed = []byte(`"` + string(engine.MessageSubscribed) + `"`)
	evCompleted  = []byte(`"` + string(engine.InstanceCompleted) + `"`)
	evTerminated = []byte(`"` + string(engine.InstanceTerminated) + `"`)
	evFailed     = []byte(`"` + string(engine.InstanceFailed) + `"`)
)

func (r *Remote) event(m *nats.Msg) {
	var end string
	subscribed := false
	switch {
	case bytes.Contains(m.Data, evSubscribed):
		subscribed = true
	case bytes.Contains(m.Data, evCompleted):
		end = string(engine.InstanceCompleted)
	case bytes.Contains(m.Data, evTerminated):
		end = string(engine.InstanceTerminated)
	case bytes.Contains(m.Data, evFailed):
		end = string(engine.InstanceFailed)
	default:
		return
	}
	key, err := strconv.ParseInt(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:], 10, 64)
	if err != nil {
		return
	}
	in := r.inst(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case subscribed:
		select {
		case <-in.subscribed:
		default:
			close(in.subscribed)
		}
	case in.end == "":
		in.end = end
		close(in.ended)
	}
}

// inst returns what is known of instance key, a new record if nothing:
// its events may come before its start's answer.
func (r *Remote) inst(key int64) *remoteInst {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := r.insts[key]
	if in == nil {
		in = &remoteInst{subscribed: make(chan struct{}), ended: make(chan struct{})}
		r.insts[key] = in
	}
	return in
}

// Deploy implements Target.
func (r *Remote) Deploy(name string, xml []byte) error {
	_, err := r.C.Deploy(context.Background(), name, xml)
	return err
}

// Start implements Target.
func (r *Remote) Start(_ int, process string, vars map[string]any) (Ref, error) {
	key, err := r.C.Start(context.Background(), process, vars)
	if err != nil {
		return nil, err
	}
	r.inst(key)
	return key, nil
}

// remoteWait bounds a wait for an instance's event.
const remoteWait = time.Minute

// Finish implements Target: it waits for the instance's end event and
// fails unless it completed.
func (r *Remote) Finish(ref Ref) error {
	key := ref.(int64)
	in := r.inst(key)
	select {
	case <-in.ended:
	case <-time.After(remoteWait):
		return fmt.Errorf("instance %d: no end within %s", key, remoteWait)
	}
	r.mu.Lock()
	delete(r.insts, key)
	end := in.end
	r.mu.Unlock()
	if end != string(engine.InstanceCompleted) {
		return fmt.Errorf("instance %d: %s: %w", key, end, ErrNotCompleted)
	}
	return nil
}

// AwaitWaiting implements Session for reason "message", the one the
// events tell.
func (r *Remote) AwaitWaiting(ref Ref, reason string) error {
	if reason != "message" {
		return fmt.Errorf("remote target: waiting for a %s is not followed", reason)
	}
	key := ref.(int64)
	in := r.inst(key)
	select {
	case <-in.subscribed:
		return nil
	case <-in.ended:
		return fmt.Errorf("instance %d ended (%s) before waiting for a message", key, in.end)
	case <-time.After(remoteWait):
		return fmt.Errorf("instance %d: no message subscription within %s", key, remoteWait)
	}
}

// Publish implements Session.
func (r *Remote) Publish(_ Ref, name, key string) error {
	return r.C.PublishMessage(context.Background(), engine.Message{Name: name, CorrelationKey: key})
}

// CompleteJob implements Session: not followed remotely.
func (r *Remote) CompleteJob(Ref, string) error {
	return fmt.Errorf("remote target: jobs are not followed")
}

// Advance implements Target: a remote engine runs on its own clock.
func (r *Remote) Advance(time.Duration) error {
	return fmt.Errorf("remote target: %w", client.ErrUnsupported)
}

// Close implements Target: it stops following the events. The server
// or cluster is the caller's.
func (r *Remote) Close() error {
	return r.sub.Unsubscribe()
}
