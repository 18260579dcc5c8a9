// Package v03grpc serves the A2A v0.3 gRPC service (a2a.v1.A2AService,
// package v03pb) beside Parley's v1.0 one (lf.a2a.v1.A2AService).
// Each call is translated to the v1.0 operation and handed to the same
// a2a.Invoker as every other binding; the v0.3 proto messages cross to the
// v1.0 types through their ProtoJSON form and package v03's HTTP+JSON
// codec, which carries the same v0.3 proto. Errors are the v1.0 gRPC
// statuses (grpcbind.Status), codes and details included.
package v03grpc

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/v03/v03http"
)

// ServiceName is the v0.3 gRPC service.
const ServiceName = "a2a.v1.A2AService"

// IsProcedure reports whether a request path is a procedure of the v0.3
// service.
func IsProcedure(path string) bool { return strings.HasPrefix(path, "/"+ServiceName+"/") }

// Options configure a Handler.
type Options struct {
	// Card is the public card, GetAgentCard's answer to callers who get
	// no extended card.
	Card *a2a.AgentCard
	// Middleware wraps every operation, the first outermost.
	Middleware []a2a.Middleware
	// Logger receives internal error causes (default slog.Default()).
	Logger *slog.Logger
	// MaxRecvBytes limits a request message, as sent or once inflated
	// (0: grpcbind.DefaultMaxRecvBytes; see grpcbind.ReadLimit).
	MaxRecvBytes int
}

// Handler serves a2a.v1.A2AService. Create it with NewHandler.
type Handler struct {
	inv  a2a.Invoker
	card *a2a.AgentCard
	log  *slog.Logger
	mux  *http.ServeMux
}

// NewHandler returns the v0.3 gRPC handler for svc.
func NewHandler(svc a2a.Service, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	h := &Handler{inv: a2a.Chain(a2a.NewInvoker(svc), o.Middleware...), card: o.Card, log: o.Logger, mux: http.NewServeMux()}
	copts := []connect.HandlerOption{grpcbind.ReadLimit(o.MaxRecvBytes)}
	p := func(name string) string { return "/" + ServiceName + "/" + name }
	h.mux.Handle(p("SendMessage"), connect.NewUnaryHandler(p("SendMessage"), h.sendMessage, copts...))
	h.mux.Handle(p("SendStreamingMessage"), grpcbind.GatedStream(connect.NewServerStreamHandler(p("SendStreamingMessage"), h.sendStreaming, copts...)))
	h.mux.Handle(p("GetTask"), connect.NewUnaryHandler(p("GetTask"), h.getTask, copts...))
	h.mux.Handle(p("CancelTask"), connect.NewUnaryHandler(p("CancelTask"), h.cancelTask, copts...))
	h.mux.Handle(p("TaskSubscription"), grpcbind.GatedStream(connect.NewServerStreamHandler(p("TaskSubscription"), h.subscribe, copts...)))
	h.mux.Handle(p("CreateTaskPushNotificationConfig"), connect.NewUnaryHandler(p("CreateTaskPushNotificationConfig"), h.createConfig, copts...))
	h.mux.Handle(p("GetTaskPushNotificationConfig"), connect.NewUnaryHandler(p("GetTaskPushNotificationConfig"), h.getConfig, copts...))
	h.mux.Handle(p("ListTaskPushNotificationConfig"), connect.NewUnaryHandler(p("ListTaskPushNotificationConfig"), h.listConfigs, copts...))
	h.mux.Handle(p("DeleteTaskPushNotificationConfig"), connect.NewUnaryHandler(p("DeleteTaskPushNotificationConfig"), h.deleteConfig, copts...))
	h.mux.Handle(p("GetAgentCard"), connect.NewUnaryHandler(p("GetAgentCard"), h.getAgentCard, copts...))
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// begin reads the service parameters of a call from its metadata into the
// CallInfo authentication left on the context, and admits the call as
// v0.3 (decision B7: a v0.3 request is served as v0.3 while v0.3 is on).
func begin(ctx context.Context, md http.Header) (context.Context, error) {
	ci := a2a.CallInfoFrom(ctx)
	if ci == nil {
		ci = &a2a.CallInfo{}
	}
	r := &http.Request{Header: md}
	fresh := httpx.MetadataCallInfo(r.WithContext(a2a.WithCallInfo(context.Background(), ci)))
	if err := v03http.Admit(fresh, true); err != nil {
		return ctx, err
	}
	return a2a.WithCallInfo(ctx, fresh), nil
}

// fail turns an error into the gRPC status a client reads, as the v1.0
// binding does: a call ended by its context (httpx.Ended) is answered with
// the end of the context, anything else with its A2A error.
func (h *Handler) fail(ctx context.Context, op string, err error) error {
	e, ended := httpx.ServerError(ctx, h.log, op, err)
	if ended {
		return grpcbind.EndedStatus(ctx)
	}
	return grpcbind.Status(e)
}

// call runs a unary v1.0 operation.
func (h *Handler) call(ctx context.Context, md http.Header, name string, req protoMessage) (protoMessage, error) {
	ctx, err := begin(ctx, md)
	if err != nil {
		return nil, h.fail(ctx, name, err)
	}
	resp, err := h.inv.Call(ctx, a2a.MethodByName(name), req)
	if err != nil {
		return nil, h.fail(ctx, name, err)
	}
	return resp, nil
}
