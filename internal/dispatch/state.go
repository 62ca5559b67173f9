package dispatch

import (
	"context"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// maxStateDepth bounds how deeply a restore request nests: variables sit
// deepest in a job's, below request, state, instances, instance, jobs, job
// entry and job: six levels more than in an ordinary request.
const maxStateDepth = maxRequestDepth + 6

// opCheckpoint writes the engine's state (ABI.md, "checkpoint").
func opCheckpoint(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.CheckpointRequest
	if err := decode("checkpoint", data, &req); err != nil {
		return nil, err
	}
	var doc []byte
	var err error
	if req.InstanceKey != 0 {
		doc, err = m.eng.CheckpointInstance(ctx, req.InstanceKey)
	} else {
		doc, err = m.eng.Checkpoint(ctx)
	}
	if err != nil {
		return nil, err
	}
	return wire.StateResult{State: doc}, nil
}

// opRestore replaces the module's engine by one restored from a state
// document, on a virtual clock reading the document's time, with the
// module's limits; or, with instance, adds the instance of a one-instance
// document to it. A document it cannot read leaves the engine as it was.
// A served module refuses both with UNSUPPORTED.
func opRestore(ctx context.Context, m *Module, data []byte) (any, error) {
	var req wire.RestoreRequest
	if err := decodeNested("restore", data, &req, maxStateDepth); err != nil {
		return nil, err
	}
	if m.served {
		// Documented as unsupported on a served engine, whole or instance:
		// its state lives in its store, and an instance document is
		// hand-editable state no remote caller may push into it.
		return nil, &callError{Code: wire.CodeUnsupported, Message: "restore: the served engine's state lives in its store: it cannot be replaced, nor instances added from a document"}
	}
	if req.Instance {
		if len(req.State) == 0 {
			return nil, badRequest("restore: field \"state\" is required")
		}
		_, err := m.eng.RestoreInstance(ctx, req.State)
		return nil, err
	}
	if len(req.State) == 0 {
		return nil, badRequest("restore: field \"state\" is required")
	}
	c := clock.NewVirtual(clock.Epoch)
	eng, err := engine.Restore(req.State, append([]engine.Option{engine.WithClock(c), engine.WithEventLog()}, m.settings.options()...)...)
	if err != nil {
		return nil, err
	}
	_ = m.eng.Close(context.Background()) // what it ran is replaced, not cancelled: its events are not reported
	m.clock, m.eng, m.used = c, eng, true
	m.eng.SetEventLog(m.events)
	m.eng.SetGatewayChoices(m.choices) // the module's setting, not the document's
	return nil, nil
}
