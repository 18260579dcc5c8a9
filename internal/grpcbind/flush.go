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
// (docs/performance.md, 2026-12-07).

// flushGate is the ResponseWriter a server stream's connect-go handler
// writes to: its Flush does nothing while held.
type flushGate struct {
	http.ResponseWriter
	held bool
}

// flushGateKey is the request context key of a stream's flushGate.
type flushGateKey struct{}

// gateFlushes returns w behind a flushGate, and r with the gate in its
// context for Handler.stream.
func gateFlushes(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	g := &flushGate{ResponseWriter: w}
	return g, r.WithContext(context.WithValue(r.Context(), flushGateKey{}, g))
}

// hold sets whether flushes are held back; nil holds nothing.
func (g *flushGate) hold(held bool) {
	if g != nil {
		g.held = held
	}
}

// Flush flushes the response unless flushes are held.
func (g *flushGate) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok && !g.held {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (g *flushGate) Unwrap() http.ResponseWriter { return g.ResponseWriter }
