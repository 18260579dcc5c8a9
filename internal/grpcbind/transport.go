package grpcbind

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
	"parley.dev/parley/internal/transport"
)

// Transport is the client half: the service lf.a2a.v1.A2AService called
// with connect-go's gRPC protocol (not the Connect protocol) over HTTP/2. Service parameters and credentials travel
// as metadata (a2a-version, a2a-extensions, authorization, and the extra
// headers of the client); the tenant travels in the request messages, as
// the Client sets it.
//
// A server's status becomes an *a2a.Error: the google.rpc.ErrorInfo
// reason (domain a2a-protocol.org) names the A2A error, else the gRPC
// code does (NOT_FOUND: TaskNotFoundError, INVALID_ARGUMENT:
// InvalidParamsError, FAILED_PRECONDITION: UnsupportedOperationError,
// UNIMPLEMENTED: MethodNotFoundError, UNAUTHENTICATED: an authentication
// error, PERMISSION_DENIED: PermissionDeniedError, RESOURCE_EXHAUSTED: the
// request was too large, INTERNAL and the rest: InternalError); ErrorInfo
// metadata and google.rpc.BadRequest field violations are kept.
// UNAVAILABLE, DEADLINE_EXCEEDED and CANCELED from the server, a failed
// connection, a non-gRPC answer (a proxy's 503) and a broken stream are
// *transport.Error values, so retries and interface fallback work as on the
// other bindings.
//
// The proto has no field for an event's sequence number, so a stream
// carries it once: the server's response header metadata first-event-id
// holds the number of the stream's first event, and each event after it
// counts up by one. The transport fills StreamEvent.Seq so; against a
// server that sends no first-event-id, Seq is 0 (unknown) and the Client
// cannot resume the stream. A SubscribeToTask call whose context carries a
// resume position (client.WithResumeAfter) sends it as the request metadata
// last-event-id.
//
// It is safe for concurrent use.
type Transport struct {
	target  string // the interface url as the card gives it
	base    string // http(s)://host:port[/prefix]
	hc      *http.Client
	md      transport.Headers                            // metadata sent on every call
	clients map[string]*connect.Client[message, message] // by method name
}

var _ transport.Transport = (*Transport)(nil)

// Factory is the transport.Factory of this binding.
func Factory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingGRPC, New: func(iface *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
		return NewTransport(iface.GetUrl(), cfg)
	}}
}

// MaxResponseBytes bounds one response message a client reads, as sent
// or once inflated (ClientReadLimit).
const MaxResponseBytes = 64 << 20

// NewTransport returns a transport for the gRPC interface whose url is
// target: a dial target "host:port" (the form a card gives), or
// "http://host:port" (cleartext) or "https://host:port" (TLS); a "dns:///"
// prefix is accepted too.
//
// A "host:port" target is dialled over cleartext HTTP/2 (h2c, prior
// knowledge), unless the HTTP client's transport has a TLS configuration
// (http.Transport.TLSClientConfig with root CAs, client certificates, a
// server name, verification hooks or InsecureSkipVerify), in which case it
// is dialled over TLS.
//
// Calls go through cfg.HTTPClient's transport. When it is nil or an
// *http.Transport, the gRPC transport uses a copy of it (its TLS settings,
// proxy and dialer kept) restricted to HTTP/2, as gRPC requires. Any other
// http.RoundTripper is used as it is and must speak HTTP/2 itself,
// including h2c for cleartext targets.
func NewTransport(target string, cfg transport.Config) (*Transport, error) {
	base, hc, md, err := Dial(target, cfg)
	if err != nil {
		return nil, err
	}
	hc.Transport = responseRecorder{hc.Transport}
	t := &Transport{target: target, base: base, hc: hc, md: transport.Headers{Fixed: md, Inject: cfg.Inject, Token: cfg.Token}}
	t.clients = make(map[string]*connect.Client[message, message])
	for m := range a2a.Methods() {
		t.clients[m.Name] = connect.NewClient[message, message](t.hc, base+procedure(m), connect.WithGRPC(),
			ClientReadLimit(MaxResponseBytes), connect.WithCodec(protoCodec{}),
			connect.WithResponseInitializer(responseOf(m)))
	}
	return t, nil
}

// tlsConfigured reports whether c says something about TLS. net/http
// fills in an empty configuration of its own (only NextProtos) the first
// time a transport is used, which does not count.
func tlsConfigured(c *tls.Config) bool {
	return c != nil && (c.RootCAs != nil || len(c.Certificates) > 0 || c.GetClientCertificate != nil ||
		c.ServerName != "" || c.InsecureSkipVerify || c.VerifyPeerCertificate != nil || c.VerifyConnection != nil)
}

// grpcBaseURL turns a gRPC interface url into the base URL of its calls.
func grpcBaseURL(target string, tlsDefault bool) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("a2a client: gRPC interface URL %q: %s", target, why)
	}
	s := strings.TrimSpace(target)
	s = strings.TrimPrefix(s, "dns:///")
	if s == "" {
		return "", bad("empty")
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", bad(err.Error())
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return "", bad("want host:port, http://host:port or https://host:port")
		}
		return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
	}
	u, err := url.Parse("//" + s)
	if err != nil || u.Host != s || u.Hostname() == "" {
		return "", bad("want host:port, http://host:port or https://host:port")
	}
	if tlsDefault {
		return "https://" + s, nil
	}
	return "http://" + s, nil
}

