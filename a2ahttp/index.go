package a2ahttp

import (
	"fmt"
	"net/http"
	"strings"

	"parley.dev/parley/a2a"
)

// indexPage is the text served for GET / (see serveIndex): what answers
// here, where the agent card is, and the card's interfaces. It holds only
// what the public card already says.
func indexPage(card *a2a.AgentCard) []byte {
	var b strings.Builder
	name := card.GetName()
	if name == "" {
		name = "this agent"
	}
	fmt.Fprintf(&b, "%s is an A2A agent. This path is not an A2A operation.\n\n", name)
	fmt.Fprintf(&b, "agent card: %s\n", CardPath)
	ins := card.GetSupportedInterfaces()
	if len(ins) > 0 {
		b.WriteString("interfaces:\n")
	}
	has := map[string]bool{}
	for _, in := range ins {
		fmt.Fprintf(&b, "  %-9s %s (A2A %s)\n", in.GetProtocolBinding(), in.GetUrl(), in.GetProtocolVersion())
		has[in.GetProtocolBinding()] = true
	}
	if len(has) > 0 {
		b.WriteString("\n")
	}
	if has[a2a.BindingJSONRPC] {
		b.WriteString("JSON-RPC takes POST requests at its URL.\n")
	}
	if has[a2a.BindingHTTPJSON] {
		b.WriteString("HTTP+JSON operations are below its URL: /message:send, /tasks/{id}, /extendedAgentCard, …\n")
	}
	if has[a2a.BindingGRPC] {
		b.WriteString("gRPC clients dial its host:port.\n")
	}
	return []byte(b.String())
}

// isIndex reports whether r asks for the index page: a GET or HEAD of
// exactly "/". No A2A operation is ever there: JSON-RPC is served to POST
// only, and every HTTP+JSON route has at least one segment below its base
// (a tenant, when present, adds one more).
func isIndex(r *http.Request) bool {
	return r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// serveIndex answers GET and HEAD of "/" with a short plain-text page
// pointing to the agent card and the interfaces, so that a person opening
// the server's address in a browser or with curl learns where to go
// instead of meeting a bare 404. Like the card, it needs no credentials.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(h.opts.CacheMaxAge.Seconds())))
	hd.Set("Link", "<"+CardPath+`>; rel="describedby"; type="application/json"`)
	if r.Method == http.MethodHead {
		return
	}
	w.Write(h.index)
}
