package server

import (
	"context"

	"parley.dev/parley/internal/streamctx"
)

// Idler is how a stream's binding takes over the wait between a stream's
// events. The code producing the events (Server, or an a2a.Service of one's
// own behind a binding) calls Idle when it has nothing to send, and Wake
// whenever events may have arrived for the stream. A binding can then park
// a long-idle stream without its HTTP machinery: Parley's SSE binding
// parks an HTTP/1.1 stream on the bare connection, which keeps an idle
// stream small (an idle stream costs little, and 10,000 may watch one
// task).
type Idler interface {
	// Idle waits until ready is signalled or Wake is called (true), or the
	// stream's reader has gone or ctx has ended (false). It may write to the
	// stream meanwhile (keep-alives). It is called from one goroutine at a
	// time.
	Idle(ctx context.Context, ready <-chan struct{}) bool
	// Wake ends a current or the next Idle, from any goroutine.
	Wake()
}

// WithIdler returns a context that carries a stream's Idler to the code
// producing its events: a binding calls it on the context of a streaming
// call it hands to a Server.
func WithIdler(ctx context.Context, id Idler) context.Context {
	return streamctx.WithIdler(ctx, id)
}

// IdlerFrom returns the Idler set by WithIdler, or nil.
func IdlerFrom(ctx context.Context) Idler { return streamctx.IdlerFrom(ctx) }
