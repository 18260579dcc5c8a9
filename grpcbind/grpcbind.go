// Package grpcbind is the gRPC binding of A2A (brief §10): the service
// lf.a2a.v1.A2AService generated from proto/a2a.proto, served with
// connect-go from a plain http.Handler, so that it shares one port (and one
// authentication step) with the JSON-RPC and HTTP+JSON bindings. It also
// serves the standard gRPC health service and, unless turned off, gRPC
// server reflection.
//
// Like the other bindings it only translates: service parameters come from
// the a2a-version and a2a-extensions metadata into an a2a.CallInfo, every
// rule is decided by the a2a.Service it serves, and an *a2a.Error becomes a
// google.rpc.Status with the §5.4 gRPC code, a google.rpc.ErrorInfo
// (reason, domain a2a-protocol.org, metadata) and, for field violations, a
// google.rpc.BadRequest.
//
// The handler speaks the gRPC protocol over HTTP/2 (cleartext h2c or TLS)
// and gRPC-Web over any HTTP version; other requests (connect-go's own
// Connect protocol among them) get 415 Unsupported Media Type. It needs an
// http.Server that allows HTTP/2; see the package example.
package grpcbind

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2a/a2aconnect"
	"parley.dev/parley/internal/httpx"
)

// DefaultMaxRecvBytes is the default limit on one request message: 10 MiB,
// the same as the HTTP bindings' body limit.
const DefaultMaxRecvBytes = 10 << 20

// CompressMinBytes is the size from which a response message is gzipped
// (for clients that accept gzip).
const CompressMinBytes = 16 << 10

// Service names this package serves besides the A2A service.
const (
	HealthService          = grpchealth.HealthV1ServiceName
	ReflectionService      = grpcreflect.ReflectV1ServiceName
	ReflectionAlphaService = grpcreflect.ReflectV1AlphaServiceName
)

// Options configure a Handler. The zero value of every field means its
// default.
type Options struct {
	// MaxRecvBytes limits the size of one request message (default 10 MiB).
	// A larger one is refused with RESOURCE_EXHAUSTED.
	MaxRecvBytes int
	// MaxSendBytes limits the size of one response message (default: no
	// limit). A larger one fails the call with RESOURCE_EXHAUSTED.
	MaxSendBytes int
	// DisableReflection turns gRPC server reflection off (it is on by
	// default, so that tools such as grpcurl work without the proto file).
	DisableReflection bool
	// Logger receives internal error causes (default slog.Default()).
	Logger *slog.Logger
}

// Handler serves the gRPC binding for one a2a.Service, plus health and
// reflection. Create it with NewHandler. It may serve requests
// concurrently; SetServing may be called at any time.
//
// An authentication middleware in front of it records the caller in the
// request context's a2a.CallInfo (Principal), as for the HTTP bindings;
// the handler fills in the service parameters.
type Handler struct {
	opts   Options
	routes []route
	health *grpchealth.StaticChecker
	errw   *connect.ErrorWriter
	procs  map[string]bool // the A2A procedures, "/lf.a2a.v1.A2AService/Name"
}

// route is a handler for every path below prefix.
type route struct {
	prefix string
	h      http.Handler
}

