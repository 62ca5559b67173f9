// Package runtime executes deployed process plans: one loop per instance,
// the single writer of that instance's state, and one track per token.
//
// This comment is the package's glossary, its map (for each BPMN element
// kind, the functions that implement it and the tests that hold it) and
// its lock order. Every bracketed name in it is checked against the code
// by TestDoc_NamesExist (doc_test.go), as are the files and tests it
// names, so a rename that forgets the map fails the build's tests.
//
// # Glossary
//
// The words below mean one thing each throughout the package:
//
//   - loop: an instance's loop, which owns all of the instance's state
//     (SRD-028) and applies one report at a time ([Instance.handle]). It
//     runs on a goroutine of its own ([Instance.loop]) or, with direct
//     resumption, on whoever drives the engine's run queue
//     ([Instance.drive]). An activity with BPMN loop characteristics is a
//     "loop activity" or "standard loop" ([loopSpec], [compileLoop]), never
//     just "loop".
//   - track: a token's continuation (track.go); [track.next] is the one
//     implementation of node semantics. It runs on its own goroutine
//     ([track.run]) or, with direct resumption, on the loop's
//     ([Instance.resumeDirect], [Options].Resumption).
//   - token view: the loop's own record of a token ([tokenView]): where it
//     is and why it waits. The loop never reads a live track.
//   - turn: the one track allowed to run; the others wait for theirs, and
//     outside input waits for no track to run (turns.go, [Instance.give]).
//   - report: an entry of an instance's intake, what a track reports it
//     did (moved, forked, parked, ended...) or a command from outside.
//   - notice: what the loop sends a parked track ([Instance.notify]):
//     resume, retry, merged or exit; a goroutine track is also told to
//     capture its continuation (a checkpoint) or retire (dehydration).
//   - wait state: a node a token parks at until something outside the
//     track happens: a catch event, an event-based gateway, a job, a
//     sub-process or a called instance ([waitsOnEntry]). The loop opens
//     what the token waits for in the step that records its entry
//     ([Instance.waitIn]), parking before subscribing (SRD-027 FR-5).
//   - plan: a process compiled for execution ([Compile]), one [nodePlan]
//     per node, immutable and shared by every instance of it.
//   - scope: the process or one activation of a sub-process, event
//     sub-process or multi-instance body or inner instance ([scope]):
//     variables and the tokens in it.
//   - handler: a boundary event or an event sub-process's start event
//     ([handlerSpec]).
//   - deliver: the event hub handing a message, signal or timer to its
//     subscriber ([eventhub.Receiver].Deliver), which posts a report
//     ([Instance.post]).
//   - message: a BPMN message, nothing else.
//   - settle: wait until nothing can move without outside input
//     ([Engine.Settle], [quiescence]).
//   - dehydrate: keep an idle instance only as its state document until
//     input reaches it (dehydrate.go).
//
// Where a concept lives: deploy.go (installing plans and their start
// events), plan.go (compiling them), start.go, publish.go (messages and
// signals from outside), advance.go (the clock), instances.go (the
// instance table), jobs.go and activation.go, incidents.go, joins.go,
// commands.go (requests a loop answers), loop.go (applying reports),
// turns.go and drive.go (who runs when), checkpoint.go and restore.go
// (the state document), dehydrate.go.
//
// # How a token moves
//
// [Compile] turns a process into a [Plan]; [compiler.node] compiles each
// node by kind. [Engine.Start] (or a start event's trigger) makes an
// instance, whose loop calls [Instance.begin]. A track then runs
// [track.next]: [track.step] counts the step against the budget,
// [track.execute] applies the node (a join, a throw, an end event, a loop
// activity), and [track.leave] routes out of it ([track.route],
// [selectFlows], [track.take]). The loop applies each report in
// [Instance.handle]: [Instance.moveTo] records the move and, at a wait
// state, [Instance.waitIn] opens what the token waits for. A delivery
// reaches [Instance.fired], which resumes the parked token
// ([Instance.notify]); the track goes on in [track.next].
//
// Tests: most behaviour is tested through the public engine, in package
// engine (engine/*_test.go), and by the scenarios of
// conformance/scenarios, named by what they prove and grouped by prefix;
// `go test ./conformance -run 'TestScenarios/<name>'` runs one. Tests of
// this package's internals are named below where they exist.
//
// # Map: start and end events
//
//   - None start event: [compiler.startEvent] records it as the plan's
//     start; [Engine.Start], [Engine.startAt], [Engine.launch], then
//     [Instance.begin] spawns the first token. Tests: engine/engine_test.go,
//     TestInstance_Straight (runtime_test.go); scenarios
//     `conformance/scenarios/straight_*`.
//   - Message start event: [compiler.startEvent] compiles its trigger;
//     [Engine.registerStarts] indexes it by message name at deploy;
//     [Engine.publishMessage] starts an instance per matching process
//     (once per correlation key while one lives). Tests:
//     TestMessage_StartEventOncePerKey (engine/events_test.go);
//     `conformance/scenarios/message_start_*`.
//   - Signal start event: [Engine.registerStarts], [Engine.broadcastSignal].
//     Tests: TestBudget_SignalStartsItself (engine/budget_test.go);
//     `conformance/scenarios/signal_start_*`.
//   - Timer start event: [Engine.registerStarts] schedules it on the hub;
//     each firing is [timerStart.Deliver], which starts an instance and
//     schedules the next repetition of a cycle ([timerSpec.following]).
//     Tests: TestTimer_StartEventCycleIsBounded (engine/events_test.go),
//     TestTimer_CronCycle (engine/timer_cron_test.go);
//     `conformance/scenarios/timer_start_*`.
//   - Instantiating receive task or event-based gateway (no incoming
//     flow): [Plan.compileInstantiation], then [Instance.beginAtCatch].
//     Tests: engine/instantiate_test.go;
//     `conformance/scenarios/receive_task_instantiate_*`,
//     `conformance/scenarios/event_gateway_instantiate_*`.
//   - None end event: [track.execute] reports it ended; [Instance.handle]
//     removes the token ([Instance.removeToken]); the last token gone
//     completes the scope ([Instance.completeScope]) or the instance
//     ([Instance.end], [Instance.finalize]). Without outgoing flows any
//     node ends the same way ([track.take], implicit end;
//     `conformance/scenarios/straight_implicit_end*`).
//   - Terminate end event: [track.execute] reports evTerminate;
//     [Instance.handle] ends only the sub-process ([Instance.terminateIn])
//     or the whole instance ([Instance.stopAll]). Tests:
//     TestInstance_TerminateEndEvent (runtime_test.go),
//     TestSubProcess_TerminateEndsOnlyItsScope (engine/scopes_test.go);
//     `conformance/scenarios/terminate_*`.
//   - Message or signal end event: as the throw event below ([isThrow],
//     [Instance.throw]). `conformance/scenarios/signal_end_*`.
//   - Error and escalation end events: see "Errors and escalations".
//   - Compensation and cancel end events: see "Compensation and
//     transactions".
//   - Multiple end event (several definitions): [compiler.multipleThrow],
//     [Instance.throwAll]. Tests: engine/multiple_throw_test.go.
//
// # Map: intermediate events
//
//   - Message catch event and receive task: [compiler.catchEvent] and
//     [compileCatch] (the correlation key); on entry [Instance.waitAt]
//     parks the token and [Instance.subscribe] / [Instance.subscribeSpec]
//     open a message subscription held by the instance
//     ([Instance.Deliver]); the hub's delivery reaches [Instance.fired],
//     which applies the outputs ([Instance.outputs]) and resumes the
//     token. Tests: TestInboundDelivery_T3_ParkBeforeRegister
//     (events_test.go here), engine/events_test.go;
//     `conformance/scenarios/message_*`.
//   - Signal catch event: the same path, a subscription held by the token
//     ([trackReceiver.Deliver]). Tests: TestInboundDelivery_T4_SignalFanOut
//     (engine/events_test.go);
//     `conformance/scenarios/signal_*`.
//   - Timer catch event: [compileTimer] (date, duration, cycle, cron:
//     [parseCycle], [parseCron]); [Instance.subscribeSpec] evaluates it
//     ([timerSpec.evaluate]) and [Instance.schedule] puts it on the hub.
//     Tests: TestTimer_IntermediateOnVirtualClock (engine/events_test.go);
//     `conformance/scenarios/timer_*`.
//   - Conditional catch event: [compileCatch] compiles the condition; the
//     loop evaluates every open condition after each report it handles
//     ([Instance.recheckConditions], from [Instance.safeHandle]). Tests:
//     TestConditionalEvents (engine/scopes_test.go);
//     `conformance/scenarios/conditional_*`.
//   - Parallel multiple catch event: [Instance.firedOneOfAll] records each
//     trigger until the last. `conformance/scenarios/parallel_multiple_*`.
//   - Message or signal throw event, and a send task without a job type:
//     [isThrow], [compiler.publish]; the track parks at the throw
//     ([track.execute]), the loop evaluates it ([Instance.throw],
//     [Instance.evaluate]), publishes ([Instance.throwKey],
//     [Instance.throwOne]) and hands this instance's own subscriptions
//     their event at once ([Instance.deliverOwn]). A message throw with a
//     job type is a job instead ([isMessageJob]). Tests:
//     TestMessage_ThrowCorrelatesAcrossInstances (engine/events_test.go),
//     engine/throw_to_sibling_test.go, engine/send_task_test.go;
//     `conformance/scenarios/send_task_*`.
//   - Link throw and catch events: [compiler.throwEvent] pairs them; the
//     track jumps in [track.leave]; the loop records it in
//     [Instance.linked]. Tests: engine/link_test.go;
//     `conformance/scenarios/link_*`.
//   - Multiple throw event: [compiler.multipleThrow], [Instance.throwAll].
//     Tests: engine/multiple_throw_test.go.
//
// # Map: boundary events and event sub-processes
//
//   - Boundary events: [compiler.characteristics] compiles each with
//     [compileHandler]; [Instance.openBoundaries] subscribes the message,
//     signal, timer and conditional ones while the token waits in the
//     activity, [Instance.closeBoundaries] closes them when it leaves.
//     One firing is [Instance.handlerFired]: an interrupting one ends the
//     activity ([Instance.interruptActivity], [Instance.withdraw],
//     [Instance.cancelWork]) and moves the token onto the boundary event;
//     a non-interrupting one adds a token there and re-arms
//     ([Instance.rearm]). When one occurrence reaches several handlers,
//     [Instance.interrupter] gives it to the first interrupting one.
//     Tests: TestBoundary_Matrix (engine/boundary_matrix_test.go),
//     engine/scopes_test.go, engine/interrupt_test.go;
//     `conformance/scenarios/boundary_*`.
//   - Event sub-process: [compiler.subProcess] registers its start events
//     as handlers of the enclosing scope; [Instance.openEventSubprocesses]
//     and [Instance.openEventStart] subscribe them when the scope opens;
//     [Instance.handlerFired] starts one ([Instance.startEventSubprocess]),
//     an interrupting one first ending the scope's work
//     ([Instance.interruptScope]). Error and escalation starts are found
//     by [Instance.catch]. Tests: TestEventSubProcess_Starts,
//     TestEventSubProcess_InsideSubProcess (engine/scopes_test.go),
//     engine/interrupt_test.go; `conformance/scenarios/event_subprocess_*`.
//
// # Map: errors and escalations
//
//   - Error or escalation end or throw event: [raiseOf] compiles it; the
//     track parks ([track.execute], evRaise) and [Instance.raiseAt] raises
//     it with [Instance.raise]: [Instance.catch] tries the handlers scope
//     by scope outwards ([Instance.handlersAt], [pick],
//     [handlerSpec.catches]); a called instance hands it to its caller
//     ([Instance.raiseToCaller], [Instance.postRaise],
//     [Instance.raisedInTree]); nobody catching it is [Instance.unhandled]
//     (an error holds an incident, an escalation goes on).
//   - BPMN error thrown by a job worker: [Engine.ThrowError],
//     [Instance.throwError], then [Instance.raise].
//   - Tests: TestError_ThrownByJobCaughtByBoundary,
//     TestError_EndEventPropagatesThroughTwoLevels,
//     TestError_UncaughtOpensIncident,
//     TestEscalation_NonInterruptingAndUncaught (engine/scopes_test.go),
//     engine/call_test.go; `conformance/scenarios/error_*`,
//     `conformance/scenarios/escalation_*`.
//
// # Map: gateways
//
//   - Exclusive gateway: [selectFlows] (flows.go) takes the first flow
//     whose condition holds, else the default, else [track.route] parks
//     on an incident. With gateway choices on, the token stops before it
//     routes ([choosable], [Instance.choose]; choice.go). Tests:
//     TestSelectFlows (flows_test.go), TestInstance_ExclusiveGateway
//     (runtime_test.go), engine/choice_test.go;
//     `conformance/scenarios/exclusive_*`.
//   - Parallel gateway: [compiler.parallelGateway]; it forks in
//     [track.take] (one move, one fork report) and joins in
//     [Instance.arrive] and [Instance.fire], the merged tokens told to exit
//     ([Instance.merge]). Tests: TestInstance_ParallelForkJoin
//     (runtime_test.go); `conformance/scenarios/parallel_*`.
//   - Inclusive gateway: diverging, [selectFlows]; converging,
//     [compiler.inclusiveGateway] computes what can still reach each
//     incoming flow ([upstream], [reachBack]); [Instance.tryInclusive]
//     fires once [inclusiveWaits] says no live token can still make a
//     difference, from the positions [joinPositions] reads, and
//     [Instance.recheckInclusive] re-asks after tokens move
//     ([Instance.afterMove]). Tests: joins_test.go (TestInclusiveWaits_Spec,
//     TestInclusiveJoin_Diamond), engine/inclusive_join_test.go;
//     `conformance/scenarios/inclusive_*`.
//   - Complex gateway: [compiler.complexGateway] (the activation
//     condition); [Instance.tryComplex] fires when it holds, aborts when it
//     no longer can, and waits for reset. Tests: complex_test.go
//     (TestComplexGateway_FiresOnRuleThenAbsorbsTheRest).
//   - Event-based gateway: [compiler.eventBasedGateway] gathers the arms'
//     catches into the gateway's own; the token waits at the gateway
//     ([Instance.waitAt]) and the first event moves it onto its arm
//     ([Instance.fired], [flowBetween]; SRD-024). Tests: TestEventGateway_ArmsWin,
//     TestEventGateway_4_Race (engine/events_test.go);
//     `conformance/scenarios/event_gateway_*`.
//   - Implicit forks and merges at activities and events: [selectFlows]
//     for any other node. `conformance/scenarios/implicit_*`.
//
// # Map: tasks and activities
//
//   - Service, user, send, business rule and script task with a job type
//     (and a task of those kinds without one, typed by its kind):
//     [compiler.jobTask], [compileJob]; on entry [Instance.createJob]
//     parks the token on a job ([Engine.addJob]). Workers activate
//     ([Engine.ActivateJobs], [Instance.activateJob]), complete
//     ([Engine.CompleteJob], [Instance.completeJob], [Instance.outputs]),
//     fail ([Engine.FailJob], [Instance.failJob]) or throw an error
//     ([Engine.ThrowError]). Tests: runtime_test.go (TestJobs_CompleteMergesVariables,
//     TestJobs_FailRetriesThenIncident), engine/activation_test.go,
//     engine/jobs_test.go; `conformance/scenarios/job_*`.
//   - User task: as a job; its assignment and schedule properties become
//     job headers ([compileUserTask], [nodePlan.jobHeaders],
//     [headerSpec.value]). Tests: TestHeaderSpec_Value (usertask_test.go);
//     `conformance/scenarios/job_user_task_*`,
//     `conformance/scenarios/user_task_*`.
//   - Send task: without a job type, a message throw (above); with one, a
//     job.
//   - Receive task: a message catch (above).
//   - Manual task and plain task: pass-through, [track.execute] then
//     [track.leave].
//   - Script task with a zeebe:script expression: [compiler.scriptTask],
//     [compileScript]; the loop evaluates it as the token leaves
//     ([Instance.throw], [Instance.evaluate]). Without one, a job
//     (TestEngine_ScriptTaskBecomesScriptJob in engine/engine_test.go).
//     `conformance/scenarios/script_task_*`.
//   - Business rule task calling a DMN decision: [compiler.decisionTask]
//     checks the call; the loop finds the decision ([Engine.FindDecision])
//     and evaluates it ([Instance.evaluateDecision],
//     [DecisionVersion.Evaluate], [decisionResult]) from
//     [Instance.evaluate]. Decisions are deployed by
//     [Engine.CompileDecisions] and [Engine.InstallDecisions]. Tests:
//     engine/decisions_test.go; `conformance/scenarios/business_rule_*`.
//   - Call activity: [compiler.callActivity]; [Instance.enterCall] starts
//     the child, [Instance.callEnded] applies its end, [Instance.cancelChild]
//     cancels it with the token. Tests: engine/call_test.go;
//     `conformance/scenarios/call_activity_*`.
//   - Sub-process: [compiler.subProcess] finds its start event;
//     [Instance.enterScope] and [Instance.openScope] open its scope (input
//     mappings, boundary events, event sub-processes);
//     [Instance.completeScope] hands its outputs back. Tests:
//     TestSubProcess_ScopeAndVariables (engine/scopes_test.go);
//     `conformance/scenarios/subprocess_*`.
//   - Ad-hoc sub-process: [compileAdHoc]; [Instance.activateAdHoc] on
//     entry, [Instance.adHocChildDone], [Instance.adHocCut] and
//     [Instance.adHocDone] for its completion condition, and
//     [Instance.ActivateAdHoc] to activate elements while it runs. Tests:
//     engine/adhoc_test.go, engine/adhoc_example_test.go;
//     `conformance/scenarios/adhoc_*`.
//   - Start and completion quantities: [compileStartQuantity] makes the
//     activity a join, [Instance.tryQuantity] starts it, [track.started]
//     runs it; [completionTokens]. Tests: engine/quantity_test.go;
//     `conformance/scenarios/start_quantity_*`.
//
// # Map: loops, multi-instance, compensation and transactions
//
//   - Standard loop: [compileLoop]; the track repeats the activity
//     ([track.iterate], [track.iteration]), parking on each iteration's
//     job, sub-process or called instance, which the loop sets up
//     ([Instance.waitIn] from the evJob report). Tests: TestStandardLoop
//     (engine/scopes_test.go); `conformance/scenarios/standard_loop_*`.
//   - Multi-instance activity: [compileMulti]; [Instance.enterMulti] opens
//     the body and [Instance.startInstance] each inner instance
//     (parallel, or one after another); [Instance.completing] collects an
//     inner instance's output and evaluates the completion condition,
//     [Instance.cancelInstances] ends the rest, [Instance.instanceDone] and
//     [Instance.completeBody] finish the body. Its behavior events:
//     [compileBehavior], [Instance.throwBehavior]. Tests:
//     engine/multi_test.go, engine/multi_behavior_test.go,
//     engine/multi_large_test.go; `conformance/scenarios/multi_instance_*`.
//   - Compensation: [compileCompensation]; completing a compensable
//     activity leaves a record ([Instance.completedActivity],
//     [Instance.keepCompensable]); a compensation throw or end event
//     ([Instance.throwCompensation]) runs the handlers of the records,
//     latest first ([takeRecords], [Instance.newRun], [Instance.advance],
//     [Instance.finishRun]). Tests: engine/compensation_test.go;
//     `conformance/scenarios/compensation_*`.
//   - Transaction and cancel end event: [Instance.cancelTransaction]
//     compensates the transaction's work ([runningRecords]) and leaves by
//     its cancel boundary event. Tests: TestTransaction_ErrorIsNotCancel,
//     TestTransaction_CancelFromNestedSubProcess
//     (engine/compensation_test.go); `conformance/scenarios/transaction_*`.
//
// Elements the runtime refuses at deploy are listed in [supported] and
// [multipleThrowSupported].
//
// # Lock order
//
// An instance's state needs no lock: its loop alone reads and writes it.
// The locks guard what is shared between loops and callers. They are
// listed outermost first; while holding one, code takes only locks listed
// as under it, which keeps the order acyclic. Channels are not locks, but
// the rule that keeps them safe is the same: nothing sends to a loop's
// intake or waits for a loop while holding a lock the loop may take
// ([Instance.post] never blocks).
//
//   - [Engine.restoreMu] (restore_instance.go): one [Engine.RestoreInstance]
//     at a time. Held across the whole restore, including [Engine.adopt],
//     which with direct resumption drives the restored instances on this
//     goroutine; so every lock below may be taken under it. Nothing below
//     takes it.
//   - [Engine.advanceMu] (advance.go): one [Engine.AdvanceTo] at a time. Held
//     across the clock's firings and the [Engine.Settle] after each, so the
//     deliveries of the timers (Instance.mailMu, the quiescence count)
//     and, with direct resumption, the instances driven by them run under
//     it. Settle waits for observers too, so an observer must never wait
//     for it: AdvanceTo refuses an observer's call before taking it (see
//     "Hazards" below).
//   - [Engine.driveMu] (drive.go): the driver of the run queue with direct
//     resumption. Only ever tried ([Engine.drive] uses TryLock): a caller
//     that finds it held leaves its instance queued for the driver, so it
//     never waits on it. Held while instances run, so everything an
//     instance loop takes is taken under it: Engine.mu, Engine.runMu,
//     Engine.dirtyMu, Engine.logMu, Instance.mu, Instance.mailMu (its own,
//     and another instance's when it posts to it), subscriber.mu, the
//     quiescence lock, the hub's lock and the virtual clock's.
//   - [Instance.mailMu] (instance.go): the mailbox (mail, mailClosed), the
//     process scope's pointer (root) and dehydration's dry and waking.
//     Under it: Engine.mu only, in [Instance.rehydrate] when a document
//     cannot be read (the instance's jobs and incidents leave the
//     indexes). [Instance.post] counts the quiescence before and after
//     it, not under it.
//   - [Engine.mu] (engine.go): plans, decisions, the live instances and the
//     finished ring, the job and incident indexes, the start-event tables
//     and closed. Under it: [Instance.mu], which [Engine.countFinished] reads
//     for [Engine.finish]; the hub's lock, taken by [Engine.Close],
//     [Engine.Restore] (unsubscribing timer starts), [Engine.registerStarts]
//     (from [Engine.Install] and [restorer.deploy]) and
//     [timerStart.Deliver] (scheduling a cycle's next firing); through
//     the hub, the virtual clock's. Never held while calling an instance
//     (a post or a command) or an observer.
//   - [subscriber.mu] (observe.go): an observer's queue and whether it is
//     parked in a Settle. Under it: the quiescence lock ([subscriber.push]
//     counts the record, [subscriber.settle] parks and unparks it).
//     Released by [subscriber.drop] before it takes the observer off the
//     list.
//   - [Engine.runMu] (drive.go): the run queue. Held only to queue or
//     dequeue ([Engine.schedule], [Engine.dequeue]); takes nothing.
//   - [Engine.dirtyMu] (instance.go, checkpoint.go): the instances changed
//     since the last CheckpointDirty. Takes nothing.
//   - [Engine.logMu] (eventlog.go): the event log. [Engine.DrainEvents]
//     expands records under it, reading only immutable data; takes
//     nothing.
//   - [Instance.mu] (instance.go): the lifecycle state ([Instance.State],
//     [Instance.finalize]). Takes nothing.
//   - [quiescence.mu] (quiescence.go): the channels Settle waits on and
//     the parked observers' records ([quiescence.change],
//     [quiescence.park], [quiescence.waitFor]). Takes nothing.
//   - [Engine.observerGoroutines] (observe.go), a sync.Map: the observers'
//     goroutines, written as each starts and ends ([Engine.run]), read by
//     [Engine.callingObserver]. Takes nothing.
//   - The hub's lock, [eventhub.Hub.mu] (engine/internal/eventhub/hub.go): subscriptions, the signal index,
//     the message buffer and the timer queue. Under it: the virtual
//     clock's lock ([eventhub.Hub.Schedule] and [eventhub.Hub.Arm] call
//     AfterFunc and Now; [eventhub.Hub.Unsubscribe] stops a timer). The
//     hub never holds it while it calls a [eventhub.Receiver] (it collects
//     deliveries under the lock and sends them after, [eventhub.Hub.send])
//     or the function set by [eventhub.Hub.SetOnFire]; so receivers
//     ([Instance.Deliver], [trackReceiver.Deliver], [timerStart.Deliver])
//     run without it and may take Engine.mu or post.
//   - The virtual clock's lock, [clock.Virtual.mu] (engine/clock/clock.go):
//     the pending calls.
//     Takes nothing; the functions it fires run without it.
//   - The FEEL type cache, [expr.parsedTypes] (an RWMutex in
//     engine/internal/expr/dmn.go). Takes nothing.
//
// [Plan.names] runs [indexPlan] once per plan under a sync.Once; it takes
// no lock.
//
// Above all of these sit the locks of the packages that call the engine:
//
//   - package engine: the store's commit gate, [engine.durability.gate]
//     (engine/commit.go), an RWMutex held for reading by every command
//     while it gives the engine input (so everything above may be taken
//     under it, and with direct resumption instances are driven under
//     it), and for writing by a commit while it takes its snapshot
//     ([Engine.CheckpointDirty]: Engine.mu, Engine.dirtyMu,
//     Instance.mailMu, the hub's lock). AdvanceTo holds it only around
//     each step that fires timers or moves the clock
//     ([Engine.AdvanceToHeld]), never while it settles: a command holds
//     it across nothing that waits for an observer. Under the gate, its
//     mutex [engine.durability.mu], a leaf.
//   - package server: the server's RWMutex (server/server.go), held across
//     one operation, so over everything in the engine.
//   - package cluster: a partition's per-message stripes (cluster/messages.go)
//     and its deployment lock (cluster/deployments.go), each held across
//     calls into the engine and requests to NATS.
//
// None of them is taken from inside the engine: observers, the one way
// the engine calls out, run on goroutines of their own with no engine lock
// held (the cluster's observer takes a leaf lock of its own, the server's
// takes none).
//
// # Hazards
//
// Settle waits for observers ([quiescence.wait]: records being delivered
// count), and observers may call the engine. An observer can therefore
// never wait for anything that waits for it; each way it could is closed:
//
//   - An observer that calls [Engine.Settle] (or what settles: Dehydrate,
//     Checkpoint): the records of the calling observer, the one it
//     handles and those queued behind it, wait for it to return. The
//     engine starts every observer's goroutine, so it knows the caller
//     ([Engine.callingObserver]); that observer is parked while it waits
//     ([subscriber.settle]): its records count apart
//     ([quiescence.park]), and it waits for everything but the records
//     of parked observers ([quiescence.waitQuiet]), so two observers
//     that settle at once do not wait for each other. An outside Settle
//     waits for parked records too: it still returns only once every
//     observer has returned from every record.
//   - An observer that calls [Engine.AdvanceTo] or [Engine.Close]: both
//     wait for every observer to return, by contract (AdvanceTo so that an
//     observer's command lands before the next timer fires, Close for the
//     observers' goroutines to end), and AdvanceTo may also meet another
//     AdvanceTo holding [Engine.advanceMu] while it waits for the caller.
//     No order of the two is sound, so both return ErrCalledFromObserver
//     at once and change nothing (package engine's Close checks before
//     its store's last commit, [Engine.RefuseObserver]).
//   - With a store, an observer that gives a command while AdvanceTo
//     runs waits for that command's commit, which needs the commit gate
//     for writing. AdvanceTo holds the gate for reading only while it
//     fires timers and moves the clock, and settles (waits for observers)
//     without it ([Engine.AdvanceToHeld]), so the commit goes through
//     between two firings, the command lands before the next firing, and
//     the snapshot is of a settled engine at the due time reached.
//
// Tests: TestEngine_ObserverSettles, TestEngine_ObserversSettleTogether,
// TestEngine_ObserverCannotAdvanceOrClose,
// TestEngine_ObserverSettlesDuringAdvance (engine/observer_calls_test.go),
// TestWithStore_ObserverCommandDuringAdvance (engine/commit_test.go).
package runtime
