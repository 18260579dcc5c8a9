package mcpout

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

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
		&mcp.StreamableHTTPOptions{Logger: b.sdkLog()})
	mux := http.NewServeMux()
	mux.Handle(Path, originGuard(h))
	return mux
}

// originGuard refuses a request with a foreign Origin: one that is not
// the origin the request was sent to (scheme, host and port of the Host
// header). A request without Origin (not from a browser) passes.
func originGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
			http.Error(w, "Forbidden: the Origin "+o+" may not call this MCP server", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin (an Origin header) is r's own origin.
// "null" (an opaque origin) never is.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(hostPort(u.Host, u.Scheme), hostPort(r.Host, scheme))
}

// hostPort is host with its port, the scheme's default when it has none.
func hostPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.EqualFold(scheme, "https") {
		return net.JoinHostPort(strings.Trim(host, "[]"), "443")
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), "80")
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
