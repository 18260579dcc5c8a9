package client

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
	"strings"
	"sync"
	"syscall"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2a/a2aconnect"
)

// GRPCTransport is the gRPC binding (brief §10): the service
// lf.a2a.v1.A2AService called with connect-go's gRPC protocol (not the
// Connect protocol) over HTTP/2. Service parameters and credentials travel
// as metadata (a2a-version, a2a-extensions, authorization, and the extra
// headers of the client); the tenant travels in the request messages, as
// the Client sets it.
//
// A server's status becomes an *a2a.Error: the google.rpc.ErrorInfo
// reason (domain a2a-protocol.org) names the A2A error, else the gRPC
// code does (NOT_FOUND: TaskNotFoundError, INVALID_ARGUMENT:
// InvalidParamsError, FAILED_PRECONDITION: UnsupportedOperationError,
// UNIMPLEMENTED: MethodNotFoundError, UNAUTHENTICATED and
// PERMISSION_DENIED: an authentication error, RESOURCE_EXHAUSTED: the
// request was too large, INTERNAL and the rest: InternalError); ErrorInfo
// metadata and google.rpc.BadRequest field violations are kept.
// UNAVAILABLE, DEADLINE_EXCEEDED and CANCELED from the server, a failed
// connection, a non-gRPC answer (a proxy's 503) and a broken stream are
// *TransportError values, so retries and interface fallback work as on the
// other bindings. Stream events carry no sequence number (StreamEvent.Seq
// is 0): the proto has no field for it.
//
// It is safe for concurrent use.
type GRPCTransport struct {
	target string // the interface url as the card gives it
	base   string // http(s)://host:port[/prefix]
	hc     *http.Client
	md     http.Header // metadata sent on every call
	rpc    a2aconnect.A2AServiceClient
}

var _ Transport = (*GRPCTransport)(nil)

// GRPC is the factory of the gRPC transport.
func GRPC() TransportFactory {
	return TransportFactory{Binding: a2a.BindingGRPC, New: func(iface *a2a.AgentInterface, cfg TransportConfig) (Transport, error) {
		return NewGRPCTransport(iface.GetUrl(), cfg)
	}}
}

