package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowtrack/flowtrack/api"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// Checkpoint returns the module engine's state document (engine/STATE.md):
// the same document engine.Engine.Checkpoint writes, which
// engine.Restore, Restore here, and the SDK read.
func (e *Engine) Checkpoint(ctx context.Context) ([]byte, error) {
	var out wire.StateResult
	if err := e.call(ctx, "checkpoint", struct{}{}, &out); err != nil {
		return nil, err
	}
	return out.State, nil
}

// Restore replaces the module's engine by one in the state of a
// checkpoint document, written by this or any other host. Its instances go
// on where their tokens were parked; the clock reads the document's time.
// Observers stay subscribed and see what happens from here on.
//
// # Errors
//
// An error wrapping engine.ErrBadState for a document the engine cannot
// read, JSON or not (the engine is then left as it was); ErrBadRequest for
// one that exceeds the request limit.
func (e *Engine) Restore(ctx context.Context, state []byte) error {
	if !json.Valid(state) {
		return fmt.Errorf("restore: %w: not JSON", api.ErrBadState)
	}
	return e.call(ctx, "restore", wire.RestoreRequest{State: state}, nil)
}

// CheckpointInstance returns the state document of one live instance of
// the module's engine with its whole call tree: the document
// engine.Engine.CheckpointInstance writes, which RestoreInstance here or
// on any other host adds to a running engine.
//
// # Errors
//
// An error wrapping engine.ErrUnknownInstance for a key that names no
// live instance.
func (e *Engine) CheckpointInstance(ctx context.Context, key int64) ([]byte, error) {
	var out wire.StateResult
	if err := e.call(ctx, "checkpoint", wire.CheckpointRequest{InstanceKey: key}, &out); err != nil {
		return nil, err
	}
	return out.State, nil
}

// RestoreInstance adds the instance of a one-instance document
// (CheckpointInstance, here or on any other host) to the module's engine,
// as engine.Engine.RestoreInstance does: it goes on where it stands, its
// key kept, its job and incident keys given afresh.
//
// # Errors
//
// An error wrapping engine.ErrBadState for a document the engine cannot
// take, or engine.ErrKeyInUse when the engine holds the instance's key
// already; nothing is added then.
func (e *Engine) RestoreInstance(ctx context.Context, state []byte) error {
	if !json.Valid(state) {
		return fmt.Errorf("restore instance: %w: not JSON", api.ErrBadState)
	}
	return e.call(ctx, "restore", wire.RestoreRequest{State: state, Instance: true}, nil)
}
