// The event log a host drains after each call.

package runtime

// logged is a record in the event log, kept compact until drained. The
// record and its details never change once written, so expanding it later,
// on another goroutine, reads only immutable data.
type logged struct {
	inst *Instance
	more *Event
	rec  record
	seq  int
}

// logRecord appends a record to the event log.
func (e *Engine) logRecord(l logged) {
	e.logMu.Lock()
	e.log = append(e.log, l)
	e.logMu.Unlock()
}

// SetEventLog turns the event log on or off. Turning it off discards what
// was not drained.
func (e *Engine) SetEventLog(on bool) {
	e.eventLog.Store(on)
	if !on {
		e.logMu.Lock()
		e.log = nil
		e.logMu.Unlock()
	}
}

// DrainEvents returns the records logged since the last call, in the order
// their loops wrote them (each instance's in its own order), and empties
// the log. With the log off it returns nil.
func (e *Engine) DrainEvents() []Event {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	if len(e.log) == 0 {
		return nil
	}
	out := make([]Event, len(e.log))
	for i := range e.log {
		l := &e.log[i]
		out[i] = l.rec.event(l.inst, l.more, l.seq)
		out[i].Variables = cloneVars(out[i].Variables)
		e.log[i] = logged{} // the log's array is reused: let go of what it held
	}
	e.log = e.log[:0]
	return out
}
