package a2a

import "context"

// Resuming a stream from the task's event log: every event of a task has a
// sequence number (StreamEvent.Seq; 1 is the creation). A subscriber that
// lost its stream calls SubscribeToTask again naming the last number it
// received, and gets exactly the events after it, then live ones.

// LastEventIDHeader is the HTTP header (the SSE standard's) and, in lower
// case, the gRPC metadata key that carries the resume position.
const LastEventIDHeader = "Last-Event-ID"

type resumeKey struct{}

// WithResumeAfter returns a context asking a client transport to resume a
// SubscribeToTask stream after the event numbered seq: the transport sends
// seq as Last-Event-ID (HTTP) or last-event-id metadata (gRPC).
func WithResumeAfter(ctx context.Context, seq uint64) context.Context {
	return context.WithValue(ctx, resumeKey{}, seq)
}

// ResumeAfter returns the position set by WithResumeAfter.
func ResumeAfter(ctx context.Context) (seq uint64, ok bool) {
	seq, ok = ctx.Value(resumeKey{}).(uint64)
	return seq, ok
}
