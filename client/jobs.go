package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/worker"

	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoJobQueues is returned (wrapped) by HandleJobs when the cluster has
// no job stream: no flowtrack server has run on this NATS system for it.
var ErrNoJobQueues = api.ErrNoJobQueues

// pullExpiry is how long one pull request of a worker waits on the
// stream. A pull outstanding when the stream's leader dies is lost with
// it, and the worker pulls again only once it expires: with nats.go's 30 s
// default, jobs stopped for 30 s after a kill of the job stream's leader
// (TestCluster_JobStreamLeaderKilled: every instance completed 30.3 s
// after the kill, 4.9 s with 5 s pulls and the server's 3 s publish
// attempts).
const pullExpiry = 5 * time.Second

// HandleJobs runs a job worker for jobType on the server's job queue until
// ctx ends, as engine.Engine.HandleJobs does on an engine: up to
// o.Concurrency jobs at once, each handler's result completing, failing
// (one retry fewer, o.RetryBackoff) or throwing from the job with its
// activation, then the job's message acked.
//
// It creates or updates the type's durable consumer (wire.JobConsumer)
// with AckWait o.Timeout, which the server takes as the activation
// timeout of the type's jobs; workers of one type share the consumer and
// so the queue (the last one started sets the timeout). A message whose
// activation has timed out by the time it arrives is acked and skipped:
// the server has published the job again. o.Worker and o.PollInterval are
// not used: the server names the activation, and the queue pushes.
//
// It returns nil when ctx ends, after the running handlers return, or an
// error that is not about one job: ErrNoJobQueues, or the consumer's.
func (c *Client) HandleJobs(ctx context.Context, jobType string, handler worker.Handler, o worker.Options) error {
	if handler == nil {
		return fmt.Errorf("handle jobs of type %q: the handler is nil: %w", jobType, api.ErrInvalidArgument)
	}
	if jobType == "" {
		return fmt.Errorf("handle jobs: the job type is empty: %w", api.ErrInvalidArgument)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = worker.DefaultJobTimeout
	}
	cons, err := c.jobConsumer(ctx, jobType, o)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("handle jobs of type %q: cluster %q: %w", jobType, c.cluster, ErrNoJobQueues)
	}
	if err != nil {
		return fmt.Errorf("handle jobs of type %q: consumer %s: %w", jobType, wire.JobConsumer(jobType), err)
	}
	// A missed heartbeat (the NATS server the connection was on went
	// away) is not reported: the iterator pulls again once reconnected.
	// A pull expires after pullExpiry: a pull parked at a consumer leader
	// that died is noticed by its missing heartbeats (half the expiry)
	// and made again within seconds, rather than after nats.go's default
	// 30 s (TestServe_SecureCluster kills the job stream's leader).
	msgs, err := cons.Messages(jetstream.PullMaxMessages(o.Concurrency), jetstream.PullExpiry(pullExpiry),
		jetstream.WithMessagesErrOnMissingHeartbeat(false))
	if err != nil {
		return fmt.Errorf("handle jobs of type %q: %w", jobType, err)
	}
	defer msgs.Stop()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	free := make(chan struct{}, o.Concurrency)
	for range o.Concurrency {
		free <- struct{}{}
	}
	for {
		select {
		case <-free:
		case <-ctx.Done():
			return nil
		}
		m, err := msgs.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("handle jobs of type %q: %w", jobType, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { free <- struct{}{} }()
			c.workMessage(ctx, m, handler, o)
		}()
	}
}

// jobConsumer creates (or updates) the consumer of jobType's queue. A
// client user of a secured server (server.NetConfig) reaches the
// consumers under wire.JobAPIPrefix; any other connection through the
// JetStream API itself, where the prefixed subjects have no responder.
func (c *Client) jobConsumer(ctx context.Context, jobType string, o worker.Options) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       wire.JobConsumer(jobType),
		Description:   "flowtrack workers of job type " + jobType,
		FilterSubject: wire.JobSubject(c.cluster, jobType),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       o.Timeout,
		// Once no worker has pulled for this long, JetStream removes the
		// consumer and the server stops activating the type's jobs.
		InactiveThreshold: wire.JobConsumerIdle(o.Timeout),
	}
	prefix := wire.JobAPIPrefix(c.cluster)
	js, err := jetstream.NewWithAPIPrefix(c.nc, prefix)
	if err != nil {
		return nil, err
	}
	var cons jetstream.Consumer
	err = c.guard(ctx, prefix+".", func(ctx context.Context) error {
		cons, err = js.CreateOrUpdateConsumer(ctx, wire.JobStream(c.cluster), cfg)
		return err
	})
	if !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders) {
		return cons, err
	}
	if js, err = jetstream.New(c.nc); err != nil {
		return nil, err
	}
	return js.CreateOrUpdateConsumer(ctx, wire.JobStream(c.cluster), cfg)
}

// workMessage works the job of one queue message and acks it once the
// server has answered its result. A message the server did not answer
// for (unreachable) stays unacked: JetStream delivers it again after its
// AckWait, when the server has published a new activation anyway.
func (c *Client) workMessage(ctx context.Context, m jetstream.Msg, handler worker.Handler, o worker.Options) {
	var j api.Job
	if err := json.Unmarshal(m.Data(), &j); err != nil || j.Key == 0 {
		_ = m.Term() // not a job: nobody can work it
		return
	}
	if j.Deadline != nil && !time.Now().Before(*j.Deadline) {
		_ = m.Ack() // timed out before it came: the job is queued again
		return
	}
	err := worker.Work(ctx, c, j, handler, o)
	var we *wire.Error
	if err == nil || errors.As(err, &we) {
		_ = m.Ack()
	}
}
