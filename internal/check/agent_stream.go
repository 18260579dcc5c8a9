package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// streamFamily is what the streaming checks share: the stream of
// "stream 3" (three artifact chunks) most of them grade, and what the
// AUTH_REQUIRED stream showed.
type streamFamily struct {
	*agentRun
	res  *result  // SendStreamingMessage("stream 3")
	evs  []*event // its events
	ok   bool     // it is a stream with events
	grpc bool
	auth authStream
}

// streamSteps grade streaming (B2, B8): SendStreamingMessage, then
// SubscribeToTask.
var streamSteps = []step[*streamFamily]{
	agentStep("B8.stream-type", (*streamFamily).streamType),
	agentStep("B2.stream-first-task", (*streamFamily).firstTask),
	agentStep("B2.stream-closes-terminal", (*streamFamily).closesTerminal),
	agentStep("stream.event-fields", (*streamFamily).eventFields),
	agentStep("stream.order", (*streamFamily).order),
	agentStep("stream.jsonrpc-ids", (*streamFamily).jsonrpcIDs),
	agentStep("stream.sse-ids", (*streamFamily).sseIDs),
	agentStep("B2.stream-message", (*streamFamily).message),
	agentStep("B2.stream-input-required", (*streamFamily).inputRequired),
	agentStep("B2.stream-auth-open", (*streamFamily).authOpen),
	agentStep("B2.stream-closes-on-cancel", (*streamFamily).closesOnCancel),
	agentStep("B2.subscribe-snapshot", (*streamFamily).subscribeSnapshot),
	agentStep("B2.subscribe-terminal", (*streamFamily).subscribeTerminal),
	agentStep("B2.fanout", (*streamFamily).fanout),
}

// streamChecks runs streamSteps when the card declares streaming.
func (a *agentRun) streamChecks(ctx context.Context) {
	if !a.s.card.GetCapabilities().GetStreaming() {
		endAll(a.bindingRun, streamSteps, NA, "the card does not declare streaming")
		return
	}
	f := &streamFamily{agentRun: a, grpc: a.t.binding == a2a.BindingGRPC}
	f.res = f.sendStream(ctx, "stream 3", streamCtl{settle: settledTerminal, after: 2 * time.Second})
	f.evs = f.res.ex.Events
	if f.grpc {
		f.ok = !f.res.failed() && f.res.err == nil && f.res.broken == "" && len(f.evs) > 0
	} else {
		f.ok = !f.res.failed() && f.res.ex.contentType() == "text/event-stream" && len(f.evs) > 0
	}
	runSteps(ctx, a.bindingRun, f, streamSteps)
}

// sendStream streams a message with the text.
func (f *streamFamily) sendStream(ctx context.Context, text string, ctl streamCtl) *result {
	return f.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: f.msg(text)}, callOpts{}, ctl)
}

func (f *streamFamily) streamType(_ context.Context, r *rec) {
	r.saw(f.res)
	switch {
	case f.grpc:
		r.na("gRPC streams are server-streaming calls (Content-Type %q), not Server-Sent Events", f.res.ex.Header.Get("Content-Type"))
	case r.incomplete(f.res):
	case f.res.ex.contentType() == "text/event-stream":
		r.same().pass("%s", f.res.ex.contentType())
	default:
		r.fail("%q (%s)", f.res.ex.contentType(), f.res.outcome())
	}
}

func (f *streamFamily) firstTask(_ context.Context, r *rec) {
	r.saw(f.res)
	switch {
	case !f.ok:
		r.skip("no stream (%s)", f.res.outcome())
	case f.evs[0].Resp.GetTask() == nil:
		r.fail("the first event is %s", f.evs[0].kind())
	default:
		r.pass("first event %s", f.evs[0].kind())
	}
}

func (f *streamFamily) closesTerminal(_ context.Context, r *rec) {
	r.saw(f.res)
	switch {
	case !f.ok:
		r.skip("no stream")
	case !a2a.IsTerminal(lastState(f.evs)):
		r.fail("the last event is %s, not a terminal state", lastKind(f.evs))
	case !f.res.ex.Closed:
		r.fail("the stream was still open 2 s after %s", lastKind(f.evs))
	default:
		r.same().pass("closed after %s", lastKind(f.evs))
	}
}

// eventFields grades every event: one StreamResponse member with its
// REQUIRED fields.
func (f *streamFamily) eventFields(_ context.Context, r *rec) {
	r.saw(f.res)
	if !f.ok {
		r.skip("no stream")
		return
	}
	var bad []string
	for i, ev := range f.evs {
		switch {
		case ev.DecodeErr != nil:
			bad = append(bad, fmt.Sprintf("event %d: %v", i, ev.DecodeErr))
		case ev.Err != nil:
			bad = append(bad, fmt.Sprintf("event %d is an error: %s", i, describeError(ev.Err)))
		case ev.Resp.GetPayload() == nil:
			bad = append(bad, fmt.Sprintf("event %d has no payload member", i))
		default:
			if miss := firstMissing(ev.Resp); miss != "" {
				bad = append(bad, fmt.Sprintf("event %d (%s): %s", i, ev.kind(), miss))
			}
		}
	}
	if len(bad) > 0 {
		r.fail("%s", strings.Join(bad, "; "))
	} else {
		r.pass("%d events", len(f.evs))
	}
}

