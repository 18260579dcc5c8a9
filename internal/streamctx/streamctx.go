// Package streamctx holds the context values a task stream's transport and
// the code on either end of it pass each other: the Idler through which a
// server binding takes over the wait between a stream's events, the
// position a client asks a SubscribeToTask stream to resume after, and
// what a long-poll GetTask, a call held open like a stream, needs on
// either end (Slot, WithVersion). They are
// transport plumbing, not A2A wire data, so they live outside package a2a;
// package server (Idler, WithIdler, IdlerFrom) and package client
// (WithResumeAfter, ResumeAfter, LastEventIDHeader) name them for users.
package streamctx

import "context"

// Idler is how a stream's binding takes over the wait between a stream's
// events. The code producing the events (Parley's server core) calls Idle
// when it has nothing to send, and Wake whenever events may have arrived
// for the stream. A binding can then park a long-idle stream without its
// HTTP machinery: the SSE binding parks an HTTP/1.1 stream on the bare
// connection, which keeps an idle stream small (the aim: an idle stream
// costs little, and 10,000 may watch one task).
type Idler interface {
	// Idle waits until ready is signalled or Wake is called (true), or the
	// stream's reader has gone or ctx has ended (false). It may write to the
	// stream meanwhile (keep-alives). It is called from one goroutine at a
	// time.
	Idle(ctx context.Context, ready <-chan struct{}) bool
	// Wake ends a current or the next Idle, from any goroutine.
	Wake()
}

type idlerKey struct{}

// WithIdler returns a context that carries a stream's Idler to the code
// producing its events.
func WithIdler(ctx context.Context, id Idler) context.Context {
	return context.WithValue(ctx, idlerKey{}, id)
}

// IdlerFrom returns the Idler set by WithIdler, or nil.
func IdlerFrom(ctx context.Context) Idler {
	id, _ := ctx.Value(idlerKey{}).(Idler)
	return id
}

// Resuming a stream from the task's event log: every event of a task has a
// sequence number (a2a.StreamEvent.Seq; 1 is the creation). A subscriber
// that lost its stream calls SubscribeToTask again naming the last number
// it received, and gets exactly the events after it, then live ones.

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

// A long-poll GetTask (A2A 1.1, spec §3.2.7) holds a unary call open
// until its task changes, as a stream would: it counts as an open stream
// for the per-caller limit of the HTTP handler (package a2ahttp's
// MaxStreams), which only the core knows to be needed, once it decided
// to hold.

// Slot takes a place among the caller's open streams for a held call: it
// returns the function that gives the place back, or the error that
// refuses the call, as a stream over the limit is refused.
type Slot func() (release func(), err error)

type slotKey struct{}

// WithSlot returns a context whose held call takes its place with take.
func WithSlot(ctx context.Context, take Slot) context.Context {
	return context.WithValue(ctx, slotKey{}, take)
}

// TakeSlot takes a place for a held call on ctx; with no Slot on ctx (no
// limit), it takes nothing.
func TakeSlot(ctx context.Context) (release func(), err error) {
	if take, _ := ctx.Value(slotKey{}).(Slot); take != nil {
		return take()
	}
	return func() {}, nil
}

type versionKey struct{}

// WithVersion returns a context asking a client transport to send the
// call with A2A-Version v instead of the client's own: the client asks a
// long-poll GetTask in 1.1, where currentGeneration exists.
func WithVersion(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// Version returns the version set by WithVersion, or "".
func Version(ctx context.Context) string {
	v, _ := ctx.Value(versionKey{}).(string)
	return v
}
