// Package grpcbind is the gRPC binding of A2A (spec §10), both halves:
// Handler serves the service lf.a2a.v1.A2AService (spec §10.3) with
// connect-go from a plain http.Handler, so that it shares one port (and one
// authentication step) with the JSON-RPC and HTTP+JSON bindings, and
// Transport calls it. The handler also serves the standard gRPC health
// service and, unless turned off, gRPC server reflection. Both halves are
// driven by the method table (a2a.Methods): one generic connect-go handler
// and client per operation.
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
	"cmp"
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
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
	// MaxRecvBytes limits the size of one request message (default 10 MiB),
	// as sent or once inflated (ReadLimit). A larger one is refused with
	// RESOURCE_EXHAUSTED.
	MaxRecvBytes int
	// MaxSendBytes limits the size of one response message (default: no
	// limit). A larger one fails the call with RESOURCE_EXHAUSTED.
	MaxSendBytes int
	// DisableReflection turns gRPC server reflection off (it is on by
	// default, so that tools such as grpcurl work without the proto file).
	DisableReflection bool
	// ExtraServices names the other gRPC services served beside this
	// handler on the same port (the A2A v0.3 service, v03grpc.ServiceName),
	// so that reflection lists them as well. Reflection resolves their
	// descriptors in protoregistry.GlobalFiles, where a service's generated
	// package (internal/v03/v03pb) registers them once it is linked in.
	ExtraServices []string
	// Ready, when set, is asked by every health check that would report
	// SERVING: an error reports NOT_SERVING instead (the readiness of the
	// server's store, as /readyz asks it; see package health).
	Ready func(context.Context) error
	// Logger receives internal error causes (default slog.Default()).
	Logger *slog.Logger
	// Middleware wraps every operation the handler performs, the first
	// outermost (see a2a.Middleware).
	Middleware []a2a.Middleware
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
	inv    a2a.Invoker
	routes []route
	health *grpchealth.StaticChecker
	errw   *connect.ErrorWriter
	procs  map[string]http.Handler // the A2A procedures, "/lf.a2a.v1.A2AService/Name"
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
	h.errw = connect.NewErrorWriter()
	h.inv = a2a.Chain(a2a.NewInvoker(svc), h.opts.Middleware...)
	h.procs = operations(&h.opts, h.operation)

	names := []string{a2aconnect.A2AServiceName}
	h.health = grpchealth.NewStaticChecker(a2aconnect.A2AServiceName)
	h.add(grpchealth.NewHandler(&readyChecker{static: h.health, ready: h.opts.Ready}, ReadLimit(h.opts.MaxRecvBytes)))
	names = append(names, HealthService)
	names = append(names, h.opts.ExtraServices...)
	if !h.opts.DisableReflection {
		names = append(names, ReflectionService, ReflectionAlphaService)
		reflector := grpcreflect.NewStaticReflector(names...)
		h.add(grpcreflect.NewHandlerV1(reflector, ReadLimit(h.opts.MaxRecvBytes)))
		h.add(grpcreflect.NewHandlerV1Alpha(reflector, ReadLimit(h.opts.MaxRecvBytes)))
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

// readyChecker reports the static status (SetServing), and NOT_SERVING
// for SERVING while ready fails.
type readyChecker struct {
	static *grpchealth.StaticChecker
	ready  func(context.Context) error
}

func (c *readyChecker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	res, err := c.static.Check(ctx, req)
	if err == nil && res.Status == grpchealth.StatusServing && c.ready != nil && c.ready(ctx) != nil {
		res = &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}
	}
	return res, err
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
	// Service parameters (spec §10.2) are gRPC metadata, that is HTTP/2
	// headers, and nothing else: the same rules as on the HTTP bindings
	// apply (decision B7: A2A-Version compared on Major.Minor, missing
	// means 0.3), but there is no query-parameter fallback.
	ci := httpx.MetadataCallInfo(r)
	if a2a.CallInfoFrom(r.Context()) != ci { // else the context holds it already
		r = r.WithContext(a2a.WithCallInfo(r.Context(), ci))
	}
	path := r.URL.Path
	if op, ok := h.procs[path]; ok {
		op.ServeHTTP(w, r)
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

// WriteError answers a gRPC request with e as its status, for a request
// refused before the handler ran (by authentication in front of it, say).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, e *a2a.Error) {
	httpx.SetResponseHeaders(w.Header(), nil, e)
	h.errw.Write(w, r, Status(e))
}

// unimplemented answers a request for an unknown service or method with
// MethodNotFoundError: the gRPC status UNIMPLEMENTED (not a bare HTTP 404),
// with its ErrorInfo as on the other bindings.
func (h *Handler) unimplemented(w http.ResponseWriter, r *http.Request) {
	h.errw.Write(w, r, Status(a2a.NewError(a2a.CodeMethodNotFound, "unknown method %s", r.URL.Path)))
}

// procedure is the gRPC path of an operation.
func procedure(m *a2a.Method) string { return "/" + a2aconnect.A2AServiceName + "/" + m.Name }

// operations returns the connect-go handler of every operation of the
// method table, by path ("/lf.a2a.v1.A2AService/Name"), each made by
// build with the options every one of them gets: opts' limits and
// Parley's codecs. Handler and NewBareHandler both build theirs here, so
// that the floor responder decodes and encodes exactly as the server does.
func operations(opts *Options, build func(m *a2a.Method, opts ...connect.HandlerOption) http.Handler) map[string]http.Handler {
	limits := []connect.HandlerOption{
		ReadLimit(cmp.Or(opts.MaxRecvBytes, DefaultMaxRecvBytes)),
		// Compressing every small message costs more CPU than it saves on
		// the wire (the HTTP bindings do not compress at all): only large
		// responses are gzipped, when the client accepts it.
		connect.WithCompressMinBytes(CompressMinBytes),
	}
	if opts.MaxSendBytes > 0 {
		limits = append(limits, connect.WithSendMaxBytes(opts.MaxSendBytes))
	}
	limits = append(limits, connect.WithCodec(protoCodec{}), connect.WithCodec(jsonCodec{}))
	procs := make(map[string]http.Handler)
	for m := range a2a.Methods() {
		op := build(m, append(limits, connect.WithRequestInitializer(requestOf(m)))...)
		if m.Streaming {
			op = GatedStream(op)
		}
		procs[procedure(m)] = op
	}
	return procs
}

// operation returns the connect-go handler of one operation.
func (h *Handler) operation(m *a2a.Method, opts ...connect.HandlerOption) http.Handler {
	if m.Streaming {
		return connect.NewServerStreamHandler(procedure(m), func(ctx context.Context, req *connect.Request[message], out *connect.ServerStream[message]) error {
			return h.stream(ctx, m.Name, h.inv.Stream(ctx, m, req.Msg.Message), out)
		}, opts...)
	}
	return connect.NewUnaryHandler(procedure(m), func(ctx context.Context, req *connect.Request[message]) (*connect.Response[message], error) {
		resp, err := h.inv.Call(ctx, m, req.Msg.Message)
		ci := a2a.CallInfoFrom(ctx)
		if err != nil {
			return nil, h.fail(ctx, m.Name, ci, err)
		}
		out := connect.NewResponse(&message{Message: resp})
		httpx.SetResponseHeaders(out.Header(), ci, nil)
		return out, nil
	}, opts...)
}

// NewBareHandler serves the operations of lf.a2a.v1.A2AService with inv as
// Handler does with its default Options (connect-go, Parley's codecs, the
// same limits), and nothing else: no service parameters, no middleware,
// no health or reflection service, and an error is the status connect-go
// makes of it. It is the gRPC half of the floor responder (`parley load
// --floor`), which measures what a request's wire format costs apart from
// what the server does with it.
func NewBareHandler(inv a2a.Invoker) http.Handler {
	procs := operations(&Options{}, func(m *a2a.Method, opts ...connect.HandlerOption) http.Handler {
		if m.Streaming {
			return connect.NewServerStreamHandler(procedure(m), func(ctx context.Context, req *connect.Request[message], out *connect.ServerStream[message]) error {
				for ev, err := range inv.Stream(ctx, m, req.Msg.Message) {
					if err != nil {
						return err
					}
					if err := out.Send(&message{Message: ev.Response}); err != nil {
						return err
					}
				}
				return nil
			}, opts...)
		}
		return connect.NewUnaryHandler(procedure(m), func(ctx context.Context, req *connect.Request[message]) (*connect.Response[message], error) {
			resp, err := inv.Call(ctx, m, req.Msg.Message)
			if err != nil {
				return nil, err
			}
			return connect.NewResponse(&message{Message: resp}), nil
		}, opts...)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if op, ok := procs[r.URL.Path]; ok {
			op.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// stream forwards a stream of events. An error before the first event is
// the call's status with no message sent; a later one ends the stream with
// that status. When the stream ends because the call's context ended (the
// client's deadline passed, or the server is stopping; when the client went
// away nobody reads it) the status is DEADLINE_EXCEEDED or UNAVAILABLE
// rather than OK, so that a client never mistakes it for the normal end of
// the stream, which only the core decides (decision B2: when streams close).
func (h *Handler) stream(ctx context.Context, op string, seq iter.Seq2[a2a.StreamEvent, error], out *connect.ServerStream[message]) error {
	ci := a2a.CallInfoFrom(ctx)
	gate := FlushGateFrom(ctx)
	defer gate.Hold(false) // connect-go's last flush, after the status, goes out
	sent := false
	for ev, err := range seq {
		if err != nil {
			return h.fail(ctx, op, ci, err)
		}
		if !sent {
			httpx.SetResponseHeaders(out.ResponseHeader(), ci, nil)
			if ev.Seq > 0 {
				// gRPC messages carry no event id: the header gives the
				// first one's, and each event after it is one more (the
				// core never skips a number within a stream).
				out.ResponseHeader().Set(FirstEventIDHeader, strconv.FormatUint(ev.Seq, 10))
			}
			sent = true
		}
		gate.Hold(ev.More) // the next event is at hand: one write for both
		if err := out.Send(&message{Message: ev.Response, cache: ev.Cache}); err != nil {
			return err // the client is gone or the message is over the limit
		}
	}
	switch {
	case ctx.Err() != nil:
		return EndedStatus(ctx)
	case !sent && (ci == nil || ci.LastEventID == ""):
		return h.fail(ctx, op, ci, a2a.NewError(a2a.CodeInternal, "the stream ended without an event"))
	}
	return nil
}

// FirstEventIDHeader is the response metadata of a gRPC stream that holds
// the sequence number of its first event (a Parley extension: gRPC has no
// per-message id). A client resumes after event first+n-1 once it has
// received n events, with the last-event-id request metadata.
const FirstEventIDHeader = "first-event-id"

// EndedStatus is the gRPC status of a call cut short by its context
// (httpx.Ended): DEADLINE_EXCEEDED for the caller's deadline (grpc-timeout),
// UNAVAILABLE otherwise (the caller left, or the server stopped waiting
// at the end of a shutdown). It is shared with the v0.3 gRPC binding.
func EndedStatus(ctx context.Context) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("the call's deadline passed before its answer; a task it started goes on: use SubscribeToTask to follow it"))
	default:
		return connect.NewError(connect.CodeUnavailable, errors.New("the call was ended before its answer (the caller left or the server is stopping); a task it started goes on: use SubscribeToTask to follow it"))
	}
}

// fail logs a server-side error and converts it to the wire status. The
// error of a call whose context ended (httpx.Ended: a context error, or an
// internal error it caused) is reported as the end of the context, not as
// an internal error.
func (h *Handler) fail(ctx context.Context, op string, ci *a2a.CallInfo, err error) error {
	e, end := httpx.ServerError(ctx, h.opts.Logger, op, err)
	if end {
		return EndedStatus(ctx)
	}
	// Response metadata goes in the headers: gRPC sends an error's own
	// metadata as trailers, where HTTP forbids WWW-Authenticate.
	if info, ok := connect.CallInfoForHandlerContext(ctx); ok {
		httpx.SetResponseHeaders(info.ResponseHeader(), ci, e)
	}
	return Status(e)
}
