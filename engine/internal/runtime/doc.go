// Package runtime executes deployed process plans: one loop per instance,
// the single writer of that instance's state, and one track per token.
//
// The words below mean one thing each throughout the package:
//
//   - loop: an instance's loop, which owns all of the instance's state
//     (SRD-028) and applies one report at a time (Instance.handle). An
//     activity with BPMN loop characteristics is a "loop activity" or
//     "standard loop" (loopSpec, compileLoop), never just "loop".
//   - track: a token's continuation (track.go); track.next is the one
//     implementation of node semantics. It runs on its own goroutine or,
//     with direct resumption, on the loop's (Options.Resumption).
//   - report: an entry of an instance's intake, what a track reports it
//     did (moved, forked, parked, ended...) or a command from outside.
//   - notice: what the loop sends a parked track (Instance.notify):
//     resume, retry, merged or exit.
//   - deliver: the event hub handing a message, signal or timer to its
//     subscriber (eventhub.Receiver.Deliver), which posts a report.
//   - message: a BPMN message, nothing else.
//
// Where a concept lives: deploy.go (plans and start events), start.go,
// publish.go (messages and signals from outside), advance.go (the clock),
// instances.go (the instance table), jobs.go, incidents.go, joins.go,
// commands.go (requests a loop answers), loop.go (applying reports),
// checkpoint.go and restore.go (the state document), dehydrate.go.
package runtime