// NewGRPCTransport returns a transport for the gRPC interface whose url is
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
func NewGRPCTransport(target string, cfg TransportConfig) (*GRPCTransport, error) {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	tlsSet := false
	if ht, ok := rt.(*http.Transport); ok {
		c := ht.Clone() // first: Clone completes net/http's lazy set-up of ht
		tlsSet = tlsConfigured(c.TLSClientConfig)
		p := new(http.Protocols)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		c.Protocols = p
		rt = c
	}
	base, err := grpcBaseURL(target, tlsSet)
	if err != nil {
		return nil, err
	}
	t := &GRPCTransport{
		target: target,
		base:   base,
		hc:     &http.Client{Transport: responseRecorder{rt}, Timeout: hc.Timeout},
		md:     http.Header{},
	}
	for k, v := range cfg.Header {
		if !reservedMetadata(k) {
			t.md[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	t.rpc = a2aconnect.NewA2AServiceClient(t.hc, base, connect.WithGRPC(), connect.WithReadMaxBytes(maxResponseSize))
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
// request with the metadata.
func begin[Req any](ctx context.Context, t *GRPCTransport, msg *Req) (context.Context, *callState, *connect.Request[Req]) {
	if msg == nil {
		msg = new(Req)
	}
	st := &callState{}
	req := connect.NewRequest(msg)
	h := req.Header()
	for k, v := range t.md {
		h[k] = v
	}
	return context.WithValue(ctx, callStateKey{}, st), st, req
}

// unaryGRPC performs one unary call.
func unaryGRPC[Req, Resp any](ctx context.Context, t *GRPCTransport, op string, msg *Req,
	call func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error)) (*Resp, error) {
	cctx, st, req := begin(ctx, t, msg)
	resp, err := call(cctx, req)
	if err != nil {
		return nil, t.failure(ctx, op, st, false, err)
	}
	return resp.Msg, nil
}

// streamGRPC performs one server-streaming call.
func streamGRPC[Req any](ctx context.Context, t *GRPCTransport, op string, msg *Req,
	call func(context.Context, *connect.Request[Req]) (*connect.ServerStreamForClient[a2a.StreamResponse], error)) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cctx, st, req := begin(ctx, t, msg)
		s, err := call(cctx, req)
		if err != nil {
			yield(a2a.StreamEvent{}, t.failure(ctx, op, st, false, err))
			return
		}
		defer func() {
			cancel() // a stream left early must not be drained
			s.Close()
		}()
		started := false
		for s.Receive() {
			started = true
			if !yield(a2a.StreamEvent{Response: s.Msg()}, nil) {
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(a2a.StreamEvent{}, t.failure(ctx, op, st, started, err))
		}
	}
}

// failure turns a connect-go error into the error a Transport reports:
// the context's error when ctx is done; an *a2a.Error for a status the
// server sent; otherwise a *TransportError in the phase the call reached.
func (t *GRPCTransport) failure(ctx context.Context, op string, st *callState, started bool, err error) error {
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
		ph := PhaseResponse
		if started {
			ph = PhaseStream
		}
		return &TransportError{Op: op, URL: t.target, Phase: ph, GRPCStatus: grpcCodeName(ce.Code()), Err: err}
	}
	responded, status := st.get()
	switch {
	case responded && status != http.StatusOK:
		// Not a gRPC answer: a proxy's error page, or an HTTP server that
		// does not serve gRPC.
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return &a2a.Error{Code: a2a.CodeUnauthenticated, Message: http.StatusText(status)}
		}
		return &TransportError{Op: op, URL: t.target, Phase: PhaseResponse, StatusCode: status, Err: err}
	case started:
		return &TransportError{Op: op, URL: t.target, Phase: PhaseStream, Err: err}
	case !responded && isConnect(err):
		return &TransportError{Op: op, URL: t.target, Phase: PhaseConnect, Err: err}
	case !responded || brokenConnection(err):
		return &TransportError{Op: op, URL: t.target, Phase: PhaseRequest, Err: err}
	}
	// A response arrived that is not a gRPC answer the client can read
	// (wrong content type, an undecodable message).
	return &TransportError{Op: op, URL: t.target, Phase: PhaseResponse, StatusCode: status, Err: err}
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

// grpcCodes maps gRPC status codes without an ErrorInfo to A2A codes: the
// §5.4 table read backwards, with the general error for a shared code.
var grpcCodes = [...]struct {
	code connect.Code
	a2a  a2a.Code
}{
	{connect.CodeNotFound, a2a.CodeTaskNotFound},
	{connect.CodeInvalidArgument, a2a.CodeInvalidParams},
	{connect.CodeOutOfRange, a2a.CodeInvalidParams},
	{connect.CodeFailedPrecondition, a2a.CodeUnsupportedOperation},
	{connect.CodeUnimplemented, a2a.CodeMethodNotFound},
	{connect.CodeUnauthenticated, a2a.CodeUnauthenticated},
	{connect.CodePermissionDenied, a2a.CodeUnauthenticated},
	{connect.CodeResourceExhausted, a2a.CodeRequestTooLarge},
	{connect.CodeInternal, a2a.CodeInternal},
	{connect.CodeUnknown, a2a.CodeInternal},
	{connect.CodeDataLoss, a2a.CodeInternal},
	{connect.CodeAlreadyExists, a2a.CodeInternal},
	{connect.CodeAborted, a2a.CodeInternal},
}

// statusError converts a status the server sent into an *a2a.Error, or
// returns nil for the statuses that are transport conditions
// (UNAVAILABLE, DEADLINE_EXCEEDED, CANCELED).
func statusError(ce *connect.Error) *a2a.Error {
	e := &a2a.Error{Message: ce.Message()}
	reason, domain := "", ""
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			continue
		}
		switch m := v.(type) {
		case *errdetails.ErrorInfo:
			// An A2A ErrorInfo wins over one of another domain.
			if reason != "" && domain == a2a.DomainA2A && m.GetDomain() != a2a.DomainA2A {
				continue
			}
			reason, domain = m.GetReason(), m.GetDomain()
			for k, v := range m.GetMetadata() {
				if e.Metadata == nil {
					e.Metadata = map[string]string{}
				}
				e.Metadata[k] = v
			}
		case *errdetails.BadRequest:
			for _, v := range m.GetFieldViolations() {
				e.Violations = append(e.Violations, a2a.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	if c, ok := codeForReason(reason); ok {
		e.Code = c
		return e
	}
	for _, g := range grpcCodes {
		if g.code == ce.Code() {
			e.Code = g.a2a
			if g.a2a == a2a.CodeInternal && ce.Code() != connect.CodeInternal {
				e.Metadata = withMeta(e.Metadata, "grpcStatus", grpcCodeName(ce.Code()))
			}
			return e
		}
	}
	return nil
}

func withMeta(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// grpcCodeNames are the google.rpc.Code names, by number.
var grpcCodeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// grpcCodeName is the google.rpc.Code name of c, e.g. "NOT_FOUND".
func grpcCodeName(c connect.Code) string {
	if int(c) < len(grpcCodeNames) {
		return grpcCodeNames[c]
	}
	return strings.ToUpper(c.String())
}

// SendMessage implements a2a.Service.
func (t *GRPCTransport) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return unaryGRPC(ctx, t, a2a.MethodSendMessage, req, t.rpc.SendMessage)
}

// SendStreamingMessage implements a2a.Service.
func (t *GRPCTransport) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return streamGRPC(ctx, t, a2a.MethodSendStreamingMessage, req, t.rpc.SendStreamingMessage)
}

// GetTask implements a2a.Service.
func (t *GRPCTransport) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return unaryGRPC(ctx, t, a2a.MethodGetTask, req, t.rpc.GetTask)
}

// ListTasks implements a2a.Service.
func (t *GRPCTransport) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return unaryGRPC(ctx, t, a2a.MethodListTasks, req, t.rpc.ListTasks)
}