// NewHandler returns a Handler. opts may be nil.
func NewHandler(svc a2a.Service, opts *Options) *Handler {
	h := &Handler{}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxRecvBytes <= 0 {
		h.opts.MaxRecvBytes = DefaultMaxRecvBytes
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	limits := []connect.HandlerOption{
		connect.WithReadMaxBytes(h.opts.MaxRecvBytes),
		// Compressing every small message costs more CPU than it saves on
		// the wire (the HTTP bindings do not compress at all): only large
		// responses are gzipped, when the client accepts it.
		connect.WithCompressMinBytes(CompressMinBytes),
	}
	if h.opts.MaxSendBytes > 0 {
		limits = append(limits, connect.WithSendMaxBytes(h.opts.MaxSendBytes))
	}
	h.errw = connect.NewErrorWriter()
	h.procs = make(map[string]bool, len(a2a.Methods))
	for _, m := range a2a.Methods {
		h.procs["/"+a2aconnect.A2AServiceName+"/"+m.Name] = true
	}

	names := []string{a2aconnect.A2AServiceName}
	h.health = grpchealth.NewStaticChecker(a2aconnect.A2AServiceName)
	h.add(a2aconnect.NewA2AServiceHandler(&service{svc: svc, log: h.opts.Logger}, limits...))
	h.add(grpchealth.NewHandler(h.health))
	names = append(names, HealthService)
	if !h.opts.DisableReflection {
		names = append(names, ReflectionService, ReflectionAlphaService)
		reflector := grpcreflect.NewStaticReflector(names...)
		h.add(grpcreflect.NewHandlerV1(reflector))
		h.add(grpcreflect.NewHandlerV1Alpha(reflector))
	}
	return h
}

func (h *Handler) add(prefix string, handler http.Handler) {
	h.routes = append(h.routes, route{prefix, handler})
}

// SetServing sets the status the health service reports for the server
// ("") and for lf.a2a.v1.A2AService: SERVING (the initial state) or
// NOT_SERVING (for example while the server drains before it stops).
func (h *Handler) SetServing(serving bool) {
	st := grpchealth.StatusServing
	if !serving {
		st = grpchealth.StatusNotServing
	}
	h.health.SetStatus("", st)
	h.health.SetStatus(a2aconnect.A2AServiceName, st)
}

// IsGRPC reports whether r is a gRPC or gRPC-Web request: its Content-Type
// is application/grpc, optionally followed by +codec, -web or parameters.
func IsGRPC(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !IsGRPC(r) {
		http.Error(w, "not a gRPC request (Content-Type application/grpc)", http.StatusUnsupportedMediaType)
		return
	}
	// Service parameters (brief §10.2) are gRPC metadata, that is HTTP/2
	// headers, and nothing else: the same rules as on the HTTP bindings
	// apply (DESIGN B7), but there is no query-parameter fallback.
	ci := httpx.MetadataCallInfo(r)
	r = r.WithContext(a2a.WithCallInfo(r.Context(), ci))
	path := r.URL.Path
	if strings.HasPrefix(path, "/"+a2aconnect.A2AServiceName+"/") && !h.procs[path] {
		h.unimplemented(w, r)
		return
	}
	for _, rt := range h.routes {
		if strings.HasPrefix(path, rt.prefix) {
			rt.h.ServeHTTP(w, r)
			return
		}
	}
	h.unimplemented(w, r)
}

// unimplemented answers a request for an unknown service or method with the
// gRPC status UNIMPLEMENTED (not a bare HTTP 404).
func (h *Handler) unimplemented(w http.ResponseWriter, r *http.Request) {
	h.errw.Write(w, r, connect.NewError(connect.CodeUnimplemented, errors.New("unknown method "+r.URL.Path)))
}

// service implements the generated handler interface by translating each
// call to the a2a.Service.
type service struct {
	svc a2a.Service
	log *slog.Logger
}

var _ a2aconnect.A2AServiceHandler = (*service)(nil)

func (s *service) SendMessage(ctx context.Context, req *connect.Request[a2a.SendMessageRequest]) (*connect.Response[a2a.SendMessageResponse], error) {
	return unary(ctx, s, a2a.MethodSendMessage, req.Msg, s.svc.SendMessage)
}

func (s *service) SendStreamingMessage(ctx context.Context, req *connect.Request[a2a.SendMessageRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	return s.stream(ctx, a2a.MethodSendStreamingMessage, s.svc.SendStreamingMessage(ctx, req.Msg), out)
}

func (s *service) GetTask(ctx context.Context, req *connect.Request[a2a.GetTaskRequest]) (*connect.Response[a2a.Task], error) {
	return unary(ctx, s, a2a.MethodGetTask, req.Msg, s.svc.GetTask)
}

func (s *service) ListTasks(ctx context.Context, req *connect.Request[a2a.ListTasksRequest]) (*connect.Response[a2a.ListTasksResponse], error) {
	return unary(ctx, s, a2a.MethodListTasks, req.Msg, s.svc.ListTasks)
}

func (s *service) CancelTask(ctx context.Context, req *connect.Request[a2a.CancelTaskRequest]) (*connect.Response[a2a.Task], error) {
	return unary(ctx, s, a2a.MethodCancelTask, req.Msg, s.svc.CancelTask)
}

func (s *service) SubscribeToTask(ctx context.Context, req *connect.Request[a2a.SubscribeToTaskRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	return s.stream(ctx, a2a.MethodSubscribeToTask, s.svc.SubscribeToTask(ctx, req.Msg), out)
}

func (s *service) CreateTaskPushNotificationConfig(ctx context.Context, req *connect.Request[a2a.TaskPushNotificationConfig]) (*connect.Response[a2a.TaskPushNotificationConfig], error) {
	return unary(ctx, s, a2a.MethodCreateTaskPushNotificationConfig, req.Msg, s.svc.CreateTaskPushNotificationConfig)
}

func (s *service) GetTaskPushNotificationConfig(ctx context.Context, req *connect.Request[a2a.GetTaskPushNotificationConfigRequest]) (*connect.Response[a2a.TaskPushNotificationConfig], error) {
	return unary(ctx, s, a2a.MethodGetTaskPushNotificationConfig, req.Msg, s.svc.GetTaskPushNotificationConfig)
}

func (s *service) ListTaskPushNotificationConfigs(ctx context.Context, req *connect.Request[a2a.ListTaskPushNotificationConfigsRequest]) (*connect.Response[a2a.ListTaskPushNotificationConfigsResponse], error) {
	return unary(ctx, s, a2a.MethodListTaskPushNotificationConfigs, req.Msg, s.svc.ListTaskPushNotificationConfigs)
}

func (s *service) GetExtendedAgentCard(ctx context.Context, req *connect.Request[a2a.GetExtendedAgentCardRequest]) (*connect.Response[a2a.AgentCard], error) {
	return unary(ctx, s, a2a.MethodGetExtendedAgentCard, req.Msg, s.svc.GetExtendedAgentCard)
}

func (s *service) DeleteTaskPushNotificationConfig(ctx context.Context, req *connect.Request[a2a.DeleteTaskPushNotificationConfigRequest]) (*connect.Response[emptypb.Empty], error) {
	return unary(ctx, s, a2a.MethodDeleteTaskPushNotificationConfig, req.Msg, func(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
		if err := s.svc.DeleteTaskPushNotificationConfig(ctx, req); err != nil {
			return nil, err
		}
		return &emptypb.Empty{}, nil
	})
}

// unary runs one unary operation and echoes the activated extensions in
// the response metadata (brief §9.3).
func unary[Req, Resp any](ctx context.Context, s *service, op string, req *Req, call func(context.Context, *Req) (*Resp, error)) (*connect.Response[Resp], error) {
	resp, err := call(ctx, req)
	ci := a2a.CallInfoFrom(ctx)
	if err != nil {
		return nil, s.fail(ctx, op, ci, err)
	}
	out := connect.NewResponse(resp)
	setExtensions(out.Header(), ci)
	return out, nil
}

// stream forwards a stream of events. An error before the first event is
// the call's status with no message sent; a later one ends the stream with
// that status. When the stream ends because the call's context ended (the
// client's deadline passed, or the server is stopping; when the client went
// away nobody reads it) the status is DEADLINE_EXCEEDED or UNAVAILABLE
// rather than OK, so that a client never mistakes it for the normal end of
// the stream, which only the core decides (DESIGN B2).
func (s *service) stream(ctx context.Context, op string, seq iter.Seq2[a2a.StreamEvent, error], out *connect.ServerStream[a2a.StreamResponse]) error {
	ci := a2a.CallInfoFrom(ctx)
	sent := false
	for ev, err := range seq {
		if err != nil {
			return s.fail(ctx, op, ci, err)
		}
		if !sent {
			setExtensions(out.ResponseHeader(), ci)
			sent = true
		}
		if err := out.Send(ev.Response); err != nil {
			return err // the client is gone or the message is over the limit
		}
	}
	switch {
	case ctx.Err() != nil:
		return ended(ctx)
	case !sent:
		return s.fail(ctx, op, ci, a2a.NewError(a2a.CodeInternal, "the stream ended without an event"))
	}
	return nil
}

// ended is the status of a stream cut short by its context.
func ended(ctx context.Context) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("the call's deadline passed; the task goes on: use SubscribeToTask to follow it"))
	default:
		return connect.NewError(connect.CodeUnavailable, errors.New("the stream was closed by the server; the task goes on: use SubscribeToTask to follow it"))
	}
}

