package check

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// capabilitySteps grade the refusal of an operation whose capability the
// card does not declare, where no other check does.
var capabilitySteps = []step[*bindingRun]{
	{Result{ID: "capabilities.no-streaming", Operation: a2a.MethodSendStreamingMessage, Title: "without capabilities.streaming, SendStreamingMessage is UnsupportedOperationError",
		Level: "MUST", Section: "§3.1.2, §3.3.4, §5.4",
		Requires: "SendStreamingMessage requires capabilities.streaming; an agent that does not declare it MUST return UnsupportedOperationError (-32004 / 400 / FAILED_PRECONDITION)"},
		(*bindingRun).noStreaming},
}

// noStreaming streams a message to an agent whose card does not declare
// streaming: it must be refused before anything runs.
func (b *bindingRun) noStreaming(ctx context.Context, r *rec) {
	if b.s.card.GetCapabilities().GetStreaming() {
		r.na("the card declares streaming (the stream checks grade it)")
		return
	}
	res := b.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}, callOpts{}, streamCtl{max: 5 * time.Second})
	defer func() { b.probes["SendStreamingMessage without the streaming capability"] = outcomeKey(res) }()
	if res.ok() {
		res.firstEventError() // an error sent as the first (and only) event of a stream
	}
	r.expect(b.t.binding, res, a2a.CodeUnsupportedOperation)
}
