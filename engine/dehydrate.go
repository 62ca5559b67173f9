package engine

import (
	"context"
	"fmt"
	"time"
)

// WithDehydration turns on the dehydration of idle instances: an instance
// whose tokens all wait for outside input (a job, a message, a signal, a
// timer, a called instance, an incident) for idle of wall-clock time is
// kept as its compact state (its state document, engine/STATE.md), with
// no goroutine and no loop state, until something reaches it. With idle
// zero it is dehydrated as soon as it is idle. Off by default.
//
// Whatever reaches a dehydrated instance rehydrates it first, on the
// spot: a job completion or failure, a correlated message, a signal, a
// timer, a cancel, a called instance ending, and reads (Tokens, History,
// Incidents). Variables, State and checkpoints read it without waking it. Histories, events, keys, ordering and Settle are the same as
// without dehydration.
//
// # Why off by default
//
// Dehydrating costs a checkpoint of the instance (tens of microseconds)
// and each input to a dehydrated instance a restore of it first; it pays
// when many instances wait long (a parked instance costs about 1 KB dry
// against several natively). An engine that holds few instances, or whose
// instances wait briefly, gains nothing, so the choice is the user's.
// Natively, idle > 0 runs one goroutine that looks for idle instances
// every idle/2 until Close.
func WithDehydration(idle time.Duration) Option {
	return func(cfg *config) { cfg.dehydrate, cfg.dehydrateAfter = true, idle }
}

// Dehydrate settles the engine and dehydrates every live instance not
// dehydrated yet, whatever WithDehydration says, and returns how many it
// dehydrated. An instance stays dehydrated until input reaches it; with
// WithDehydration it is dehydrated again when it is next idle.
//
// With WithStore, a dehydrated instance's document is kept in the store
// only, not in memory, once a commit has written it: Dehydrate returns
// after that commit, so the instances it dehydrated then cost only their
// handle in memory (a delivery reads the document back from the store).
//
// # Errors
//
// ErrClosed after Close; the context's error if ctx ends first; with a
// store, an error wrapping ErrNotAcknowledged when the commit failed (the
// instances are dehydrated, their documents still in memory).
func (e *Engine) Dehydrate(ctx context.Context) (int, error) {
	n, err := e.rt.Dehydrate(ctx)
	if err != nil {
		return n, fmt.Errorf("dehydrate: %w", err)
	}
	if err := e.committedDry(ctx, n); err != nil {
		return n, err
	}
	return n, nil
}

// Dehydrate waits until the instance is idle, then dehydrates it (see
// WithDehydration, and Engine.Dehydrate for a store). A dehydrated
// instance returns nil at once.
//
// # Errors
//
// ErrInstanceEnded when the instance ends first; the context's error if
// ctx ends first; with a store, an error wrapping ErrNotAcknowledged when
// the commit failed.
func (i *Instance) Dehydrate(ctx context.Context) error {
	if err := i.rt.Dehydrate(ctx); err != nil {
		return err
	}
	return i.e.committedDry(ctx, 1)
}

// committedDry waits, with a store, for a commit that writes the n
// instances just dehydrated, after which their documents live in the
// store only.
func (e *Engine) committedDry(ctx context.Context, n int) error {
	if e.dur == nil || n == 0 {
		return nil
	}
	if err := e.dur.await(ctx); err != nil {
		return fmt.Errorf("dehydrate: %w: %w", ErrNotAcknowledged, err)
	}
	return nil
}

// Dehydrated reports whether the instance is dehydrated now.
func (i *Instance) Dehydrated() bool { return i.rt.Dehydrated() }
