package client

import (
	"context"

	"parley.dev/parley/internal/streamctx"
)

// LastEventIDHeader is the HTTP header (the SSE standard's) and, in lower
// case, the gRPC metadata key that carries a resume position: the number
// of the last event of a task stream the client received (its
// a2a.StreamEvent.Seq).
const LastEventIDHeader = "Last-Event-ID"

// WithResumeAfter returns a context asking the client to resume a
// SubscribeToTask stream after the event numbered seq (an
// a2a.StreamEvent.Seq it received before): the transport sends seq as
// Last-Event-ID (HTTP) or last-event-id metadata (gRPC), and the server
// sends exactly the task's events after it, then live ones.
func WithResumeAfter(ctx context.Context, seq uint64) context.Context {
	return streamctx.WithResumeAfter(ctx, seq)
}

// ResumeAfter returns the position set by WithResumeAfter.
func ResumeAfter(ctx context.Context) (seq uint64, ok bool) { return streamctx.ResumeAfter(ctx) }
