package main

import (
	"context"

	"github.com/flowtrack/flowtrack/engine"
)

// publishMessage and broadcastSignal deliver inbound events. The engine of
// this build has no message or signal delivery yet, so both answer
// UNSUPPORTED; they become engine.PublishMessage and engine.BroadcastSignal
// calls when the engine offers them.
func publishMessage(_ context.Context, _ *engine.Engine, req messageRequest) error {
	return &callError{Code: codeUnsupported, Message: "publish_message: message " + req.Name + ": this engine build cannot deliver messages yet"}
}

func broadcastSignal(_ context.Context, _ *engine.Engine, req signalRequest) error {
	return &callError{Code: codeUnsupported, Message: "broadcast_signal: signal " + req.Name + ": this engine build cannot deliver signals yet"}
}
