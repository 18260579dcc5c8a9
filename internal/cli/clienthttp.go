package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// httpClient returns the HTTP client of the command: it applies
// --a2a-version to every request (gRPC calls included, where it is the
// a2a-version metadata) and keeps the body of the card response for `card
// --json`. Both of its transports use the TLS settings of --ca-cert,
// --client-cert and --client-key.
func (c *common) httpClient(capture *cardCapture) *http.Client {
	var base http.RoundTripper = http.DefaultTransport
	h2 := h2Transport()
	if t := c.tlsTransport(); t != nil {
		base = t
		h2.TLSClientConfig = c.tls.Clone()
	}
	return &http.Client{Transport: &cliTransport{base: base, h2: h2, c: c, capture: capture}}
}

// h2Transport is a copy of the default transport that speaks HTTP/2 only:
// over TLS for https URLs, cleartext (h2c, prior knowledge) for http ones,
// as gRPC needs.
func h2Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	p := new(http.Protocols)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	t.Protocols = p
	return t
}

// cliTransport rewrites A2A-Version when --a2a-version was given, and
// sends gRPC calls over HTTP/2. The gRPC transport (package grpcbind's,
// which client.GRPC returns) uses a RoundTripper of its own making as it
// is, so this one must speak HTTP/2 for them.
type cliTransport struct {
	base    http.RoundTripper
	h2      http.RoundTripper // gRPC calls
	c       *common
	capture *cardCapture
	// cardAuth: the client of the public card, which answers a Bearer
	// challenge with --bearer (cardChallenge).
	cardAuth bool
}

// RoundTrip sends r with the command's A2A-Version, over HTTP/2 when it
// is a gRPC call, and captures the body of a card response.
func (t *cliTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.c.versionSet {
		r = r.Clone(r.Context())
		if t.c.version == "" {
			r.Header.Del("A2A-Version")
		} else {
			r.Header.Set("A2A-Version", t.c.version)
		}
	}
	if t.c.apiKey != "" || t.c.debugw != nil {
		r = r.Clone(r.Context())
		t.c.addAPIKey(r)
	}
	base := t.base
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		base = t.h2
	}
	if t.c.debugw != nil {
		t.c.logRequest(r)
	}
	resp, err := base.RoundTrip(r)
	if t.cardAuth && err == nil {
		resp, err = t.cardChallenge(r, resp)
	}
	if t.c.debugw != nil {
		if err != nil {
			fmt.Fprintf(t.c.debugw, "<-- %s: %v\n", t.c.redactURL(r.URL), err)
		} else {
			t.c.logResponse(resp)
		}
	}
	if err == nil && t.capture != nil && strings.HasSuffix(r.URL.Path, ".json") {
		resp.Body = t.capture.wrap(resp.Body)
	}
	return resp, err
}

// cardCapture keeps the raw body of the card response.
type cardCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// wrap returns rc copying what is read from it into c, which it empties
// first.
func (c *cardCapture) wrap(rc io.ReadCloser) io.ReadCloser {
	c.mu.Lock()
	c.buf.Reset()
	c.mu.Unlock()
	return struct {
		io.Reader
		io.Closer
	}{io.TeeReader(rc, (*lockedBuf)(c)), rc}
}

