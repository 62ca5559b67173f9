package wire

import "github.com/flowtrack/flowtrack/engine"

// EventRecord says what one event type records and which fields of
// engine.Event it carries besides the ones every record has (seq, time,
// type, instanceKey, processId). The SDK's event union is generated from
// it, and the conformance tests check every record the engine writes
// against it.
type EventRecord struct {
	Type engine.EventType
	Doc  string
	// Fields are always set; Optional ones may be absent (a zero value is
	// omitted: token 0, an empty correlation key, no variables).
	Fields, Optional []string
}

// Field groups shared by many event types.
var (
	element  = []string{"elementId", "elementType"}
	jobField = []string{"elementId", "elementType", "jobKey", "jobType"}
	named    = []string{"elementId", "elementType", "name"}
	token    = []string{"tokenId"}
)

// Events lists every event type the engine writes, in the order of
// engine.EventTypes.
var Events = []EventRecord{
	{engine.InstanceStarted, "An instance started; variables are its start variables.", nil, []string{"variables"}},
	{engine.InstanceCompleted, "An instance completed: no token is left.", nil, nil},
	{engine.InstanceTerminated, "An instance was terminated (cancelled, or ended by a terminate end event); message says why.", nil, []string{"message"}},
	{engine.InstanceFailed, "An instance failed on a defect of flowtrack; message says what.", nil, []string{"message"}},
	{engine.ElementEntered, "A token entered an element.", element, token},
	{engine.ElementLeft, "A token left an element.", element, token},
	{engine.ElementTerminated, "An element was interrupted (a boundary event, a termination).", element, token},
	{engine.FlowTaken, "A token took a sequence flow (elementType sequenceFlow).", []string{"elementId", "elementType", "flowId"}, token},
	{engine.TokenMerged, "A token arrived at a join that is still waiting for others.", element, token},
	{engine.JobCreated, "A job was created for a task.", jobField, token},
	{engine.JobCompleted, "A job was completed; variables are its result.", jobField, []string{"tokenId", "variables"}},
	{engine.JobFailed, "An attempt at a job failed; message is the failure.", jobField, []string{"tokenId", "message"}},
	{engine.JobCanceled, "A job was withdrawn (its element was interrupted or its instance ended).", jobField, token},
	{engine.IncidentCreated, "An incident holds a token; message says why.", []string{"elementId", "elementType", "incidentKey"}, []string{"tokenId", "jobKey", "message"}},
	{engine.IncidentResolved, "An incident was resolved.", []string{"elementId", "elementType", "incidentKey"}, []string{"tokenId", "jobKey"}},
	{engine.MessageSubscribed, "A token waits for a message.", named, []string{"tokenId", "correlationKey"}},
	{engine.MessageCorrelated, "A message reached a waiting token; variables are its payload.", named, []string{"tokenId", "correlationKey", "variables"}},
	{engine.SignalSubscribed, "A token waits for a signal.", named, token},
	{engine.SignalReceived, "A signal reached a waiting token; variables are its payload.", named, []string{"tokenId", "variables"}},
	{engine.TimerScheduled, "A timer was scheduled; due is when it fires.", []string{"elementId", "elementType", "due"}, token},
	{engine.TimerFired, "A timer fired.", []string{"elementId", "elementType", "due"}, token},
	{engine.ErrorThrown, "A BPMN error was thrown (name is its code).", named, []string{"tokenId", "jobKey", "message"}},
	{engine.EscalationThrown, "An escalation was thrown (name is its code).", named, token},
	{engine.MessagePublished, "An intermediate throw or end event or a send task published a message.", named, []string{"tokenId", "correlationKey", "variables"}},
	{engine.SignalBroadcast, "A throw event broadcast a signal.", named, []string{"tokenId", "variables"}},
	{engine.ErrorCaught, "A boundary event or event sub-process caught a BPMN error (name is its code, message its message).", named, []string{"tokenId", "message"}},
	{engine.EscalationCaught, "A boundary event or event sub-process caught an escalation.", named, token},
	{engine.CallStarted, "A call activity started an instance; name is the called process.", named, []string{"tokenId", "message"}},
	{engine.ConditionSatisfied, "A conditional event's condition became true.", element, token},
	{engine.VariablesUpdated, "Variables were set from outside (set_variables); variables are what was set, tokenId the token naming the scope (absent: the process scope).", nil, []string{"tokenId", "variables"}},
	{engine.FlowsChosen, "Flows were chosen for a token waiting at a gateway (choose_flows); message names them and what the gateway's conditions would have taken.", []string{"elementId", "elementType", "tokenId", "message"}, nil},
	{engine.DecisionEvaluated, "A business rule task evaluated its decision; name is the decision id, variables holds decisionId, decisionName, decisionVersion, result and matchedRules (decisionId, ruleId, ruleIndex per rule matched).", []string{"elementId", "elementType", "name", "variables"}, token},
}

// CommonFields are the fields every event record carries.
var CommonFields = []string{"seq", "time", "type", "instanceKey", "processId"}

// WaitReason describes one reason a token waits.
type WaitReason struct {
	Reason engine.WaitReason
	Doc    string
}

// WaitReasons lists why a token may wait (Token.Waiting); a moving token
// has no reason.
var WaitReasons = []WaitReason{
	{engine.WaitJob, "a job (jobKey)"},
	{engine.WaitMessage, "a message"},
	{engine.WaitSignal, "a signal"},
	{engine.WaitTimer, "a timer"},
	{engine.WaitEvent, "any arm of an event-based gateway"},
	{engine.WaitJoin, "the other tokens of a join"},
	{engine.WaitIncident, "an incident to be resolved (incidentKey)"},
	{engine.WaitScope, "its inner tokens (a sub-process or multi-instance activity)"},
	{engine.WaitCall, "the instance its call activity started"},
	{engine.WaitChoice, "a choice of flows at a gateway, before it routes (configure gatewayChoices, choose_flows); choice says what its conditions would take"},
}

// States lists an instance's lifecycle states.
var States = []engine.State{engine.Active, engine.Completed, engine.Terminated, engine.Failed}
