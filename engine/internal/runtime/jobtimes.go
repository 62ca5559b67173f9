package runtime

import (
	"container/heap"
	"time"
)

// jobTimes orders the activation deadlines and back-off ends of the
// indexed jobs, so NextDeadline finds the earliest without scanning every
// job on each call (the wasm module asks after every call). Entries are
// pushed when a job record is indexed and dropped lazily: an entry whose
// job no longer carries that time, or whose time has passed, is popped
// when it reaches the top. A passed time stays passed (the clock does not
// go back), so dropping it loses nothing.
type jobTimes []jobTime

type jobTime struct {
	at  time.Time
	key int64
}

func (h jobTimes) Len() int           { return len(h) }
func (h jobTimes) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h jobTimes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *jobTimes) Push(x any)        { *h = append(*h, x.(jobTime)) }
func (h *jobTimes) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// noteJobTimes pushes the times of j that can make it activatable again.
// When stale entries (of jobs finished or activated again) outnumber the
// jobs, as under virtual time that never advances, the heap is rebuilt
// from the job records, so it stays within a few entries per job.
// Called with e.mu held.
func (e *Engine) noteJobTimes(j *Job) {
	if len(e.jobTimes) > 2*len(e.jobRecs)+64 {
		e.jobTimes = e.jobTimes[:0]
		for _, o := range e.jobRecs {
			if o != j {
				e.pushJobTimes(o)
			}
		}
	}
	e.pushJobTimes(j)
}

func (e *Engine) pushJobTimes(j *Job) {
	if j.Activation != 0 && j.Deadline != nil {
		heap.Push(&e.jobTimes, jobTime{at: *j.Deadline, key: j.Key})
	}
	if j.RetryAt != nil {
		heap.Push(&e.jobTimes, jobTime{at: *j.RetryAt, key: j.Key})
	}
}

// nextJobTime is the earliest activation deadline or back-off end after
// now of a job that has retries left.
func (e *Engine) nextJobTime(now time.Time) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.jobTimes) > 0 {
		top := e.jobTimes[0]
		if j := e.jobRecs[top.key]; j != nil && j.Retries > 0 && top.at.After(now) && holdsUntil(j, top.at) {
			return top.at, true
		}
		heap.Pop(&e.jobTimes)
	}
	return time.Time{}, false
}

// holdsUntil reports whether t is j's current activation deadline or
// back-off end.
func holdsUntil(j *Job, t time.Time) bool {
	return (j.Activation != 0 && j.Deadline != nil && j.Deadline.Equal(t)) || (j.RetryAt != nil && j.RetryAt.Equal(t))
}
