package grpcbind

import (
	"context"
	"net/http"
)

// Flushes of a server stream. connect-go flushes the response after every
// message it sends, and over HTTP/2 each flush is a write to the
// connection of its own. The server core marks an event after which it
// already holds the next one (a2a.StreamEvent.More), as the SSE writer
// of the HTTP bindings reads it: such an event waits in the response's
// buffer and goes out in one write with the events after it, up to the
// first one the core does not follow at once. A stream of the conformance
// agent's chunks thus costs a few writes instead of one per event
// (docs/performance.md, 2026-12-07). The v0.3 gRPC binding's streams go
// through the same gate.

// FlushGate is the ResponseWriter a server stream's connect-go handler
// writes to (GatedStream): its Flush does nothing while held. Only the
// stream's handler goroutine touches it.
type FlushGate struct {
	http.ResponseWriter
	held bool
}

// flushGateKey is the request context key of a stream's FlushGate.
type flushGateKey struct{}

// GatedStream serves each request with h, a connect-go server-stream
// handler, behind a FlushGate that the stream finds in its context
// (FlushGateFrom).
func GatedStream(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := &FlushGate{ResponseWriter: w}
		h.ServeHTTP(g, r.WithContext(context.WithValue(r.Context(), flushGateKey{}, g)))
	})
}

// FlushGateFrom returns the FlushGate of a stream served by GatedStream;
// nil for any other context.
func FlushGateFrom(ctx context.Context) *FlushGate {
	g, _ := ctx.Value(flushGateKey{}).(*FlushGate)
	return g
}

// Hold sets whether flushes are held back: true while the stream's next
// event is at hand (a2a.StreamEvent.More), false before the stream ends.
// A nil gate holds nothing.
func (g *FlushGate) Hold(held bool) {
	if g != nil {
		g.held = held
	}
}

// Flush flushes the response unless flushes are held.
func (g *FlushGate) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok && !g.held {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (g *FlushGate) Unwrap() http.ResponseWriter { return g.ResponseWriter }