// bytes returns a copy of the captured body.
func (c *cardCapture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// lockedBuf writes into a cardCapture's buffer under its lock.
type lockedBuf cardCapture

// Write appends p to the buffer.
func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// resolve reads the agent card the reference url names: a catalog entry
// (catalog.go), a card file, or the card at a URL or a bare host's origin
// (agentURL).
func (c *common) resolve(ctx context.Context, url string, capture *cardCapture) (*a2a.AgentCard, error) {
	if strings.HasPrefix(url, catalogPrefix) {
		return c.resolveCatalog(ctx, url, capture)
	}
	if path := cardFile(url); path != "" {
		return c.readCardFile(path, capture)
	}
	url = agentURL(url)
	if err := checkAgentURL(url); err != nil {
		return nil, err
	}
	// No credential goes with the public card (A2A CLI SPEC §12.4): until
	// the card is read, nothing says which scheme the endpoint accepts. The
	// API key is placed only once the card is read (placeAPIKey). An
	// endpoint that protects its card (as A2A's discovery guide allows)
	// declares its scheme in its 401 challenge: cardChallenge.
	hc := c.httpClient(capture)
	hc.Transport.(*cliTransport).cardAuth = true
	return client.Resolve(ctx, url, &client.ResolveOptions{HTTPClient: hc, Header: c.header(), Warn: c.warn})
}

// connect resolves the card at url and returns a client for it.
func (c *common) connect(ctx context.Context, url string) (*client.Client, error) {
	card, err := c.resolve(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	return c.clientFor(ctx, card, url)
}

// clientFor returns a client for card, the card of the agent at url,
// with the token of `parley auth login` when no credential was given.
func (c *common) clientFor(ctx context.Context, card *a2a.AgentCard, url string) (*client.Client, error) {
	signedIn, err := c.useStoredToken(ctx, card)
	if err != nil {
		return nil, err
	}
	card = proto.Clone(card).(*a2a.AgentCard)
	ts, err := c.transports()
	if err != nil {
		return nil, err
	}
	grpcOverTLS(card, agentURL(url))
	if signedIn != "" {
		c.keepSignedInHost(card, signedIn)
	}
	c.preferred(card)
	if err := c.checkVersions(card); err != nil {
		return nil, err
	}
	if err := c.placeAPIKey(card); err != nil {
		return nil, err
	}
	c.warnRequiredExtensions(card)
	o := &client.Options{
		HTTPClient:   c.httpClient(nil),
		BearerToken:  c.token,
		Header:       c.header(),
		Transports:   ts,
		PollInterval: c.pollInterval,
		Extensions:   c.extensions,
	}
	if c.login != nil {
		o.BearerTokenFunc = c.login.token // refreshed when it expires mid-session
	}
	return client.New(card, o)
}

// dial bounds ctx by the command's timeout (def without --timeout, as
// context does) and connects to the agent at url within it. The caller
// defers done, which closes the client and then releases the context.
func (c *common) dial(ctx context.Context, def time.Duration, url string) (_ context.Context, _ *client.Client, done func(), _ error) {
	ctx, cancel := c.context(ctx, def)
	cl, err := c.connect(ctx, url)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, cl, func() {
		cl.Close()
		cancel()
	}, nil
}

// grpcOverTLS makes the card's gRPC dial targets (host:port, which say
// nothing about TLS) https URLs when the agent was reached over https: an
// agent served over TLS serves gRPC over TLS too (with the command's TLS
// settings, --ca-cert and the client certificate, as for the other calls).
func grpcOverTLS(card *a2a.AgentCard, agentURL string) {
	if !strings.HasPrefix(strings.ToLower(agentURL), "https://") {
		return
	}
	for _, in := range card.GetSupportedInterfaces() {
		u := in.GetUrl()
		if strings.EqualFold(in.GetProtocolBinding(), a2a.BindingGRPC) && u != "" && !strings.Contains(u, "://") {
			in.Url = "https://" + strings.TrimPrefix(u, "dns:///")
		}
	}
}

// checkAgentURL reports an agent URL that is not an absolute URL with a
// host, such as 127.0.0.1:8080 or localhost:8080 without their scheme, in
// one message that suggests the URL meant, instead of the URL parser's
// ("first path segment in URL cannot contain colon") or a request's.
func checkAgentURL(raw string) error {
	u, err := neturl.Parse(raw)
	if err == nil && u.Scheme != "" && u.Host != "" {
		return nil
	}
	lower := strings.ToLower(raw)
	if raw == "" || strings.Contains(raw, "://") || strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:") {
		return usageError{fmt.Errorf("%q is not a URL: want http://HOST:PORT or https://HOST[:PORT]", raw)}
	}
	return usageError{fmt.Errorf("%s is not a URL: did you mean http://%s?", raw, strings.TrimPrefix(raw, "//"))}
}

// warnRequiredExtensions names, on stderr, each extension the card
// declares required (A2A §4.6) that --extension does not declare: the
// agent will likely refuse the call (ExtensionSupportRequiredError). The
// tool implements no extension itself, so it declares one only when told
// to: --extension URI says the caller handles it (A2A CLI SPEC §13.3).
func (c *common) warnRequiredExtensions(card *a2a.AgentCard) {
	for _, x := range card.GetCapabilities().GetExtensions() {
		if x.GetRequired() && !slices.Contains(c.extensions, x.GetUri()) {
			c.warn(fmt.Sprintf("the agent requires the extension %s, which this call does not declare: "+
				"if you handle it, declare it with --extension %s", x.GetUri(), x.GetUri()))
		}
	}
}

// cardChallenge answers the card endpoint's 401 challenge for a bearer
// token (RFC 6750 §3: WWW-Authenticate: Bearer) with --bearer, once: the
// endpoint has then declared a scheme that takes the credential (A2A CLI
// SPEC §12.4). Without a challenge, or without --bearer, the 401 stands.
func (t *cliTransport) cardChallenge(r *http.Request, resp *http.Response) (*http.Response, error) {
	scheme, _, _ := strings.Cut(strings.TrimSpace(resp.Header.Get("WWW-Authenticate")), " ")
	if resp.StatusCode != http.StatusUnauthorized || t.c.token == "" || !strings.EqualFold(scheme, "Bearer") ||
		r.Header.Get("Authorization") != "" || (r.Body != nil && r.GetBody == nil) {
		return resp, nil
	}
	if t.c.debugw != nil {
		t.c.logResponse(resp)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.c.token)
	if t.c.debugw != nil {
		t.c.logRequest(r)
	}
	return t.base.RoundTrip(r)
}
