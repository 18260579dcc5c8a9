package server

// One execution of the agent: starting it, what happens when Execute
// returns, detaching, ending and canceling it.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"parley.dev/parley/a2a"
)

// execution is one call of Agent.Execute and, when detached, its
// background continuation.
type execution struct {
	ctx      context.Context
	stored   context.Context // ctx without its cancellation: the writes of its events (run.apply)
	cancel   context.CancelCauseFunc
	detached bool
	settled  bool          // the last status it emitted ends or interrupts the task: it is about to return
	returned bool          // Execute has returned
	done     bool          // the execution is over; the emitter is invalid
	taken    bool          // it gave way to another replica's (ErrTaskTaken)
	ended    chan struct{} // closed when done is set
}

// start launches the agent for a request, made in the caller's context.
// Callers hold r.mu and have checked that no execution is active.
func (r *run) start(caller context.Context, req *Request) *execution {
	ctx, cancel := context.WithCancelCause(r.s.base)
	if f := r.s.opts.ExecutionContext; f != nil {
		ctx = f(ctx, caller, req)
	}
	ex := &execution{ctx: ctx, stored: context.WithoutCancel(ctx), cancel: cancel, ended: make(chan struct{})}
	r.exec, r.pipeErr = ex, nil
	r.unfollow() // the execution feeds the run now
	r.s.ref(r)   // held until the execution is over (finish), detached or not
	r.s.execStarted()
	r.s.wg.Add(1)
	r.s.workers.run(func() {
		defer r.s.wg.Done()
		err := r.invoke(ex, req)
		r.returned(ex, err)
	})
	if r.s.opts.Cluster != nil {
		if r.task != nil {
			// A follow-up: another replica may have added a push
			// configuration while no execution here watched for it.
			r.mayPush = true
		}
		r.watchOthers(ex)
	}
	return ex
}

// invoke calls the agent, turning a panic into an error.
func (r *run) invoke(ex *execution, req *Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("agent panicked", "task", r.id, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("agent panicked: %v", p)
		}
	}()
	return r.s.agent.Execute(ex.ctx, req, &Emitter{r: r, ex: ex})
}

// returned handles the end of Agent.Execute: a task left in an active state
// without Detach becomes FAILED.
func (r *run) returned(ex *execution, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex.returned = true
	r.drain(ex.stored)
	if err == nil && r.pipeErr != nil && !errors.Is(r.pipeErr, ErrTaskClosed) {
		err = r.pipeErr // an event it emitted could not be stored
	}
	switch {
	case err == nil, ex.taken:
	case errors.Is(err, ErrTaskClosed), errors.Is(err, ErrExecutionEnded):
		// The task ended under the agent (a cancel, most often) and the
		// agent returned what its Emitter said: a race, not a failure.
		r.s.log.DebugContext(ex.ctx, "agent returned after its task ended", "task", r.id, "err", err)
	default:
		r.s.log.ErrorContext(ex.ctx, "agent failed", "task", r.id, "err", err)
	}
	if ex.detached && err == nil && !ex.done {
		return // the background work owns the task now
	}
	if r.reply == nil && !ex.done && (err != nil || r.task == nil || !settled(r.task.GetStatus().GetState())) {
		why := "the agent stopped without finishing the task"
		switch {
		case err != nil:
			why = "the agent failed while working on the task"
		case r.task == nil:
			why = "the agent returned without a reply or a task update"
		}
		switch context.Cause(ex.ctx) {
		case ErrShutdown:
			why = shutdownMessage
		case ErrLeaseLost:
			why = "the replica running the task lost its lease on the store"
		}
		r.fail(ex, why)
	}
	r.finish(ex)
}

// settled reports whether a state lets an execution end: terminal or
// interrupted.
func settled(s a2a.TaskState) bool { return a2a.IsTerminal(s) || a2a.IsInterrupted(s) }

// fail moves the task to FAILED with a status message. Callers hold r.mu.
func (r *run) fail(ex *execution, why string) {
	if err := r.apply(ex, event{state: a2a.TaskState_TASK_STATE_FAILED, message: a2a.AgentMessage(why)}); err != nil && err != ErrTaskClosed {
		r.lostEnd(why, err)
	}
}

// finish ends an execution. An execution that leaves no task (a direct
// reply, or a failure before the task could be stored) gives back the
// open-task quota its message took. Callers hold r.mu.
func (r *run) finish(ex *execution) {
	if ex.done {
		return
	}
	if r.task == nil {
		r.s.quota.closed(r.scope.Owner, r.id)
	}
	ex.done = true
	ex.cancel(ErrExecutionEnded)
	close(ex.ended)
	if r.exec == ex {
		r.exec = nil
	}
	r.wake()
	r.follow()     // with Options.Cluster, when still watched: the next execution may run elsewhere
	r.s.release(r) // the reference taken by start
	r.s.execEnded()
}

// detach marks the execution as continuing in the background.
func (r *run) detach(ex *execution) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ex.done {
		ex.detached = true
	}
}

// emit applies an event from the agent.
func (r *run) emit(ex *execution, ev event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.artifact == nil {
		r.settleInflight() // an event that could not be stored fails this call
	}
	if r.pipeErr != nil {
		return r.pipeFailure()
	}
	if r.task != nil && a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return ErrTaskClosed
	}
	if ex.done || (ex.returned && !ex.detached) {
		return ErrExecutionEnded
	}
	err := r.apply(ex, ev)
	if err == nil && ev.artifact == nil && ev.reply == nil {
		ex.settled = settled(ev.state)
	}
	if err == nil && r.task != nil && a2a.IsTerminal(r.task.GetStatus().GetState()) {
		r.finish(ex)
	}
	return err
}

// cancelTask moves the task to CANCELED and stops its execution. Callers hold
// r.mu and have loaded the task.
func (r *run) cancelTask(ctx context.Context) error {
	if err := r.setStatus(context.WithoutCancel(ctx), a2a.TaskState_TASK_STATE_CANCELED, nil); err != nil {
		return err
	}
	if r.exec != nil {
		r.exec.cancel(ErrCanceled)
		r.finish(r.exec)
	}
	return nil
}