// order reassembles the chunks of the artifact "stream" (the conformance
// agent's three chunks); for an ACTS agent (tck-stream-chunked, whose
// artifact and text the contract does not name), those of the first
// artifact streamed: two chunks or more, each after the first appended,
// the last one marked.
func (f *streamFamily) order(_ context.Context, r *rec) {
	r.saw(f.res)
	if !f.ok {
		r.skip("no stream")
		return
	}
	id := "stream"
	var text strings.Builder
	var flags []string
	var chunks []*a2a.TaskArtifactUpdateEvent
	for _, ev := range f.evs {
		au := ev.Resp.GetArtifactUpdate()
		if au != nil && f.acts() && len(chunks) == 0 {
			id = au.GetArtifact().GetArtifactId()
		}
		if au != nil && au.GetArtifact().GetArtifactId() == id {
			text.WriteString(a2a.JoinText(au.GetArtifact().GetParts()))
			flags = append(flags, fmt.Sprintf("append=%v lastChunk=%v", au.GetAppend(), au.GetLastChunk()))
			chunks = append(chunks, au)
		}
	}
	switch {
	case !f.acts() && text.String() == "chunk 0chunk 1chunk 2":
		r.pass("reassembled %q (%s)", text.String(), strings.Join(flags, "; "))
	case !f.acts():
		r.fail("reassembled %q, want \"chunk 0chunk 1chunk 2\"", text.String())
	case len(chunks) < 2:
		r.fail("%d chunk(s) of artifact %q; tck-stream-chunked asks for an artifact across several events", len(chunks), id)
	case chunks[0].GetAppend() || slices.ContainsFunc(chunks[1:], func(c *a2a.TaskArtifactUpdateEvent) bool { return !c.GetAppend() }) ||
		!chunks[len(chunks)-1].GetLastChunk():
		r.fail("artifact %q in chunks %s: want append from the second chunk and lastChunk on the last", id, strings.Join(flags, "; "))
	default:
		r.pass("artifact %q reassembled %q (%s)", id, text.String(), strings.Join(flags, "; "))
	}
}

func (f *streamFamily) jsonrpcIDs(_ context.Context, r *rec) {
	r.saw(f.res)
	switch {
	case f.grpc:
		r.na("gRPC stream messages are bare StreamResponses")
	case f.t.binding != a2a.BindingJSONRPC:
		r.na("HTTP+JSON events are bare StreamResponses")
	case !f.ok:
		r.skip("no stream")
	case !f.res.idOK:
		r.fail("an event carries another id than the request's %s", f.res.rpcID)
	default:
		r.pass("every event has id %s", f.res.rpcID)
	}
}

func (f *streamFamily) sseIDs(_ context.Context, r *rec) {
	r.saw(f.res)
	switch {
	case f.grpc:
		r.na("gRPC stream messages have no id (the proto has no field for one)")
		return
	case !f.ok:
		r.skip("no stream")
		return
	}
	n := 0
	for _, ev := range f.evs {
		if ev.HasID {
			n++
		}
	}
	if n == 0 {
		r.differs("Parley sends the task's event sequence number as id:").na("no id: lines")
	} else {
		r.same().na("%d of %d events carry id: (first %q)", n, len(f.evs), f.evs[0].ID)
	}
}

// message streams "message", which the agent answers with a direct reply.
func (f *streamFamily) message(ctx context.Context, r *rec) {
	res := f.sendStream(ctx, "message", streamCtl{settle: settledTerminal, after: 2 * time.Second})
	if !r.gradable(res) {
		return
	}
	evs := res.ex.Events
	switch {
	case len(evs) != 1 || evs[0].Resp.GetMessage() == nil:
		kinds := make([]string, len(evs))
		for i, e := range evs {
			kinds[i] = e.kind()
		}
		r.fail("events %v; want exactly one message", kinds)
	case !res.ex.Closed:
		r.fail("the stream stayed open after the message")
	default:
		r.same().pass("one %s, then closed", evs[0].kind())
	}
}

// inputRequired streams "input-required" and watches whether the stream
// closes at INPUT_REQUIRED.
func (f *streamFamily) inputRequired(ctx context.Context, r *rec) {
	res := f.sendStream(ctx, "input-required", streamCtl{settle: func(evs []*event) bool {
		return len(evs) > 0 && (a2a.IsInterrupted(evs[len(evs)-1].state()) || settledTerminal(evs))
	}, after: 700 * time.Millisecond})
	if !r.gradable(res) {
		return
	}
	evs := res.ex.Events
	switch {
	case lastState(evs) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		r.skip("the stream did not report INPUT_REQUIRED (last event %s): nothing to observe", lastKind(evs))
	case res.ex.Closed:
		r.same().na("closed at INPUT_REQUIRED")
	default:
		r.differs("Parley closes the stream at INPUT_REQUIRED").na("still open 0.7 s after INPUT_REQUIRED")
	}
	if id := streamTaskID(evs); id != "" {
		f.cancel(ctx, id)
	}
}
