package dispatch

import (
	"context"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// publishMessage and broadcastSignal deliver inbound events to the engine;
// publishMessage returns the instances the message reached.
func publishMessage(ctx context.Context, eng *engine.Engine, req wire.MessageRequest) ([]*engine.Instance, error) {
	return eng.PublishMessageReached(ctx, engine.Message{Name: req.Name, CorrelationKey: req.CorrelationKey,
		Variables: req.Variables, TTL: time.Duration(req.TTLMs * float64(time.Millisecond)), MessageID: req.MessageID})
}

func broadcastSignal(ctx context.Context, eng *engine.Engine, req wire.SignalRequest) error {
	return eng.BroadcastSignal(ctx, req.Name, req.Variables)
}
