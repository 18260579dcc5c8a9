package server

// Tasks whose end could not be stored: no silent task. When the store
// fails to record how a task ended (a full disk, an outage), its streams
// are closed with the error at once, and the task is ended FAILED as soon
// as the store writes again; a restart does it too (crash recovery).
//
// One goroutine, started with the first such task, ends them: it tries
// one at a growing interval (unfinishedFirst, doubling up to
// unfinishedMax) while the store refuses, and all of them the moment a
// write commits, its own or any other task's (Server.committed). So a
// task reads FAILED within about unfinishedMax of the store's return, with
// no traffic, and at once with some; and an outage costs one failing
// write per interval, however many tasks wait.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// The pace of the tries while the store refuses: the first after
// unfinishedFirst, then each twice as late, up to unfinishedMax apart. A
// committed write ends a wait early, but never one shorter than
// unfinishedFirst after a failed try.
const (
	unfinishedFirst = 250 * time.Millisecond
	unfinishedMax   = time.Second
)

// unfinishedMessage is the status message of a task ended once the store
// could write again.
const unfinishedMessage = "the task store could not record the task's progress: %s"

// unfinished holds the tasks whose end the store did not take, until
// they are ended.
type unfinished struct {
	pending atomic.Bool   // tasks is not empty: read on every write
	wake    chan struct{} // a write committed (capacity 1)

	mu      sync.Mutex
	tasks   map[runKey]lostTask
	running bool // the finishing goroutine runs
}

// lostTask is why a task was to end and what the store answered.
type lostTask struct {
	why string
	err error
}

// lostEnd handles a task whose end (why) the store did not take (err): its
// subscribers get the error and their streams close, so none waits for an
// event that will not come, and the task is ended FAILED once the store
// writes again (finishLost). Callers hold r.mu.
func (r *run) lostEnd(why string, err error) {
	r.s.log.Error("could not record the end of a task; it is ended FAILED once the store writes again",
		"task", r.id, "err", err)
	r.cutOff(err)
	if r.s.base.Err() != nil {
		return // stopping: the next start ends it (crash recovery)
	}
	u := &r.s.lost
	u.mu.Lock()
	if u.tasks == nil {
		u.tasks = map[runKey]lostTask{}
	}
	u.tasks[runKey{r.scope, r.id}] = lostTask{why, err}
	u.pending.Store(true)
	start := !u.running
	u.running = true
	u.mu.Unlock()
	if start {
		r.s.wg.Add(1)
		go r.s.finishLost()
	}
}

// committed is called after every write of a task's log that committed:
// the store writes, so the tasks waiting to be ended are tried now.
func (s *Server) committed() {
	if s.lost.pending.Load() {
		select {
		case s.lost.wake <- struct{}{}:
		default:
		}
	}
}

// refuseUnfinished refuses a subscription to a task whose end the store
// has not taken yet: nothing would come on it until the store writes
// again, and a silent stream is what this file prevents. Callers hold the
// task's r.mu, under which the task is ended and leaves the set.
func (s *Server) refuseUnfinished(scope taskstore.Scope, id string) error {
	s.lost.mu.Lock()
	l, ok := s.lost.tasks[runKey{scope, id}]
	s.lost.mu.Unlock()
	if !ok {
		return nil
	}
	return a2a.Internal(l.err)
}

// finishLost ends FAILED the tasks of s.lost until none is left or the
// server stops; see the top of this file.
func (s *Server) finishLost() {
	defer s.wg.Done()
	u := &s.lost
	backoff := unfinishedFirst // the pause after the next failed try
	for wait := unfinishedFirst; ; {
		if !s.pauseLost(wait) {
			u.mu.Lock()
			clear(u.tasks)
			u.pending.Store(false)
			u.running = false
			u.mu.Unlock()
			return // the next start ends them (crash recovery)
		}
		u.mu.Lock()
		todo := maps.Clone(u.tasks)
		if len(todo) == 0 {
			u.pending.Store(false)
			u.running = false
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		wait = 0 // all ended: then those added meanwhile, at once
		for k, l := range todo {
			if !s.finishUnfinished(k, l.why) {
				wait, backoff = backoff, min(2*backoff, unfinishedMax)
				break // the store still refuses: the others would too
			}
		}
		if wait == 0 {
			backoff = unfinishedFirst
		}
	}
}

// pauseLost waits d, or less when a write commits meanwhile, but never
// less than unfinishedFirst when d is longer; it reports false when the
// server stops first.
func (s *Server) pauseLost(d time.Duration) bool {
	if d <= 0 {
		return s.base.Err() == nil
	}
	floor := min(d, unfinishedFirst)
	t := time.NewTimer(floor)
	defer t.Stop()
	select {
	case <-s.base.Done():
		return false
	case <-t.C:
	}
	if d == floor {
		return true
	}
	t.Reset(d - floor)
	select {
	case <-s.base.Done():
		return false
	case <-t.C:
	case <-s.lost.wake:
	}
	return true
}

// finishUnfinished tries once to end the task; it reports whether nothing
// is left to do, and then takes the task out of s.lost (under r.mu, so no
// caller sees it refused once ended).
func (s *Server) finishUnfinished(k runKey, why string) bool {
	r := s.acquire(k.id, k.scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.endUnfinished(r, why) {
		return false
	}
	s.lost.mu.Lock()
	delete(s.lost.tasks, k)
	s.lost.mu.Unlock()
	return true
}

// endUnfinished ends the run's task FAILED unless it ended or runs again
// meanwhile; it reports whether nothing is left to do. Callers hold r.mu.
func (s *Server) endUnfinished(r *run, why string) bool {
	ctx, cancel := context.WithTimeout(s.base, 10*time.Second)
	defer cancel()
	// Read what the store has, not what was applied in memory.
	r.loaded, r.task, r.pipeErr = false, nil, nil
	if err := r.load(ctx); err != nil {
		return a2a.AsError(err).Code == a2a.CodeTaskNotFound // never stored: a resend runs it again
	}
	if r.exec != nil || !a2a.IsActive(r.task.GetStatus().GetState()) {
		return true // ended, or worked on again
	}
	err := r.setStatus(ctx, a2a.TaskState_TASK_STATE_FAILED, a2a.AgentMessage(fmt.Sprintf(unfinishedMessage, why)))
	return err == nil || errors.Is(err, ErrTaskClosed)
}