// reservedMetadata reports whether a header may not be sent as gRPC
// metadata: the protocol's own headers and HTTP/2 connection headers.
func reservedMetadata(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "content-type", "content-length", "content-encoding", "accept", "accept-encoding", "te", "connection",
		"transfer-encoding", "host", "keep-alive", "upgrade", "proxy-connection", "user-agent":
		return true
	}
	return strings.HasPrefix(k, "grpc-") || strings.HasPrefix(k, ":")
}

// callState records, for one call, whether an HTTP response arrived and
// with which status, so that a failure can be placed in its Phase.
type callState struct {
	mu        sync.Mutex
	responded bool
	status    int
}

type callStateKey struct{}

func (s *callState) get() (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.responded, s.status
}

// responseRecorder notes the status of each response in the call's
// callState.
type responseRecorder struct{ rt http.RoundTripper }

// CloseIdleConnections closes the wrapped transport's idle connections.
func (r responseRecorder) CloseIdleConnections() {
	if c, ok := r.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (r responseRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if st, ok := req.Context().Value(callStateKey{}).(*callState); ok && err == nil {
		st.mu.Lock()
		st.responded, st.status = true, resp.StatusCode
		st.mu.Unlock()
	}
	return resp, err
}

// begin prepares one call: a context that carries its callState, and the
// request with the metadata; it fails when the bearer token could not be
// got (transport.Headers.Apply).
func (t *Transport) begin(ctx context.Context, m *a2a.Method, msg proto.Message) (context.Context, *callState, *connect.Request[message], error) {
	if msg == nil || !msg.ProtoReflect().IsValid() {
		msg = m.NewRequest()
	}
	st := &callState{}
	req := connect.NewRequest(&message{Message: msg})
	h := req.Header()
	if err := t.md.Apply(ctx, h); err != nil {
		return nil, nil, nil, err
	}
	if seq, ok := streamctx.ResumeAfter(ctx); ok && m.Name == a2a.MethodSubscribeToTask {
		h.Set(streamctx.LastEventIDHeader, strconv.FormatUint(seq, 10)) // sent as last-event-id
	}
	return context.WithValue(ctx, callStateKey{}, st), st, req, nil
}

// Call implements a2a.Invoker.
func (t *Transport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	cctx, st, r, err := t.begin(ctx, m, req)
	if err != nil {
		return nil, err
	}
	resp, err := t.clients[m.Name].CallUnary(cctx, r)
	if err != nil {
		return nil, t.failure(ctx, m.Name, st, false, err)
	}
	return resp.Msg.Message, nil
}

// Stream implements a2a.Invoker.
func (t *Transport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cctx, st, r, err := t.begin(ctx, m, req)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		s, err := t.clients[m.Name].CallServerStream(cctx, r)
		if err != nil {
			yield(a2a.StreamEvent{}, t.failure(ctx, m.Name, st, false, err))
			return
		}
		defer func() {
			cancel() // a stream left early must not be drained
			s.Close()
		}()
		started := false
		var seq uint64 // the next event's number; 0 when the server sent none
		for s.Receive() {
			if !started {
				seq = firstEventID(s.ResponseHeader())
				started = true
			}
			if !yield(a2a.StreamEvent{Seq: seq, Response: s.Msg().Message.(*a2a.StreamResponse)}, nil) {
				return
			}
			if seq != 0 {
				seq++
			}
		}
		if err := s.Err(); err != nil {
			yield(a2a.StreamEvent{}, t.failure(ctx, m.Name, st, started, err))
		}
	}
}

// firstEventID reads the first-event-id response metadata: the sequence
// number of the stream's first event, 0 when absent or not a positive
// decimal number.
func firstEventID(h http.Header) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(h.Get(FirstEventIDHeader)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// failure turns a connect-go error into the error a Transport reports:
// the context's error when ctx is done; an *a2a.Error for a status the
// server sent; otherwise a *transport.Error in the phase the call reached.
func (t *Transport) failure(ctx context.Context, op string, st *callState, started bool, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		ce = connect.NewError(connect.CodeUnknown, err)
	}
	if connect.IsWireError(err) {
		if ae := statusError(ce); ae != nil {
			return ae
		}
		ph := transport.PhaseResponse
		if started {
			ph = transport.PhaseStream
		}
		wait, _ := RetryDelay(ce)
		return &transport.Error{Op: op, URL: t.target, Phase: ph, GRPCStatus: grpcCodeName(ce.Code()), RetryAfter: wait, Err: err}
	}
	responded, status := st.get()
	switch {
	case responded && status != http.StatusOK:
		// Not a gRPC answer: a proxy's error page, or an HTTP server that
		// does not serve gRPC.
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			code, _ := a2a.CodeFromWire(a2a.Wire{HTTP: status}) // UnauthenticatedError, PermissionDeniedError
			return &a2a.Error{Code: code, Message: http.StatusText(status)}
		}
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseResponse, StatusCode: status, Err: err}
	case started:
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseStream, Err: err}
	case !responded && transport.IsConnect(err):
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseConnect, Err: err}
	case !responded || brokenConnection(err):
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseRequest, Err: err}
	}
	// A response arrived that is not a gRPC answer the client can read
	// (wrong content type, an undecodable message).
	return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseResponse, StatusCode: status, Err: err}
}

// brokenConnection reports whether err says the connection or the HTTP/2
// stream broke (rather than that a response could not be understood).
func brokenConnection(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "stream error") || strings.Contains(msg, "connection") || strings.Contains(msg, "GOAWAY")
}

// Close implements transport.Transport: it closes idle connections.
func (t *Transport) Close() error {
	t.hc.CloseIdleConnections()
	return nil
}
