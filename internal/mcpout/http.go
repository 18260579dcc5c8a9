package mcpout

import (
	"net"
	"net/http"
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

// Handler serves the bridge over MCP's streamable HTTP transport at Path
// (MCP 2025-06-18 and later, "Streamable HTTP"). The SDK's handler keeps
// the sessions (Mcp-Session-Id: one MCP server per session, a request for
// an unknown session is 404) and refuses a request that reached a loopback
// address with a Host that is not loopback (DNS rebinding). What the
// transport's rules ask and the SDK leaves to its user is added here: a
// request whose Origin is not the server's own origin is refused with 403
// Forbidden, on every method (the SDK's optional cross-origin check covers
// only unsafe methods, and a browser's GET opens the SSE stream).
func (b *Bridge) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.Server() },
		&mcp.StreamableHTTPOptions{Logger: b.sdkLog(), SessionTimeout: SessionIdle})
	mux := http.NewServeMux()
	mux.Handle(Path, originGuard(h))
	return mux
}

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
