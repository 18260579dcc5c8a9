package cli

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// withAgent puts the agent of --agent-card (or $A2ACLI_AGENT_CARD) first
// among the positional arguments, where the older spelling (`parley send
// URL TEXT`) has it. From the command line it is always the agent; from
// the environment or a file only when the first argument is not already
// an http(s) URL, so that the older spelling keeps working with the
// variable set.
func (c *common) withAgent(pos []string, given bool) []string {
	if c.agentCard == "" || (!given && len(pos) > 0 && isHTTPURL(pos[0])) {
		return pos
	}
	return append([]string{c.agentCard}, pos...)
}

// isHTTPURL reports whether s is an http:// or https:// URL.
func isHTTPURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// cardFile is the card file a reference names (file://PATH, the path of
// an existing file, or what can only be a path: absolute, relative with a
// dot, or a .json name), or "".
func cardFile(ref string) string {
	if p, ok := strings.CutPrefix(ref, "file://"); ok {
		return p
	}
	if isHTTPURL(ref) || strings.Contains(ref, "://") {
		return ""
	}
	if fileExists(ref) || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, ".") || strings.HasSuffix(ref, ".json") {
		return ref // a path, even of no file: reported as no card there
	}
	return ""
}

// agentURL is the URL an Agent Card reference names (A2A CLI SPEC §7.2): a
// URL as it is; a bare host or host:port, its https origin, or http for a
// loopback host (an agent on this machine, as in development).
func agentURL(ref string) string {
	if isHTTPURL(ref) || strings.Contains(ref, "://") || ref == "" || strings.ContainsAny(ref, " /") {
		return ref
	}
	host := ref
	if h, _, err := net.SplitHostPort(ref); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return "http://" + ref
	}
	return "https://" + ref
}

// readCardFile reads and checks the card in the file path.
func (c *common) readCardFile(path string, capture *cardCapture) (*a2a.AgentCard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &client.CardError{URL: "file://" + path, StatusCode: http.StatusNotFound, Err: err}
	}
	if capture != nil {
		capture.mu.Lock()
		capture.buf.Reset()
		capture.buf.Write(b)
		capture.mu.Unlock()
	}
	return client.ParseCard("file://"+path, b, c.warn)
}

// preferred reorders the card's interfaces by --transport: the bindings
// named first, in the order named, then the others in the card's order
// (A2A CLI SPEC §13.1; the card's order is the agent's preference, spec
// §8.3.1).
func (c *common) preferred(card *a2a.AgentCard) {
	if len(c.prefer) == 0 {
		return
	}
	rank := func(in *a2a.AgentInterface) int {
		for i, p := range c.prefer {
			if b, _ := bindingOf(p); strings.EqualFold(b, in.GetProtocolBinding()) {
				return i
			}
		}
		return len(c.prefer)
	}
	slices.SortStableFunc(card.SupportedInterfaces, func(a, b *a2a.AgentInterface) int { return rank(a) - rank(b) })
}

// checkVersions refuses, clearly, an agent that serves only versions
// before 1.0 when --a2a-version did not ask for one by name: a legacy
// version is an opt-in, never a silent fallback (A2A CLI SPEC §13.2).
func (c *common) checkVersions(card *a2a.AgentCard) error {
	if c.versionSet && strings.HasPrefix(c.version, "0.") {
		return nil
	}
	var old []string
	for _, in := range card.GetSupportedInterfaces() {
		v := in.GetProtocolVersion()
		if !strings.HasPrefix(v, "0.") {
			return nil
		}
		old = appendNew(old, v)
	}
	if len(old) == 0 {
		return nil
	}
	return a2a.NewError(a2a.CodeVersionNotSupported, "the agent serves A2A %s only, a version before 1.0: give --a2a-version %s to talk to it",
		strings.Join(old, ", "), old[0])
}

// apiKeyPlace is where --api-key goes: the location and name of the
// card's apiKey security scheme (spec §4.5.2).
type apiKeyPlace struct{ in, name string }

// placeAPIKey reads where the card wants an API key; without an apiKey
// scheme on the card, --api-key is a usage error (there is nowhere the
// agent said to put it).
func (c *common) placeAPIKey(card *a2a.AgentCard) error {
	if c.apiKey == "" {
		return nil
	}
	names := make([]string, 0, len(card.GetSecuritySchemes()))
	for n := range card.GetSecuritySchemes() {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if k := card.GetSecuritySchemes()[n].GetApiKeySecurityScheme(); k != nil && k.GetName() != "" {
			c.apiKeyAt = apiKeyPlace{in: strings.ToLower(k.GetLocation()), name: k.GetName()}
			return nil
		}
	}
	return usageError{fmt.Errorf("--api-key: the agent's card declares no apiKey security scheme, so it names no place for the key (see parley card get)")}
}

