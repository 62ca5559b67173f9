package api

import (
	"errors"
	"fmt"
	"strings"
)

// The sentinel errors of flowtrack, for errors.Is. Every one is here, and
// only here: the engine, its parts, the hosts and the client return them
// (wrapped with context), and the packages that name them (engine.ErrClosed,
// host.ErrUnknownInstance...) name these values. The WebAssembly module
// and the server map each to an error code (wasm/ABI.md, "Error codes"),
// which the Go host and the client map back to the same value.
var (
	// ErrUnknownProcess is returned by Start for a process id never deployed.
	ErrUnknownProcess = errors.New("unknown process")
	// ErrNoNoneStart is returned by Start for a process that only events
	// can start.
	ErrNoNoneStart = errors.New("process has no none start event")
	// ErrUnknownJob is returned by the job calls for a key that names no
	// activatable job (never created, already completed, or cancelled).
	ErrUnknownJob = errors.New("unknown job")
	// ErrUnknownInstance is returned for an instance key that names no
	// live or recently finished instance (by hosts, whose calls take keys;
	// engine.Engine.Instance reports it as false).
	ErrUnknownInstance = errors.New("unknown instance")
	// ErrUnknownIncident is returned by ResolveIncident for a key that
	// names no open incident.
	ErrUnknownIncident = errors.New("unknown incident")
	// ErrInstanceEnded is returned by calls on an instance that has ended.
	ErrInstanceEnded = errors.New("instance has ended")
	// ErrClosed is returned by every call that takes input or waits
	// (Deploy, Start, the job calls, PublishMessage, BroadcastSignal,
	// Advance, AdvanceTo, ResolveIncident, Settle) once Close has begun;
	// the input is not taken. Instance calls report ErrInstanceEnded,
	// since Close ended every instance.
	ErrClosed = errors.New("engine is closed")
	// ErrNotVirtual is returned by Advance and AdvanceTo when the engine's
	// clock is not a *clock.Virtual.
	ErrNotVirtual = errors.New("clock is not virtual")
	// ErrBadVariables is returned when variables are not JSON-compatible
	// or nest deeper than MaxVariableDepth.
	ErrBadVariables = errors.New("variables are not JSON-compatible")
	// ErrStaleActivation is returned by CompleteJob, FailJob and
	// ThrowError given a JobActivation the job no longer has: it timed out
	// and was activated again, or a failure ended it.
	ErrStaleActivation = errors.New("job activation is stale")
	// ErrCalledFromObserver is returned by Advance, AdvanceTo and Close
	// when an observer (Engine.Subscribe) calls them from its callback:
	// each waits until every observer has returned, the calling one
	// included, so it would wait forever. An observer may call Settle and
	// every other method.
	ErrCalledFromObserver = errors.New("called from an observer, which it would wait for")
	// ErrObserverDropped is returned by the unsubscribe function of an
	// observer the engine dropped because its backlog passed the limit.
	ErrObserverDropped = errors.New("observer dropped: it fell too far behind")
	// ErrUnknownScope is returned by SetVariables and ScopeVariables for a
	// scope token that names no open variable scope of the instance.
	ErrUnknownScope = errors.New("unknown variable scope")
	// ErrBadModification is returned by ModifyInstance for a change the
	// instance cannot apply (an unknown element or token, an element that
	// cannot be activated, no open scope for it); nothing is applied.
	ErrBadModification = errors.New("bad instance modification")
	// ErrBadChoice is returned by ChooseFlows for a token that waits for
	// no choice, or flows its gateway cannot take; nothing changes. A
	// choice is a modification of the instance, so it wraps
	// ErrBadModification (the BAD_MODIFICATION code of the module).
	ErrBadChoice = fmt.Errorf("%w: bad gateway choice", ErrBadModification)
	// ErrUnknownDecision is returned by EvaluateDecision for a decision no
	// deployed DMN model has (or none of the version asked for).
	ErrUnknownDecision = errors.New("flowtrack: unknown decision")
	// ErrTooManyFirings is returned by Advance and AdvanceTo when more
	// timers fall due in the span than one call processes; the clock
	// stops at the last firing and the call may be repeated.
	ErrTooManyFirings = errors.New("too many timer firings in one advance")
	// ErrBadState is wrapped by Restore's error for a document it cannot
	// read: not a state document, a newer version, or one corrupted or
	// edited into something no engine could have written.
	ErrBadState = errors.New("bad state document")
	// ErrNotSettled is returned by Checkpoint when input reached the
	// engine while the checkpoint was taken.
	ErrNotSettled = errors.New("engine is not settled")
	// ErrKeyInUse is wrapped by RestoreInstance's error when a key of the
	// document (an instance, a job, an incident) names one the engine
	// holds: the instance is there already, or the document comes from an
	// engine whose keys overlap this one's.
	ErrKeyInUse = errors.New("key already in use")
	// ErrDuplicateMessage is returned by PublishMessage for a message
	// whose MessageID matches a message still buffered.
	ErrDuplicateMessage = errors.New("a message with this id is already buffered")
	// ErrTimeOutOfRange is wrapped by the calls that reject an instant the
	// engine cannot represent (outside [clock.Min, clock.Max]): New for a
	// clock that reads one, Advance and AdvanceTo, PublishMessage for a
	// TTL that ends after clock.Max. A timer whose firing falls outside
	// the range opens an incident naming the time and the limit. It is
	// clock.ErrOutOfRange.
	ErrTimeOutOfRange = errors.New("time outside the range the engine represents")
	// ErrInvalidArgument is wrapped by every error of a call given an
	// argument it cannot take (an empty message or signal name, negative
	// retries, an empty error code, a negative duration or TTL, a negative
	// limit). Bad variables are ErrBadVariables instead. It is the
	// BAD_REQUEST code of the WebAssembly module and the SDK.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrNoEngineDocument is returned by a Store's Commit for a batch
	// without the engine-level document, which every commit of the engine
	// carries: a store refuses it rather than write a state it could not
	// load.
	ErrNoEngineDocument = errors.New("a store commit must carry the engine document")
	// ErrStoreNotEmpty is returned by Restore given WithStore with a store
	// that already holds state: New opens such a store.
	ErrStoreNotEmpty = errors.New("the store already holds an engine's state")
	// ErrNotAcknowledged is wrapped by the error of a command that the
	// engine took but did not acknowledge as durable (WithStore): its
	// commit failed (the store's error is wrapped too) or its context
	// ended while it waited for the commit.
	ErrNotAcknowledged = errors.New("command taken but not acknowledged as durable")
	// ErrStoreLost is wrapped by the error of a Store's Commit that no
	// later commit of this engine can follow: another engine took the
	// store over (ErrSuperseded), or the engine's owner can no longer be
	// sure it may write it (a cluster partition's fence). From then on the
	// engine takes no command: each is refused with ErrClosed, not taken,
	// so that its caller may give it to the store's next owner.
	ErrStoreLost = errors.New("the store is no longer this engine's to write")
	// ErrStoreDamaged is wrapped by the embedded store's (boltstore) Open
	// and Check errors for a file that is not a bbolt database or is
	// damaged; the file is left as it is.
	ErrStoreDamaged = errors.New("boltstore: not a store file, or a damaged one")
	// ErrBadRecord is returned by the JetStream store (jetstore) for a
	// commit record that does not hold together.
	ErrBadRecord = errors.New("the store's commit record does not hold together")
	// ErrSuperseded is returned by the JetStream store when another store
	// took its stream over; it wraps ErrStoreLost.
	ErrSuperseded = fmt.Errorf("the stream was taken over by another store: %w", ErrStoreLost)

	// ErrTrapped is the error of a call on a WebAssembly module that
	// trapped (stopped without returning): the module was discarded with
	// its instances.
	ErrTrapped = errors.New("flowtrack host: module trapped and was discarded")
	// ErrUnsupported is the error of an operation an engine cannot do (a
	// server's engine cannot be restored or advanced).
	ErrUnsupported = errors.New("unsupported operation")
	// ErrNoServer is returned (wrapped) by the client when no server
	// answers on the cluster's subjects.
	ErrNoServer = errors.New("no flowtrack server answers")
	// ErrTooDeep is why a variable value nested deeper than
	// MaxVariableDepth (or containing itself) is refused; such variables
	// are ErrBadVariables.
	ErrTooDeep = fmt.Errorf("nested deeper than %d levels (or contains itself)", MaxVariableDepth)
	// ErrPermissionDenied is the error of a request to a flowtrack server
	// that the caller's role does not allow, refused by the server
	// (PERMISSION_DENIED) or by the NATS server's subject permissions.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrTooLarge is the error of an answer larger than the transport
	// carries in one message (NATS' max payload) to a requester that does
	// not take it in chunks: ask for a page (limit, afterKey).
	ErrTooLarge = errors.New("answer too large for the transport; ask for a page (limit, afterKey) or use a client that takes chunked answers")
	// ErrInsecure is returned by a server (NATS or the REST API) that
	// would listen beyond loopback without TLS and authentication, unless
	// the operator said --insecure.
	ErrInsecure = errors.New("listening beyond loopback needs TLS and authentication (or --insecure)")
	// ErrBadCluster is returned for a cluster name that cannot be a NATS
	// subject token.
	ErrBadCluster = errors.New("bad cluster name")
	// ErrClusterServed is returned by a server started for a cluster
	// another server already answers for on the NATS system: two servers
	// on one store would overwrite each other's state.
	ErrClusterServed = errors.New("another flowtrack server already serves the cluster")
	// ErrNATSNotReady is returned when the embedded NATS server does not
	// accept connections in time.
	ErrNATSNotReady = errors.New("the embedded NATS server did not become ready")
	// ErrNoCluster is returned by a cluster's status for a cluster never
	// created on the NATS system.
	ErrNoCluster = errors.New("cluster: no such cluster")
	// ErrPartitions is returned by a cluster node's start for a partition
	// count that differs from the one the cluster was created with, or a
	// cluster created with none.
	ErrPartitions = errors.New("cluster: partition count")
	// ErrNodeLive is returned by a cluster node's start when a live node
	// already has its name.
	ErrNodeLive = errors.New("cluster: a live node has this name")
	// ErrReconnectBuffer is returned by a cluster node's start for a NATS
	// connection that keeps what is published while it reconnects
	// (nats.go's default): a commit buffered while the node was cut off
	// would reach the stream after its fence closed and another node took
	// the partition. Connect with nats.ReconnectBufSize(-1).
	ErrReconnectBuffer = errors.New("cluster: the NATS connection buffers while reconnecting; connect with nats.ReconnectBufSize(-1)")
	// ErrFenced is what a cluster partition's store answers to a commit
	// once the node can no longer be sure it holds the partition's lease.
	// It wraps ErrStoreLost: the partition's engine takes no command after
	// it.
	ErrFenced = fmt.Errorf("cluster: the partition's lease is lost or about to expire; the node no longer writes its store: %w", ErrStoreLost)
	// ErrNoJobQueues is returned (wrapped) by the client's HandleJobs when
	// the cluster has no job stream: no flowtrack server has run on this
	// NATS system for it.
	ErrNoJobQueues = errors.New("the cluster has no job queues")
)

