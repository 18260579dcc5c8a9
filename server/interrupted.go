package server

// Ending an interrupted task that no execution runs: what an agent does
// when what its question waited on is gone.

import (
	"context"
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// ErrNotInterrupted is what TaskHandle.EndInterrupted returns when the
// task is not interrupted, or is being worked on again: it got the
// follow-up it asked for (spec §3.4.3), here or on another replica, or
// an execution of it runs (a detached one included). The task is left
// as it is; the execution handling it reports what comes of it.
var ErrNotInterrupted = errors.New("server: task is not waiting in an interrupted state")

// TaskHandle names an emitter's task beyond its execution (see
// Emitter.Handle). It holds no resources: keeping one costs nothing, and
// it stays valid after the task is gone (its methods then say so).
type TaskHandle struct {
	s     *Server
	scope taskstore.Scope
	id    string
}

// Handle returns a handle on the emitter's task that outlives the
// execution, for EndInterrupted. The task it names is made by the
// execution's first update; before that the handle finds no task.
func (e *Emitter) Handle() TaskHandle {
	return TaskHandle{s: e.r.s, scope: e.r.scope, id: e.r.id}
}

// ID is the task's id.
func (h TaskHandle) ID() string { return h.id }

// EndInterrupted ends a task that waits in an interrupted state
// (INPUT_REQUIRED or AUTH_REQUIRED, spec §4.1.3) with no execution: the
// agent's Execute asked its question and returned, and what the answer
// was for is gone (say, the process that asked it died). state must be
// terminal (§4.1.3: FAILED, REJECTED, CANCELED or COMPLETED); m, an
// agent's message saying why, may be nil.
//
// The status is written as every other one: stored after the task's
// last event (ordered with concurrent writes by its sequence number),
// then sent to subscribers, long polls and push configurations, and seen
// by the other replicas. A follow-up sent afterwards is refused as for
// any terminal task (§3.1.1: UnsupportedOperationError).
//
// It returns ErrTaskClosed when the task is already terminal, and
// ErrNotInterrupted when it is active or an execution runs it, the
// follow-up answering it included (on whichever replica took it first):
// then the task is left alone. An execution that set the task
// interrupted but has not returned yet is waited for, bounded by ctx: so
// the Execute that asked must not call EndInterrupted for its own task
// before it returns. A task not found (or not the handle's scope's) is
// TaskNotFoundError.
func (h TaskHandle) EndInterrupted(ctx context.Context, state a2a.TaskState, m *a2a.Message) error {
	if !a2a.IsTerminal(state) {
		return fmt.Errorf("server: EndInterrupted: %s is not a terminal state", state)
	}
	r := h.s.acquire(h.id, h.scope)
	defer h.s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		return err
	}
	if err := r.awaitSettledExecution(ctx); err != nil {
		return err
	}
	return r.endInterrupted(ctx, state, m)
}

// endInterrupted writes the terminal status of EndInterrupted, unless
// the task ended or is worked on again. Callers hold r.mu and have
// loaded the task.
func (r *run) endInterrupted(ctx context.Context, state a2a.TaskState, m *a2a.Message) error {
	cluster := r.s.opts.Cluster != nil && r.seq > 0
	if cluster {
		// Another replica may have taken a follow-up: read the log to
		// its end, whose last event is that message until its agent
		// writes.
		if err := r.catchUp(ctx); err != nil {
			return a2a.Internal(err)
		}
	}
	st := r.task.GetStatus().GetState()
	switch {
	case a2a.IsTerminal(st):
		return ErrTaskClosed
	case !a2a.IsInterrupted(st) || r.exec != nil:
		return ErrNotInterrupted
	}
	if cluster {
		if taken, err := r.followUpLogged(ctx); err != nil || taken {
			if err == nil {
				err = ErrNotInterrupted
			}
			return err
		}
	}
	ev, err := r.statusUpdate(state, m)
	if err != nil {
		return err
	}
	// With Options.Cluster another replica may write first all the same
	// (a follow-up it takes now): this write then gives way, and
	// ErrTaskClosed says that the other write ended the task.
	err = r.record(context.WithoutCancel(ctx), ev, true)
	if errors.Is(err, ErrTaskTaken) {
		return ErrNotInterrupted
	}
	return err
}