// addAPIKey puts --api-key on r where the card said.
func (c *common) addAPIKey(r *http.Request) {
	switch at := c.apiKeyAt; {
	case c.apiKey == "" || at.name == "":
	case at.in == "query":
		q := r.URL.Query()
		q.Set(at.name, c.apiKey)
		r.URL.RawQuery = q.Encode()
	case at.in == "cookie":
		r.AddCookie(&http.Cookie{Name: at.name, Value: c.apiKey})
	default:
		r.Header.Set(at.name, c.apiKey)
	}
}

// redacted is what --debug shows in place of a credential.
const redacted = "[REDACTED]"

// secretHeaders are the headers --debug never shows: the credentials and
// every service parameter (which may carry one, A2A CLI SPEC §12.1).
func (c *common) secretHeaders() map[string]bool {
	s := map[string]bool{"Authorization": true, "Cookie": true, "Set-Cookie": true, "Proxy-Authorization": true}
	if c.apiKeyAt.name != "" {
		s[http.CanonicalHeaderKey(c.apiKeyAt.name)] = true
	}
	for _, kv := range c.svcParams {
		k, _, _ := strings.Cut(kv, ":")
		s[http.CanonicalHeaderKey(strings.TrimSpace(k))] = true
	}
	return s
}

// redact writes h with the secret headers' values hidden.
func redact(w io.Writer, h http.Header, secret map[string]bool) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			if secret[k] {
				v = redacted
			}
			fmt.Fprintf(w, "  %s: %s\n", k, v)
		}
	}
}

// redactURL is u with the API key, when it travels in the query, hidden.
func (c *common) redactURL(u *neturl.URL) string {
	if c.apiKeyAt.in != "query" || c.apiKey == "" {
		return u.String()
	}
	v := *u
	q := v.Query()
	if q.Has(c.apiKeyAt.name) {
		q.Set(c.apiKeyAt.name, redacted)
	}
	v.RawQuery = q.Encode()
	return v.String()
}

// debugBody is how much of a body --debug shows.
const debugBody = 64 << 10

// logRequest writes r for --debug (its body read and put back).
func (c *common) logRequest(r *http.Request) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "--> %s %s\n", r.Method, c.redactURL(r.URL))
	redact(&b, r.Header, c.secretHeaders())
	if r.Body != nil && r.GetBody != nil && isText(r.Header) { // a gRPC body streams: not read here
		if body, err := r.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, debugBody))
			body.Close()
			writeBody(&b, r.Header, data)
		}
	}
	c.debugw.Write(b.Bytes())
}

// logResponse writes resp for --debug; a body that is not an event or
// gRPC stream is read, shown and put back.
func (c *common) logResponse(resp *http.Response) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<-- %s %s\n", resp.Status, c.redactURL(resp.Request.URL))
	redact(&b, resp.Header, c.secretHeaders())
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "application/grpc") {
		fmt.Fprintf(&b, "  (a stream: its events follow as they are shown)\n")
	} else if resp.Body != nil {
		data, err := io.ReadAll(io.LimitReader(resp.Body, debugBody))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), errReader{err}, resp.Body), resp.Body}
		writeBody(&b, resp.Header, data)
	}
	c.debugw.Write(b.Bytes())
}

// errReader returns err (nil: EOF) from Read, so that a body whose read
// failed for --debug fails the same way for its reader.
type errReader struct{ err error }

// Read returns the error.
func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// isText reports whether a message with header h has a JSON or text body.
func isText(h http.Header) bool {
	ct := h.Get("Content-Type")
	return strings.Contains(ct, "json") || strings.HasPrefix(ct, "text/")
}

// writeBody writes a body for --debug: text as it is, binary as a size.
func writeBody(w io.Writer, h http.Header, data []byte) {
	if len(data) == 0 {
		return
	}
	if isText(h) {
		fmt.Fprintf(w, "%s\n", bytes.TrimSpace(data))
		return
	}
	fmt.Fprintf(w, "  (%d bytes of %s)\n", len(data), orDash(h.Get("Content-Type")))
}
