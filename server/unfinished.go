package server

// Tasks whose end could not be stored: no silent task. When the store
// fails to record how a task ended (a full disk, an outage), its streams
// are closed with the error at once, and the task is ended FAILED as soon
// as the store writes again; a restart does it too (crash recovery).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// The retries of finishLater: the first after unfinishedFirst, then each
// twice as late, up to unfinishedMax apart.
const (
	unfinishedFirst = 500 * time.Millisecond
	unfinishedMax   = 30 * time.Second
)

// unfinishedMessage is the status message of a task ended once the store
// could write again.
const unfinishedMessage = "the task store could not record the task's progress: %s"

// lostEnd handles a task whose end (why) the store did not take (err): its
// subscribers get the error and their streams close, so none waits for an
// event that will not come, and finishLater ends the task FAILED once the
// store writes again. Callers hold r.mu.
func (r *run) lostEnd(why string, err error) {
	r.s.log.Error("could not record the end of a task; it is ended FAILED once the store writes again",
		"task", r.id, "err", err)
	r.cutOff(err)
	if r.s.base.Err() != nil {
		return // stopping: the next start ends it (crash recovery)
	}
	r.s.unfinished.Store(runKey{r.scope, r.id}, err)
	r.s.wg.Add(1)
	go r.s.finishLater(r.scope, r.id, why)
}

// refuseUnfinished refuses a subscription to a task whose end the store
// has not taken yet: nothing would come on it until the store writes
// again, and a silent stream is what this file prevents.
func (s *Server) refuseUnfinished(scope taskstore.Scope, id string) error {
	v, ok := s.unfinished.Load(runKey{scope, id})
	if !ok {
		return nil
	}
	return a2a.Internal(v.(error))
}

// finishLater ends the task FAILED, retrying with backoff until the store
// takes it, the task ends otherwise, or the server stops.
func (s *Server) finishLater(scope taskstore.Scope, id, why string) {
	defer s.wg.Done()
	wait := unfinishedFirst
	for {
		select {
		case <-s.base.Done():
			s.unfinished.Delete(runKey{scope, id})
			return // the next start ends it (crash recovery)
		case <-time.After(wait):
		}
		if s.finishUnfinished(scope, id, why) {
			s.unfinished.Delete(runKey{scope, id})
			return
		}
		wait = min(2*wait, unfinishedMax)
	}
}

// finishUnfinished tries once; it reports whether nothing is left to do.
func (s *Server) finishUnfinished(scope taskstore.Scope, id, why string) bool {
	r := s.acquire(id, scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
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
