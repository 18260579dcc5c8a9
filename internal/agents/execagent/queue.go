package execagent

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// queueNoticeEvery is how often, at most, a waiting task's status message
// is rewritten as the tasks ahead of it start or leave: each rewrite is a
// stored status update, so a long queue must not turn every start into an
// update of every task behind it.
const queueNoticeEvery = time.Second

// queue hands out Options.Concurrency slots to runs in the order they asked
// for one.
type queue struct {
	mu      sync.Mutex
	free    int       // slots nobody holds
	waiting []*waiter // first come, first served
}

// waiter is one run waiting for a slot.
type waiter struct {
	ready   chan struct{} // closed once the slot is the waiter's
	moved   chan struct{} // a run ahead of the waiter started or left (buffered, coalesced)
	granted bool          // under queue.mu: ready is closed
}

func newQueue(slots int) *queue {
	return &queue{free: slots}
}

// queuedText is the status message of a task waiting behind ahead others.
func queuedText(ahead int) string {
	return fmt.Sprintf("queued: %d ahead", ahead)
}

// acquire takes a slot for one run. When none is free the run joins the
// end of the queue and its task is reported SUBMITTED with the status
// message "queued: N ahead", N being the number of tasks that will start
// before it; the message follows N as the queue moves (at most once per
// queueNoticeEvery). acquire reports false, holding no slot, when ctx ends
// first or the task can no longer be updated; the run then leaves the
// queue without starting its program.
func (q *queue) acquire(ctx context.Context, em *server.Emitter) bool {
	q.mu.Lock()
	if q.free > 0 && len(q.waiting) == 0 {
		q.free--
		q.mu.Unlock()
		return true
	}
	w := &waiter{ready: make(chan struct{}), moved: make(chan struct{}, 1)}
	q.waiting = append(q.waiting, w)
	shown := len(q.waiting) - 1
	q.mu.Unlock()

	// The caller sees the task, and its place, before it waits.
	if err := em.StatusText(a2a.TaskState_TASK_STATE_SUBMITTED, queuedText(shown)); err != nil {
		q.leave(w)
		return false
	}
	last := time.Now()
	var timer *time.Timer
	var tick <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-w.ready:
			return true
		case <-ctx.Done():
			q.leave(w)
			return false
		case <-w.moved:
			if tick != nil {
				continue // a rewrite is already due
			}
			if wait := queueNoticeEvery - time.Since(last); wait > 0 {
				timer = time.NewTimer(wait)
				tick = timer.C
				continue
			}
		case <-tick:
			tick = nil
		}
		ahead := q.position(w)
		if ahead < 0 || ahead == shown {
			continue // given a slot meanwhile (ready says so next), or no change
		}
		if err := em.StatusText(a2a.TaskState_TASK_STATE_SUBMITTED, queuedText(ahead)); err != nil {
			q.leave(w)
			return false
		}
		shown, last = ahead, time.Now()
	}
}

// position is how many waiters are ahead of w, or -1 once w holds a slot.
func (q *queue) position(w *waiter) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.granted {
		return -1
	}
	return slices.Index(q.waiting, w)
}

// leave takes w out of the queue; a slot it was given meanwhile goes to
// the next waiter.
func (q *queue) leave(w *waiter) {
	q.mu.Lock()
	if w.granted {
		q.mu.Unlock()
		q.release()
		return
	}
	if i := slices.Index(q.waiting, w); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.notify(i)
	}
	q.mu.Unlock()
}

// release gives a slot back: to the first waiter, or to the free pool.
func (q *queue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.free++
		return
	}
	w := q.waiting[0]
	q.waiting = slices.Delete(q.waiting, 0, 1)
	w.granted = true
	close(w.ready)
	q.notify(0)
}

// notify tells the waiters from index i on that they moved up. Callers
// hold q.mu.
func (q *queue) notify(i int) {
	for _, w := range q.waiting[i:] {
		select {
		case w.moved <- struct{}{}:
		default: // one pending notice is enough
		}
	}
}
