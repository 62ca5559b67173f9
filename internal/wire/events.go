package wire

import "github.com/flowtrack/flowtrack/api"

// EventRecord says what one event type records and which fields of
// api.Event it carries besides the ones every record has (seq, time,
// type, instanceKey, processId). The SDK's event union is generated from
// it, and the conformance tests check every record the engine writes
// against it.
type EventRecord struct {
	Type api.EventType
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
// api.EventTypes.
var Events = []EventRecord{
	{api.InstanceStarted, "An instance started; variables are its start variables.", nil, []string{"variables"}},
	{api.InstanceCompleted, "An instance completed: no token is left.", nil, nil},
	{api.InstanceTerminated, "An instance was terminated (cancelled, or ended by a terminate end event); message says why.", nil, []string{"message"}},
	{api.InstanceFailed, "An instance failed on a defect of flowtrack; message says what.", nil, []string{"message"}},
	{api.ElementEntered, "A token entered an element.", element, token},
	{api.ElementLeft, "A token left an element.", element, token},
	{api.ElementTerminated, "An element was interrupted (a boundary event, a termination).", element, token},
	{api.FlowTaken, "A token took a sequence flow (elementType sequenceFlow).", []string{"elementId", "elementType", "flowId"}, token},
	{api.TokenMerged, "A token arrived at a join that is still waiting for others.", element, token},
	{api.JobCreated, "A job was created for a task.", jobField, token},
	{api.JobCompleted, "A job was completed; variables are its result.", jobField, []string{"tokenId", "variables"}},
	{api.JobFailed, "An attempt at a job failed; message is the failure.", jobField, []string{"tokenId", "message"}},
	{api.JobCanceled, "A job was withdrawn (its element was interrupted or its instance ended).", jobField, token},
	{api.IncidentCreated, "An incident holds a token; message says why.", []string{"elementId", "elementType", "incidentKey"}, []string{"tokenId", "jobKey", "message"}},
	{api.IncidentResolved, "An incident was resolved.", []string{"elementId", "elementType", "incidentKey"}, []string{"tokenId", "jobKey"}},
	{api.MessageSubscribed, "A token waits for a message.", named, []string{"tokenId", "correlationKey"}},
	{api.MessageCorrelated, "A message reached a waiting token; variables are its payload.", named, []string{"tokenId", "correlationKey", "variables"}},
	{api.SignalSubscribed, "A token waits for a signal.", named, token},
	{api.SignalReceived, "A signal reached a waiting token; variables are its payload.", named, []string{"tokenId", "variables"}},
	{api.TimerScheduled, "A timer was scheduled; due is when it fires.", []string{"elementId", "elementType", "due"}, token},
	{api.TimerFired, "A timer fired.", []string{"elementId", "elementType", "due"}, token},
	{api.ErrorThrown, "A BPMN error was thrown (name is its code).", named, []string{"tokenId", "jobKey", "message"}},
	{api.EscalationThrown, "An escalation was thrown (name is its code).", named, token},
	{api.MessagePublished, "An intermediate throw or end event or a send task published a message.", named, []string{"tokenId", "correlationKey", "variables"}},
	{api.SignalBroadcast, "A throw event broadcast a signal.", named, []string{"tokenId", "variables"}},
	{api.ErrorCaught, "A boundary event or event sub-process caught a BPMN error (name is its code, message its message).", named, []string{"tokenId", "message"}},
	{api.EscalationCaught, "A boundary event or event sub-process caught an escalation.", named, token},
	{api.CallStarted, "A call activity started an instance; name is the called process.", named, []string{"tokenId", "message"}},
	{api.ConditionSatisfied, "A conditional event's condition became true.", element, token},
	{api.VariablesUpdated, "Variables were set from outside (set_variables); variables are what was set, tokenId the token naming the scope (absent: the process scope).", nil, []string{"tokenId", "variables"}},
	{api.FlowsChosen, "Flows were chosen for a token waiting at a gateway (choose_flows); message names them and what the gateway's conditions would have taken.", []string{"elementId", "elementType", "tokenId", "message"}, nil},
	{api.DecisionEvaluated, "A business rule task evaluated its decision; name is the decision id, variables holds decisionId, decisionName, decisionVersion, result and matchedRules (decisionId, ruleId, ruleIndex per rule matched).", []string{"elementId", "elementType", "name", "variables"}, token},
}

// CommonFields are the fields every event record carries.
var CommonFields = []string{"seq", "time", "type", "instanceKey", "processId"}

// WaitReason describes one reason a token waits.
type WaitReason struct {
	Reason api.WaitReason
	Doc    string
}

// WaitReasons lists why a token may wait (Token.Waiting); a moving token
// has no reason.
var WaitReasons = []WaitReason{
	{api.WaitJob, "a job (jobKey)"},
	{api.WaitMessage, "a message"},
	{api.WaitSignal, "a signal"},
	{api.WaitTimer, "a timer"},
	{api.WaitEvent, "any arm of an event-based gateway"},
	{api.WaitJoin, "the other tokens of a join"},
	{api.WaitIncident, "an incident to be resolved (incidentKey)"},
	{api.WaitScope, "its inner tokens (a sub-process or multi-instance activity)"},
	{api.WaitCall, "the instance its call activity started"},
	{api.WaitChoice, "a choice of flows at a gateway, before it routes (configure gatewayChoices, choose_flows); choice says what its conditions would take"},
}

// States lists an instance's lifecycle states.
var States = []api.State{api.Active, api.Completed, api.Terminated, api.Failed}
