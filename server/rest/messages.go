package rest

import (
	"net/http"

	"github.com/flowtrack/flowtrack/internal/wire"
)

func (a *API) publishMessage(r *http.Request) (int, any, error) {
	var req MessagePublicationRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, badRequest("field \"name\" is required")
	}
	if req.TimeToLive < 0 {
		return 0, nil, badRequest("field \"timeToLive\" must not be negative, not %d", req.TimeToLive)
	}
	if err := a.call(r.Context(), "publish_message", wire.MessageRequest{Name: req.Name, CorrelationKey: req.CorrelationKey,
		Variables: req.Variables, TTLMs: float64(req.TimeToLive), MessageID: req.MessageID}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, MessagePublicationResult{TenantID: defaultTenant, MessageKey: key(a.keys.next())}, nil
}

// correlateMessage serves POST /v2/messages/correlation: a message with
// no time to live, answered with the first instance it reached (one it
// was correlated to, else one it started); 404 when it reached none.
func (a *API) correlateMessage(r *http.Request) (int, any, error) {
	var req MessagePublicationRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, badRequest("field \"name\" is required")
	}
	var res wire.MessageResult
	if err := a.call(r.Context(), "publish_message", wire.MessageRequest{Name: req.Name, CorrelationKey: req.CorrelationKey,
		Variables: req.Variables}, &res); err != nil {
		return 0, nil, err
	}
	if len(res.Instances) == 0 {
		return 0, nil, notFound("no process instance waits for message %q with correlation key %q, and none starts with it", req.Name, req.CorrelationKey)
	}
	return http.StatusOK, MessageCorrelationResult{TenantID: defaultTenant, MessageKey: key(a.keys.next()),
		ProcessInstanceKey: key(res.Instances[0].InstanceKey)}, nil
}

func (a *API) broadcastSignal(r *http.Request) (int, any, error) {
	var req SignalBroadcastRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	if req.SignalName == "" {
		return 0, nil, badRequest("field \"signalName\" is required")
	}
	if err := a.call(r.Context(), "broadcast_signal", wire.SignalRequest{Name: req.SignalName, Variables: req.Variables}, nil); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, SignalBroadcastResult{TenantID: defaultTenant, SignalKey: key(a.keys.next())}, nil
}
