package check

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// cancelFamily is what the cancel checks share: the task
// op.return-immediately left running.
type cancelFamily struct {
	*agentRun
	running *a2a.Task
}

// cancelSteps grade returnImmediately, CancelTask and GetTask.
var cancelSteps = []step[*cancelFamily]{
	agentStep("op.return-immediately", (*cancelFamily).returnImmediately),
	agentStep("op.cancel", (*cancelFamily).cancelRunning),
	agentStep("op.cancel-canceled", (*cancelFamily).cancelCanceled),
	agentStep("op.cancel-completed", (*cancelFamily).cancelCompleted),
	agentStep("op.get-task", (*cancelFamily).getCompleted),
}

// returnImmediately sends 3 s of work with returnImmediately.
func (f *cancelFamily) returnImmediately(ctx context.Context, r *rec) {
	start := time.Now()
	res, resp := f.send(ctx, f.msg("slow 3000"), &a2a.SendMessageConfiguration{ReturnImmediately: true}, callOpts{})
	took := time.Since(start)
	if !r.gradable(res) {
		return
	}
	t := resp.GetTask()
	switch {
	case t == nil:
		r.fail("no task: %s", res.outcome())
	case a2a.IsTerminal(t.GetStatus().GetState()):
		r.fail("the task came back %s after %v: the call waited", stateName(t.GetStatus().GetState()), took.Round(time.Millisecond))
	case took > 2500*time.Millisecond:
		r.fail("the call took %v for work of 3 s", took.Round(time.Millisecond))
	default:
		r.pass("%s after %v", stateName(t.GetStatus().GetState()), took.Round(time.Millisecond))
		f.running = t
	}
}

func (f *cancelFamily) cancelRunning(ctx context.Context, r *rec) {
	if !r.needs(f.running != nil, "no running task (op.return-immediately failed)") {
		return
	}
	res := f.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: f.running.GetId()}, callOpts{})
	if !r.succeeded(res, "CancelTask") {
		return
	}
	t := &a2a.Task{}
	switch {
	case res.decode(t) != nil:
		r.fail("the result is not a Task")
	case t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED:
		r.pass("CANCELED")
	default:
		// Cancellation may still be under way; GetTask tells.
		if state := f.waitCanceled(ctx, t.GetStatus().GetState()); state == a2a.TaskState_TASK_STATE_CANCELED {
			r.pass("returned %s, CANCELED shortly after", stateName(t.GetStatus().GetState()))
		} else {
			r.fail("returned %s and the task is %s 2 s later", stateName(t.GetStatus().GetState()), stateName(state))
		}
	}
}

// waitCanceled polls the running task for up to 2 s until it is
// CANCELED; it returns the last state seen.
func (f *cancelFamily) waitCanceled(ctx context.Context, state a2a.TaskState) a2a.TaskState {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && state != a2a.TaskState_TASK_STATE_CANCELED {
		time.Sleep(100 * time.Millisecond)
		_, g := f.getTask(ctx, f.running.GetId(), nil)
		state = g.GetStatus().GetState()
	}
	return state
}

func (f *cancelFamily) cancelCanceled(ctx context.Context, r *rec) {
	if !r.needs(f.running != nil, "no canceled task") {
		return
	}
	res := f.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: f.running.GetId()}, callOpts{})
	switch {
	case !r.gradable(res):
	case res.ok():
		r.same().na("answered with the task (idempotent)")
	default:
		r.differs("Parley returns the canceled task unchanged").na("%s", describeError(res.err))
	}
}

func (f *cancelFamily) cancelCompleted(ctx context.Context, r *rec) {
	if !r.needs(f.completed != nil, "no completed task (op.send-blocking failed)") {
		return
	}
	res := f.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: f.completed.GetId()}, callOpts{})
	r.expect(f.t.binding, res, a2a.CodeTaskNotCancelable)
	f.probes["CancelTask of a completed task"] = outcomeKey(res)
}

func (f *cancelFamily) getCompleted(ctx context.Context, r *rec) {
	if !r.needs(f.completed != nil, "no completed task (op.send-blocking failed)") {
		return
	}
	res, t := f.getTask(ctx, f.completed.GetId(), nil)
	if !r.succeeded(res, "GetTask") {
		return
	}
	switch {
	case t.GetId() != f.completed.GetId() || t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
		r.fail("got task %s in state %s", t.GetId(), stateName(t.GetStatus().GetState()))
	case len(t.GetArtifacts()) == 0:
		r.fail("the completed task has no artifacts")
	case firstMissing(t) != "":
		r.fail("REQUIRED member missing: %s", firstMissing(t))
	default:
		r.pass("COMPLETED, %d artifact(s)", len(t.GetArtifacts()))
	}
}