// CancelTask implements a2a.Service.
func (t *GRPCTransport) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return unaryGRPC(ctx, t, a2a.MethodCancelTask, req, t.rpc.CancelTask)
}

// SubscribeToTask implements a2a.Service.
func (t *GRPCTransport) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.StreamEvent, error] {
	return streamGRPC(ctx, t, a2a.MethodSubscribeToTask, req, t.rpc.SubscribeToTask)
}

// CreateTaskPushNotificationConfig implements a2a.Service.
func (t *GRPCTransport) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return unaryGRPC(ctx, t, a2a.MethodCreateTaskPushNotificationConfig, req, t.rpc.CreateTaskPushNotificationConfig)
}

// GetTaskPushNotificationConfig implements a2a.Service.
func (t *GRPCTransport) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return unaryGRPC(ctx, t, a2a.MethodGetTaskPushNotificationConfig, req, t.rpc.GetTaskPushNotificationConfig)
}

// ListTaskPushNotificationConfigs implements a2a.Service.
func (t *GRPCTransport) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return unaryGRPC(ctx, t, a2a.MethodListTaskPushNotificationConfigs, req, t.rpc.ListTaskPushNotificationConfigs)
}

// DeleteTaskPushNotificationConfig implements a2a.Service.
func (t *GRPCTransport) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	_, err := unaryGRPC[a2a.DeleteTaskPushNotificationConfigRequest, emptypb.Empty](ctx, t, a2a.MethodDeleteTaskPushNotificationConfig, req, t.rpc.DeleteTaskPushNotificationConfig)
	return err
}

// GetExtendedAgentCard implements a2a.Service.
func (t *GRPCTransport) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return unaryGRPC(ctx, t, a2a.MethodGetExtendedAgentCard, req, t.rpc.GetExtendedAgentCard)
}

// Close implements Transport: it closes the transport's idle connections.
func (t *GRPCTransport) Close() error {
	t.hc.CloseIdleConnections()
	return nil
}
