package testkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// FuzzTimeout bounds one request of a fuzz target. The conformance agent's
// "slow MS" holds a blocking send or a stream for as long as the input
// says; such a request ends with its context, and that is fine.
const FuzzTimeout = 2 * time.Second

// FuzzCore returns the core a fuzz target puts its binding in front of:
// the conformance agent on a memory store, described by a card with the
// one interface, logging nowhere. It is closed when the test ends, and
// must close cleanly.
func FuzzCore(tb testing.TB, iface *a2a.AgentInterface) *server.Server {
	tb.Helper()
	core, _ := NewCore(tb, []*a2a.AgentInterface{iface}, &Options{Quiet: true, CheckClose: true})
	return core
}

// Exchange serves req with h, as a client of protocol version 1.0 under a
// FuzzTimeout deadline, and returns the recorded answer and whether the
// deadline passed. It fails the test when h takes much longer than the
// deadline: a handler must end a request when its context does.
func Exchange(tb testing.TB, h http.Handler, req *http.Request) (rec *httptest.ResponseRecorder, timedOut bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), FuzzTimeout)
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("A2A-Version", "1.0")
	rec = httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	if d := time.Since(start); d > FuzzTimeout+5*time.Second {
		tb.Fatalf("%s %s took %v (timeout %v)", req.Method, req.URL, d, FuzzTimeout)
	}
	return rec, ctx.Err() != nil
}
