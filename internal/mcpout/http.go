package mcpout

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/internal/httpx"
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

// SessionIdle is how long a streamable HTTP session may go without a
// request before it is closed (a call in progress counts as a request),
// so that the sessions of clients that left without DELETE do not pile up.
const SessionIdle = 30 * time.Minute

// DefaultMaxSessions is Options.MaxSessions's default: the streamable HTTP
// sessions kept at once.
const DefaultMaxSessions = 100

// SessionsRetryAfter is the Retry-After, in seconds, of an initialize
// refused because every session is taken.
const SessionsRetryAfter = 60

// Handler serves the bridge over MCP's streamable HTTP transport at Path
// (MCP 2025-06-18 and later, "Streamable HTTP"). The SDK's handler keeps
// the sessions (Mcp-Session-Id: one MCP server per session, a request for
// an unknown session is 404) and refuses a request that reached a loopback
// address with a Host that is not loopback (DNS rebinding). What the
// transport's rules ask and the SDK leaves to its user is added here: a
// request whose Origin is not the server's own origin is refused with 403
// Forbidden, on every method (the SDK's optional cross-origin check covers
// only unsafe methods, and a browser's GET opens the SSE stream). The
// sessions are bounded too (Options.MaxSessions; see sessionGuard), and
// so is the time a client may take to read a message (Options.WriteTimeout;
// see writeGuard).
func (b *Bridge) Handler() http.Handler {
	srv := b.Server() // one server for every session, so that it knows them all
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: b.sdkLog(), SessionTimeout: SessionIdle})
	mux := http.NewServeMux()
	mux.Handle(Path, originGuard(newSessionGuard(srv, b.max, writeGuard(b.write, h))))
	return mux
}

// writeGuard bounds each write of an answer by d: a client that stops
// reading an SSE stream (or a JSON answer) otherwise holds the handler's
// goroutine and the message it is writing (up to a whole result) for as
// long as its connection stays open, which the SDK does not bound. The
// deadline is set for each write and flush, and cleared after it, so an
// SSE stream may stay idle for as long as it likes. A write past it fails:
// the SDK drops that message (the session goes on), and net/http closes
// the connection.
func writeGuard(d time.Duration, next http.Handler) http.Handler {
	if d < 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}, r)
	})
}

// deadlineWriter is a ResponseWriter whose writes and flushes each have d
// to reach the connection.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) // best effort: a writer without deadlines writes unbounded
	defer w.rc.SetWriteDeadline(time.Time{})
	return w.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController.Flush calls.
func (w *deadlineWriter) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	defer w.rc.SetWriteDeadline(time.Time{})
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the writer's other methods.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sessionGuard bounds the sessions of a streamable HTTP handler: a POST
// without Mcp-Session-Id, which asks for a new session (an initialize),
// is refused with 503 Service Unavailable and a Retry-After (RFC 9110
// §15.6.4, §10.2.3) while max sessions are open, or being opened, until
// one closes (DELETE, or SessionIdle without a request). The MCP
// transport lets a server refuse a message with any HTTP error status
// (MCP 2025-11-25, "Sending Messages to the Server"); 503 rather than 429
// because the bound is the server's, not one client's rate. Requests of
// an open session are never refused here.
type sessionGuard struct {
	srv  *mcp.Server // knows the sessions open
	max  int         // negative: no bound
	next http.Handler

	mu      sync.Mutex
	opening int // new-session POSTs in progress, not yet in srv.Sessions
}

func newSessionGuard(srv *mcp.Server, max int, next http.Handler) http.Handler {
	if max < 0 {
		return next
	}
	return &sessionGuard{srv: srv, max: max, next: next}
}

func (g *sessionGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		g.next.ServeHTTP(w, r)
		return
	}
	if !g.reserve() {
		w.Header().Set("Retry-After", strconv.Itoa(SessionsRetryAfter))
		http.Error(w, "Service Unavailable: this MCP server has "+strconv.Itoa(g.max)+
			" sessions open, its most; retry once one has closed", http.StatusServiceUnavailable)
		return
	}
	rw := &releaseOnAnswer{ResponseWriter: w, release: g.release}
	defer rw.done()
	g.next.ServeHTTP(rw, r)
}

// reserve takes a place for a new session, or reports that none is left.
// The place is held until the POST's answer begins (or the POST ends):
// by then the session, if one was opened, is in srv.Sessions, which the
// SDK fills before it answers. So two initializes at once cannot both take
// the last place, and a client that opens sessions one after the other
// finds each counted once. Only initialized sessions count: the SDK opens
// a session for every POST without Mcp-Session-Id (the Go SDK client's
// server/discover probe before its initialize, for one) and closes it
// after answering if it was not an initialize, so such a passing session
// would otherwise still be counted when the client's initialize arrives.
func (g *sessionGuard) reserve() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.opening
	for s := range g.srv.Sessions() {
		if s.InitializeParams() != nil {
			n++
		}
	}
	if n >= g.max {
		return false
	}
	g.opening++
	return true
}

func (g *sessionGuard) release() {
	g.mu.Lock()
	g.opening--
	g.mu.Unlock()
}

// releaseOnAnswer gives back a sessionGuard place once, when the answer
// begins or, failing that, when the request ends.
type releaseOnAnswer struct {
	http.ResponseWriter
	release func()
	once    sync.Once
}

func (w *releaseOnAnswer) done() { w.once.Do(w.release) }

func (w *releaseOnAnswer) WriteHeader(code int) {
	w.done()
	w.ResponseWriter.WriteHeader(code)
}

func (w *releaseOnAnswer) Write(b []byte) (int, error) {
	w.done()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *releaseOnAnswer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// originGuard refuses a request with a foreign Origin: one that does not
// name the host the request was sent to (httpx.SameOrigin, the rule
// a2ahttp's guard applies too). A request without Origin (not from a
// browser) passes.
func originGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !httpx.SameOrigin(o, r.Host) {
			http.Error(w, "Forbidden: the Origin "+o+" may not call this MCP server", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackAddr is addr with the host 127.0.0.1 when it names none
// (":8080"), so that --http listens on this machine only unless told
// otherwise.
func LoopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}
