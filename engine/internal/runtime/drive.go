package runtime

// With direct resumption an instance has no goroutine of its own: whoever
// makes it runnable (a start, a post to its mailbox, a command) puts it in
// the engine's run queue, and the engine drives the queue on the caller's
// goroutine until nothing can move, so that a call into the engine returns
// settled. One goroutine drives at a time (driveMu): a caller that finds
// another driving leaves its instance to that driver, which looks at the
// queue again after it lets go. The engine's own code that makes an
// instance runnable while driving (a message thrown to another instance, a
// called instance started) only queues it: drive never nests.
//
// No code of the engine's user runs on the driver: observers are called on
// goroutines of their own (observe.go), so a blocking call into the engine
// from an observer waits for the driver like any other caller, and the
// driver can never wait for itself.

// schedule puts inst in the run queue, if it is not there yet, and drives
// the queue unless another goroutine does.
func (e *Engine) schedule(inst *Instance) {
	e.runMu.Lock()
	if !inst.queued {
		inst.queued = true
		e.runq = append(e.runq, inst)
	}
	e.runMu.Unlock()
	e.drive()
}

// drive runs queued instances until the queue is empty, unless another
// goroutine is driving it already.
func (e *Engine) drive() {
	for e.driveMu.TryLock() {
		e.driveQueue()
		e.runMu.Lock()
		more := len(e.runq) > 0
		e.runMu.Unlock()
		if !more {
			return // anything queued from now on is driven by whoever queues it
		}
	}
}

// driveQueue drives queued instances until none is left, then lets go of
// driveMu, even when a bug panics out of an instance: the panic reaches
// the caller, and the next caller can still drive.
func (e *Engine) driveQueue() {
	defer e.driveMu.Unlock()
	for inst := e.dequeue(); inst != nil; inst = e.dequeue() {
		inst.drive()
	}
}

// dequeue takes the oldest queued instance, or nil.
func (e *Engine) dequeue() *Instance {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if len(e.runq) == 0 {
		return nil
	}
	inst := e.runq[0]
	e.runq[0] = nil
	e.runq = e.runq[1:]
	if len(e.runq) == 0 {
		e.runq = nil
	}
	inst.queued = false
	return inst
}

// drive is the loop of an instance with direct resumption: it runs the
// instance until it can move no more without new input, or has ended.
func (inst *Instance) drive() {
	if inst.ended {
		return
	}
	if inst.dry != nil {
		inst.rehydrate() // only drivers, one at a time, change dry
	}
	inst.now = 0 // records of this run read the clock afresh
	if n := inst.startAt; n != nil {
		inst.startAt = nil
		inst.begin(n, inst.trigger)
		inst.trigger = nil
	}
	for len(inst.tokens) > 0 {
		if inst.proceed() {
			continue
		}
		mail := inst.takeMail(false)
		if len(mail) == 0 {
			if !inst.atIdle() { // else dehydrated, and released: the next post wakes it
				inst.release()
			}
			return
		}
		inst.inputs = append(inst.inputs, mail...)
	}
	inst.ended = true
	inst.end()
}
