package engine

import (
	"context"
	"fmt"

	"github.com/flowtrack/flowtrack/engine/internal/runtime"
)

// RestoreInstance adds to the engine, while it runs, the instance of a
// document CheckpointInstance wrote (on this engine or another, on any
// host), with the whole call tree it belongs to, its tokens parked where
// they were: it goes on here as it would have there. It returns the
// handle of the tree's top instance (the others: Engine.Instance).
//
// The document's deployments are matched to the engine's by name and
// source: one deployed with exactly that source is used as is, another is
// deployed (a new version, as Deploy would make it). Keys stay what the
// document says, since outside parties hold them (a worker its job key,
// the user the instance key), and the engine's key counter moves past
// the document's so that no later key takes one of them; subscription
// ids, internal to the engine, are given afresh in their old order.
// Timers keep their absolute due times, on this engine's clock: on the
// real clock one that fell due fires at once. A message buffered here
// before the restore does not correlate with it (as with Restore);
// messages published from now on do.
//
// With WithStore it is durable when it returns, as a command is.
//
// # Errors
//
// An error wrapping ErrBadState for a document that is not a state
// document, is a whole engine's (it holds finished instances, buffered
// messages or timer start events: use Restore), has no live instance, or
// does not hold together: a called instance whose caller it lacks, a key
// above its lastKey or past 2^53 - 1 (or outside the engine's key space,
// WithKeySpace), a lastKey that leaves the engine no room for keys,
// instances that call each other, one key naming two things (a job key in
// two instances), a token waiting for nothing the document holds or
// where no token waits (an end event's subscription, a join it never
// reached), more tokens in an instance than Limits.MaxTokens allows, a
// timer outside the clock's range; one wrapping ErrKeyInUse when an
// instance, job or incident key of it is in use here; a *DeployError when
// a deployment of it does not deploy here; ErrClosed; ErrNotAcknowledged
// (see WithStore). The document is checked whole before anything changes:
// on an error but ErrNotAcknowledged no instance is added and the key
// counter has not moved; a deployment of the document that was deployed
// before the error stays, as if deployed by Deploy.
func (e *Engine) RestoreInstance(ctx context.Context, state []byte) (*Instance, error) {
	doc, err := decodeState(state)
	if err != nil {
		return nil, fmt.Errorf("restore instance: %w", err)
	}
	var top *runtime.Instance
	err = e.durably(ctx, func() error {
		plans, err := e.plansOf(doc.Deploys)
		if err != nil {
			return err
		}
		top, err = e.rt.RestoreInstance(doc, plans)
		return err
	})
	if top == nil {
		return nil, fmt.Errorf("restore instance: %w", err)
	}
	if err != nil {
		err = fmt.Errorf("restore instance: %w", err)
	}
	return e.instanceOf(top), err // with ErrNotAcknowledged, it is restored (WithStore)
}

// plansOf returns the plans of the engine that the processes of deploys
// run on, by the document's process keys: a deployment with the same
// name and source is used, else the source is deployed; documents the
// document says were deployed together are deployed together here too,
// so that a business rule task's binding "deployment" finds its
// decisions.
func (e *Engine) plansOf(deploys []runtime.Deploy) (map[int64]*runtime.Plan, error) {
	plans := map[int64]*runtime.Plan{}
	together := map[int64]int64{} // the document's deployment -> this engine's
	for _, d := range deploys {
		if len(d.Processes) == 0 && e.rt.HasDeployed(d.Name, []byte(d.Source)) {
			continue // a DMN model deployed here already
		}
		got := e.rt.DeployedSource(d.Name, []byte(d.Source))
		if got == nil {
			id := together[d.Deployment]
			if id == 0 {
				id = e.rt.NewDeployment()
				if d.Deployment > 0 {
					together[d.Deployment] = id
				}
			}
			if _, err := e.deployAs(d.Name, []byte(d.Source), id); err != nil {
				return nil, err
			}
			got = e.rt.DeployedSource(d.Name, []byte(d.Source))
		}
		if len(got) != len(d.Processes) {
			return nil, fmt.Errorf("%w: deployment %s: the source has %d executable processes, the document lists %d", ErrBadState, d.Name, len(got), len(d.Processes))
		}
		for i, p := range d.Processes {
			if got[i].Process.ID != p.ID {
				return nil, fmt.Errorf("%w: deployment %s: process %d is %q in the source, %q in the document", ErrBadState, d.Name, i+1, got[i].Process.ID, p.ID)
			}
			plans[p.Key] = got[i]
		}
	}
	return plans, nil
}
