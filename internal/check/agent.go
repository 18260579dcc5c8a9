package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// agentRun is what the checks needing the conformance agent share on one
// binding. The conformance agent answers a message by its text: "hello"
// with an echo, "message" with a direct reply, "input-required",
// "auth-required", "reject", "fail", "slow N" (N ms of work),
// "stream N" (N artifact chunks), "append-unknown".
type agentRun struct {
	*bindingRun
	completed *a2a.Task // the task op.send-blocking completed, nil if it failed
}

// agentChecks runs the checks that need the conformance agent, family by
// family.
func (b *bindingRun) agentChecks(ctx context.Context) {
	a := &agentRun{bindingRun: b}
	runSteps(ctx, b, a, sendSteps)
	runSteps(ctx, b, &cancelFamily{agentRun: a}, cancelSteps)
	runSteps(ctx, b, &historyFamily{agentRun: a}, historySteps)
	runSteps(ctx, b, &followUpFamily{agentRun: a}, followUpSteps)
	runSteps(ctx, b, &walkFamily{agentRun: a}, walkSteps)
	runSteps(ctx, b, &idempotencyFamily{agentRun: a}, idempotencySteps)
	a.streamChecks(ctx)
	a.pushChecks(ctx)
	a.scopeChecks(ctx)
	a.previewChecks(ctx)
}

// send sends a message.
func (b *bindingRun) send(ctx context.Context, m *a2a.Message, cfg *a2a.SendMessageConfiguration, o callOpts) (*result, *a2a.SendMessageResponse) {
	res := b.t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: m, Configuration: cfg}, o)
	resp := &a2a.SendMessageResponse{}
	if res.ok() {
		if err := res.decode(resp); err != nil {
			res.broken = "the result is not a SendMessageResponse: " + err.Error()
		}
	}
	return res, resp
}

// sendTask sends text and returns the task, or ends r as skipped (a
// setting-up failure) and returns nil.
func (b *bindingRun) sendTask(ctx context.Context, r *rec, text string, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	res, resp := b.send(ctx, b.msg(text), cfg, callOpts{})
	if resp.GetTask() == nil {
		r.saw(res)
		if !r.incomplete(res) {
			r.skip("setting up: SendMessage(%q) did not return a task (%s)", text, res.outcome())
		}
		return nil
	}
	return resp.GetTask()
}

// getTask reads a task, with historyLength hl when not nil.
func (b *bindingRun) getTask(ctx context.Context, id string, hl *int32) (*result, *a2a.Task) {
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: id, HistoryLength: hl}, callOpts{})
	t := &a2a.Task{}
	if res.ok() {
		if err := res.decode(t); err != nil {
			res.broken = "the result is not a Task: " + err.Error()
		}
	}
	return res, t
}

// cancel cancels a task, to leave nothing running behind a check.
func (b *bindingRun) cancel(ctx context.Context, id string) {
	b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: id}, callOpts{})
}