// invalidArgument is an error of a call given an argument it cannot take:
// its message is a plain sentence, and errors.Is matches ErrInvalidArgument.
type invalidArgument struct{ msg string }

func (e *invalidArgument) Error() string        { return e.msg }
func (e *invalidArgument) Is(target error) bool { return target == ErrInvalidArgument }

// InvalidArgument returns an error whose message is the formatted sentence
// (no prefix) and which errors.Is matches to ErrInvalidArgument: what
// every surface returns for an argument a call cannot take.
func InvalidArgument(format string, args ...any) error {
	return &invalidArgument{fmt.Sprintf(format, args...)}
}

// DeployError reports a model that cannot be deployed. It names the first
// problem; Problems lists them all, in document order. It unwraps to its
// problems, so errors.As finds a *Problem and errors.Is matches a rule:
//
//	var de *api.DeployError
//	if errors.As(err, &de) {
//		for _, p := range de.Problems {
//			fmt.Printf("%s:%d:%d: %s: %s: %s\n", de.File, p.Line, p.Column, p.RuleID, p.ElementID, p.Rule)
//		}
//	}
//	if errors.Is(err, &api.Problem{RuleID: "EXT.127"}) { /* a message reference is missing */ }
type DeployError struct {
	// File is the name given to Deploy.
	File string
	// ProcessID and ElementID locate the first problem (either may be
	// empty for document-level problems such as malformed XML).
	ProcessID string
	ElementID string
	// Rule says what is wrong.
	Rule string
	// Problems lists every problem found, the first one included, sorted
	// by position in the document and without duplicates.
	Problems []Problem
}

