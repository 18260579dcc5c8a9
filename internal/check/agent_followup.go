package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// followUpFamily is what the follow-up checks share: the task
// B9.infer-context continued and the follow-up it sent.
type followUpFamily struct {
	*agentRun
	parked   *a2a.Task
	followUp *a2a.Message
}

// followUpSteps grade follow-up messages: the context inferred from the
// task (B9) and a mismatched contextId (B10).
var followUpSteps = []step[*followUpFamily]{
	agentStep("B9.infer-context", (*followUpFamily).inferContext),
	agentStep("B9.stored-context", (*followUpFamily).storedContext),
	agentStep("B10.mismatch", (*followUpFamily).mismatch),
	agentStep("B10.mismatch-terminal", (*followUpFamily).mismatchTerminal),
}

// inferContext continues an INPUT_REQUIRED task with a message that names
// only its taskId.
func (f *followUpFamily) inferContext(ctx context.Context, r *rec) {
	f.parked = f.sendTask(ctx, r, "input-required", nil)
	if f.parked == nil {
		return
	}
	f.followUp = f.msg("follow-up")
	f.followUp.TaskId = f.parked.GetId()
	res, resp := f.send(ctx, f.followUp, nil, callOpts{})
	if !r.gradable(res) {
		return
	}
	t := resp.GetTask()
	switch {
	case t == nil:
		r.fail("the follow-up did not return the task: %s", res.outcome())
	case t.GetId() != f.parked.GetId():
		r.fail("the follow-up created task %s instead of continuing %s", t.GetId(), f.parked.GetId())
	case t.GetContextId() != f.parked.GetContextId():
		r.fail("the task's contextId changed from %s to %s", f.parked.GetContextId(), t.GetContextId())
	case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
		r.fail("state %s after the follow-up; want COMPLETED", stateName(t.GetStatus().GetState()))
	default:
		r.pass("continued in context %s and COMPLETED", t.GetContextId())
	}
}

// storedContext reads the follow-up back from the task's history.
func (f *followUpFamily) storedContext(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no parked task") {
		return
	}
	res, t := f.getTask(ctx, f.parked.GetId(), nil)
	if !r.gradable(res) {
		return
	}
	var stored *a2a.Message
	for _, h := range t.GetHistory() {
		if h.GetMessageId() == f.followUp.GetMessageId() {
			stored = h
		}
	}
	want := f.parked.GetContextId()
	switch {
	case stored == nil:
		r.na("the follow-up is not in the history (the agent decides what history keeps, §3.7)")
	case stored.GetContextId() == want:
		r.same().na("stamped with the task's contextId")
	case stored.GetContextId() == "":
		r.differs("Parley stamps the inferred contextId on the stored message").na("stored without a contextId (read it from the Task)")
	default:
		r.differs("Parley stamps the task's contextId").fail("stored with contextId %s, not the task's %s: the context was not inferred from the task", stored.GetContextId(), want)
	}
}

// mismatch sends a follow-up with another contextId to an INPUT_REQUIRED
// task, which must refuse it and stay where it was.
func (f *followUpFamily) mismatch(ctx context.Context, r *rec) {
	parked := f.sendTask(ctx, r, "input-required", nil)
	if parked == nil {
		return
	}
	defer f.cancel(ctx, parked.GetId())
	m := f.msg("follow-up")
	m.TaskId, m.ContextId = parked.GetId(), "parley-check-other-context"
	res, _ := f.send(ctx, m, nil, callOpts{})
	r.saw(res)
	f.probes["a follow-up with a mismatched contextId"] = outcomeKey(res)
	if r.incomplete(res) {
		return
	}
	_, after := f.getTask(ctx, parked.GetId(), nil)
	switch {
	case res.ok():
		r.fail("accepted (task now %s)", stateName(after.GetStatus().GetState()))
	case after.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		r.fail("refused with %s, but the task moved to %s", describeError(res.err), stateName(after.GetStatus().GetState()))
	case res.err.is(a2a.CodeInvalidParams):
		r.same().pass("refused: %s", describeError(res.err))
	default:
		r.differs("Parley answers InvalidParamsError").pass("refused: %s", describeError(res.err))
	}
}

// mismatchTerminal sends a follow-up with another contextId to the
// completed task.
func (f *followUpFamily) mismatchTerminal(ctx context.Context, r *rec) {
	if !r.needs(f.completed != nil, "no completed task") {
		return
	}
	m := f.msg("again")
	m.TaskId, m.ContextId = f.completed.GetId(), "parley-check-other-context"
	res, _ := f.send(ctx, m, nil, callOpts{})
	switch {
	case !r.gradable(res):
	case res.ok():
		r.fail("accepted")
	case res.err.is(a2a.CodeInvalidParams):
		r.same().pass("refused: %s (the contextId is checked first)", describeError(res.err))
	default:
		r.differs("Parley checks the contextId first (InvalidParamsError)").pass("refused: %s", describeError(res.err))
	}
}
