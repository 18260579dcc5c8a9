package check

import (
	"context"
	"slices"

	"parley.dev/parley/a2a"
)

// idempotencyFamily is what the resend checks share: the message sent
// twice.
type idempotencyFamily struct {
	*agentRun
	resent *a2a.Message
}

// idempotencySteps grade an append to an unknown artifact (B11) and
// resent messageIds (B14).
var idempotencySteps = []step[*idempotencyFamily]{
	agentStep("B11.append-unknown", (*idempotencyFamily).appendUnknown),
	agentStep("B14.resend-same", (*idempotencyFamily).resendSame),
	agentStep("B14.resend-different", (*idempotencyFamily).resendDifferent),
}

// appendUnknown has the agent send a chunk with append true for an
// artifact ("never-sent") it never sent.
func (f *idempotencyFamily) appendUnknown(ctx context.Context, r *rec) {
	if _, ok := f.s.say("append-unknown"); !ok {
		r.skip("the agent's behaviour contract (%s) has no way to ask for an append to an artifact never sent", f.s.rep.Contract)
		return
	}
	res, resp := f.send(ctx, f.msg("append-unknown"), nil, callOpts{})
	if !r.gradable(res) {
		return
	}
	t := resp.GetTask()
	completed := t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED
	switch {
	case t == nil:
		r.differs("Parley starts a new artifact").na("no task: %s", res.outcome())
	case completed && slices.ContainsFunc(t.GetArtifacts(), func(a *a2a.Artifact) bool { return a.GetArtifactId() == "never-sent" }):
		r.same().na("COMPLETED; the chunk started a new artifact")
	case completed:
		r.differs("Parley starts a new artifact").na("COMPLETED; the chunk was dropped")
	default:
		r.differs("Parley starts a new artifact").na("the task ended %s", stateName(t.GetStatus().GetState()))
	}
}

func (f *idempotencyFamily) resendSame(ctx context.Context, r *rec) {
	f.resent = f.msg("hello")
	res1, resp1 := f.send(ctx, f.resent, nil, callOpts{})
	res2, resp2 := f.send(ctx, f.resent, nil, callOpts{})
	r.Sent = "the same request twice: " + describeRequest(res1.ex)
	r.Received = describeResponse(res1) + " | " + describeResponse(res2)
	switch {
	case res1.failed() || res2.failed():
		r.skip("could not complete the requests")
	case resp1.GetTask() == nil:
		r.skip("the first send returned no task: %s", res1.outcome())
	case resp2.GetTask().GetId() == resp1.GetTask().GetId():
		r.same().na("the resend returned the original task %s", resp1.GetTask().GetId())
	case resp2.GetTask() != nil:
		r.differs("Parley returns the original result without running the agent again").na("the resend created a second task %s", resp2.GetTask().GetId())
	default:
		r.differs("Parley returns the original result").na("the resend answered %s", res2.outcome())
	}
}

// resendDifferent sends other content under the messageId of
// B14.resend-same.
func (f *idempotencyFamily) resendDifferent(ctx context.Context, r *rec) {
	m := f.msg("something else")
	m.MessageId = f.resent.GetMessageId()
	res, resp := f.send(ctx, m, nil, callOpts{})
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeInvalidParams):
		r.same().na("refused: %s", describeError(res.err))
	case resp.GetTask() != nil:
		r.differs("Parley refuses with InvalidParamsError").na("accepted as a new message (task %s)", resp.GetTask().GetId())
	default:
		r.differs("Parley refuses with InvalidParamsError").na("%s", res.outcome())
	}
}