// Problem is one rule a model breaks, or, among Deployment.Warnings, one
// thing that deploys but is probably not what the modeller meant.
type Problem struct {
	// RuleID names the rule: "EXT.nnn" and "REF.nn" are the extended
	// constraints and reference rules of the BPMN 2.0 constraint
	// catalogue (as BPMNspector numbers them), "XSD.<what>" a rule of the
	// BPMN schema, "FT.<what>" a rule of flowtrack's own.
	// engine/internal/model/RULES.md lists them.
	RuleID    string `json:"ruleId,omitempty"`
	ProcessID string `json:"processId,omitempty"`
	ElementID string `json:"elementId,omitempty"`
	// Line and Column locate the offending element in the document
	// (1-based; Column counts bytes); zero when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Rule says, in one line, what is wrong and how to fix it.
	Rule string `json:"rule"`
}

// Error renders the problem as "line:col: rule-id: element: message",
// leaving out the parts that are unknown.
func (p *Problem) Error() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d:%d: ", p.Line, p.Column)
	}
	if p.RuleID != "" {
		b.WriteString(p.RuleID + ": ")
	}
	if p.ElementID != "" {
		b.WriteString(p.ElementID + ": ")
	}
	b.WriteString(p.Rule)
	return b.String()
}

// Is reports whether target is a *Problem naming the same rule, so that
// errors.Is(err, &Problem{RuleID: "REF.93"}) asks whether a deploy error
// contains a problem of that rule.
func (p *Problem) Is(target error) bool {
	t, ok := target.(*Problem)
	return ok && t.RuleID != "" && t.RuleID == p.RuleID
}