// fail logs a server-side error and converts it to the wire status. The
// error of a call whose context ended (a context error, not an A2A error)
// is reported as the end of the context, not as an internal error.
func (s *service) fail(ctx context.Context, op string, ci *a2a.CallInfo, err error) error {
	var ae *a2a.Error
	if ctx.Err() != nil && !errors.As(err, &ae) {
		return ended(ctx)
	}
	e := a2a.AsError(err)
	httpx.LogError(s.log, op, e)
	// Response metadata goes in the headers: gRPC sends an error's own
	// metadata as trailers, where HTTP forbids WWW-Authenticate.
	if info, ok := connect.CallInfoForHandlerContext(ctx); ok {
		h := info.ResponseHeader()
		setExtensions(h, ci)
		if e.Code == a2a.CodeUnauthenticated {
			h.Set("WWW-Authenticate", `Bearer realm="a2a"`)
		}
	}
	return Status(e)
}

// setExtensions echoes the activated extensions (brief §9.3).
func setExtensions(h http.Header, ci *a2a.CallInfo) {
	if ci != nil && len(ci.Activated) > 0 {
		h.Set(httpx.HeaderExtensions, strings.Join(ci.Activated, ", "))
	}
}

// Status converts an A2A error to its gRPC form (brief §10.6): the code of
// §5.4 (a2a.Code.GRPCStatus), the error's wire message, a
// google.rpc.ErrorInfo for the A2A errors (reason, domain a2a-protocol.org,
// metadata) and a google.rpc.BadRequest listing field violations. (The
// binding also answers an authentication error with the response metadata
// www-authenticate: Bearer realm="a2a", as the HTTP bindings do.)
func Status(e *a2a.Error) *connect.Error {
	code, _ := e.Code.GRPCStatus()
	ce := connect.NewError(connect.Code(code), errors.New(e.WireMessage()))
	if e.Code.IsA2A() {
		info := &errdetails.ErrorInfo{Reason: e.Code.Reason(), Domain: a2a.DomainA2A, Metadata: e.Metadata}
		if d, err := connect.NewErrorDetail(info); err == nil {
			ce.AddDetail(d)
		}
	}
	if len(e.Violations) > 0 {
		br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, len(e.Violations))}
		for i, v := range e.Violations {
			br.FieldViolations[i] = &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description}
		}
		if d, err := connect.NewErrorDetail(br); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}
