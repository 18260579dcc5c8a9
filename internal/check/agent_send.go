package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// sendSteps grade SendMessage: blocking sends that end in each kind of
// state, a direct reply, and a message to a completed task (B6).
var sendSteps = []step[*agentRun]{
	agentStep("op.send-blocking", (*agentRun).sendBlocking),
	agentStep("op.send-message-reply", (*agentRun).sendMessageReply),
	agentStep("op.send-input-required", (*agentRun).sendInputRequired),
	agentStep("op.send-auth-required", (*agentRun).sendAuthRequired),
	agentStep("op.send-rejected", (*agentRun).sendRejected),
	agentStep("B6.terminal-message", (*agentRun).sendToCompleted),
}

// sendBlocking sends "hello", which the conformance agent completes with
// an echo (an ACTS agent, asked for tck-artifact-text, with a text
// artifact); the task is kept for the checks that need a completed task.
func (a *agentRun) sendBlocking(ctx context.Context, r *rec) {
	resp, ok := a.sendOK(ctx, r, "hello")
	if !ok {
		return
	}
	t := resp.GetTask()
	want := "hello"
	if a.acts() {
		want = "" // the contract names no text
	}
	switch {
	case t == nil:
		r.fail("no task in the response (the contract answers %q with a task)", a.msg("hello").GetParts()[0].GetText())
	case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
		r.fail("state %s; a blocking call must wait for the end", stateName(t.GetStatus().GetState()))
	case len(t.GetArtifacts()) == 0 || a2a.JoinText(t.GetArtifacts()[0].GetParts()) == "":
		r.fail("COMPLETED, but without a text artifact: %v", t.GetArtifacts())
	case want != "" && a2a.JoinText(t.GetArtifacts()[0].GetParts()) != want:
		r.fail("COMPLETED, but the artifacts %v do not hold the echo %q", t.GetArtifacts(), want)
	default:
		if miss := firstMissing(resp); miss != "" {
			r.fail("REQUIRED member missing: %s", miss)
		} else {
			r.pass("COMPLETED with artifact %q", t.GetArtifacts()[0].GetArtifactId())
		}
		a.completed = t
	}
}

func (a *agentRun) sendMessageReply(ctx context.Context, r *rec) {
	resp, ok := a.sendOK(ctx, r, "message")
	if !ok {
		return
	}
	m := resp.GetMessage()
	switch {
	case m == nil:
		r.fail("no message in the response")
	case m.GetRole() != a2a.Role_ROLE_AGENT:
		r.fail("role %s, want ROLE_AGENT", m.GetRole())
	case firstMissing(m) != "":
		r.fail("REQUIRED member missing: %s", firstMissing(m))
	case m.GetContextId() == "":
		r.fail("the agent's message has no contextId (\"for server messages, context_id must be provided\")")
	default:
		r.pass("message %q, contextId %s", a2a.JoinText(m.GetParts()), m.GetContextId())
	}
}

func (a *agentRun) sendInputRequired(ctx context.Context, r *rec) {
	if t, ok := a.sendInState(ctx, r, "input-required", a2a.TaskState_TASK_STATE_INPUT_REQUIRED); ok {
		r.pass("INPUT_REQUIRED: %q", a2a.JoinText(t.GetStatus().GetMessage().GetParts()))
		a.cancel(ctx, t.GetId())
	}
}

func (a *agentRun) sendAuthRequired(ctx context.Context, r *rec) {
	t, ok := a.sendInState(ctx, r, "auth-required", a2a.TaskState_TASK_STATE_AUTH_REQUIRED)
	switch {
	case !ok:
	case len(t.GetStatus().GetMessage().GetParts()) == 0:
		r.fail("AUTH_REQUIRED without a status message")
	default:
		r.pass("AUTH_REQUIRED: %q", a2a.JoinText(t.GetStatus().GetMessage().GetParts()))
	}
	if t != nil {
		a.cancel(ctx, t.GetId())
	}
}

// sendOK sends text for a check of the answer: a request that cannot be
// completed, or that fails, ends the check (ok false).
func (a *agentRun) sendOK(ctx context.Context, r *rec, text string) (resp *a2a.SendMessageResponse, ok bool) {
	res, resp := a.send(ctx, a.msg(text), nil, callOpts{})
	return resp, r.succeeded(res, "SendMessage")
}

// sendInState sends text, which the agent answers with a task in state
// want. It returns the task (nil when none came back) and whether it is
// in that state; when it is not, the check has ended (skipped or failed).
func (a *agentRun) sendInState(ctx context.Context, r *rec, text string, want a2a.TaskState) (*a2a.Task, bool) {
	res, resp := a.send(ctx, a.msg(text), nil, callOpts{})
	if !r.gradable(res) {
		return nil, false
	}
	t := resp.GetTask()
	switch {
	case t == nil:
		r.fail("no task: %s", res.outcome())
	case t.GetStatus().GetState() != want:
		r.fail("state %s, want %s", stateName(t.GetStatus().GetState()), stateName(want))
	default:
		return t, true
	}
	return t, false
}

func (a *agentRun) sendRejected(ctx context.Context, r *rec) {
	res1, resp1 := a.send(ctx, a.msg("reject"), nil, callOpts{})
	res2, resp2 := a.send(ctx, a.msg("fail"), nil, callOpts{})
	r.sawBoth(res1, res2)
	state1, state2 := resp1.GetTask().GetStatus().GetState(), resp2.GetTask().GetStatus().GetState()
	switch {
	case res1.failed() || res2.failed():
		r.skip("could not complete the requests")
	case state1 == a2a.TaskState_TASK_STATE_REJECTED && state2 == a2a.TaskState_TASK_STATE_FAILED:
		r.pass("REJECTED and FAILED")
	default:
		r.fail("got %s and %s; want REJECTED and FAILED", res1.outcome()+"/"+stateName(state1), res2.outcome()+"/"+stateName(state2))
	}
}

// sendToCompleted sends a follow-up to the completed task (B6).
func (a *agentRun) sendToCompleted(ctx context.Context, r *rec) {
	if !r.needs(a.completed != nil, "no completed task (op.send-blocking failed)") {
		return
	}
	m := a.msg("again")
	m.TaskId, m.ContextId = a.completed.GetId(), a.completed.GetContextId()
	res, _ := a.send(ctx, m, nil, callOpts{})
	r.expectSame(a.t.binding, res, a2a.CodeUnsupportedOperation)
	a.probes["SendMessage to a completed task"] = outcomeKey(res)
}