// Error names the file, the first problem and how many more there are.
func (e *DeployError) Error() string {
	msg := fmt.Sprintf("deploy %s: ", e.File)
	if e.ElementID != "" {
		msg += fmt.Sprintf("element %s: ", e.ElementID)
	}
	msg += e.Rule
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Unwrap returns the problems, each a *Problem.
func (e *DeployError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i := range e.Problems {
		errs[i] = &e.Problems[i]
	}
	return errs
}

// DecisionError is a decision whose evaluation failed: its output is
// null (a decision table with hit policy UNIQUE matched two rules, an
// input out of its input values, an expression that failed...).
type DecisionError struct {
	DecisionID string
	Err        error
}

// Error names the decision and the failure.
func (e *DecisionError) Error() string {
	return fmt.Sprintf("decision %s: %v", e.DecisionID, e.Err)
}

// Unwrap returns the cause.
func (e *DecisionError) Unwrap() error { return e.Err }

// ObserverPanicError reports an observer that panicked: the record it was
// handling, what it panicked with, and its goroutine's stack. The
// observer stays subscribed; only that record is lost to it.
type ObserverPanicError struct {
	Event Event
	Value any
	Stack []byte
}

// Error names the record and the panic value.
func (e *ObserverPanicError) Error() string {
	return fmt.Sprintf("observer panicked on record %d (%s) of instance %d: %v", e.Event.Seq, e.Event.Type, e.Event.InstanceKey, e.Value)
}

// Unwrap returns the panic value if it is an error.
func (e *ObserverPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// BPMNError is the error a job handler returns to throw a BPMN error (as
// ThrowError) instead of failing the job.
type BPMNError struct {
	Code      string
	Message   string
	Variables map[string]any
}

// Error says which BPMN error this is.
func (e *BPMNError) Error() string { return fmt.Sprintf("BPMN error %s: %s", e.Code, e.Message) }
