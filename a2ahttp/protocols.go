package a2ahttp

import (
	"net/http"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/v03/v03grpc"
	"parley.dev/parley/internal/v03/v03http"
	"parley.dev/parley/internal/version"
)

// A protocol is one (A2A version, binding) pair the Handler serves: how a
// request is recognised as its, from the request line and headers alone
// (the gRPC service, the HTTP+JSON path; JSON-RPC versions share one URL
// and are told apart by the method name, once the envelope is decoded),
// the handler that decodes and encodes it, and the shape of a refusal.
//
// Every protocol is reached through one pipeline (Handler.dispatch), which
// applies, in order and once: authentication from the headers, the
// caller's rate, what the caller has in flight, the anonymous cap, the
// body's read deadline and the shared body budget; every answer is
// written under the write deadline (answerWriter). What the pipeline does not know about a protocol it
// cannot skip: adding a protocol is adding an entry here.
type protocol struct {
	version string // Major.Minor
	binding string // a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC
	// owns reports whether r is for this protocol. nil: the protocol is
	// reached through another entry's handler (a JSON-RPC dialect).
	owns func(r *http.Request) bool
	// serve decodes, calls and encodes.
	serve http.Handler
	// refuse answers a request refused before it reached serve.
	refuse func(http.ResponseWriter, *http.Request, *a2a.Error)
	// sendPath and sendType are the path and Content-Type of the
	// protocol's SendMessage, and sendBody makes the start of its body
	// (any payload with a prefix that names the operation): what a probe
	// of the pipeline sends (the table-driven tests, parley check).
	sendPath, sendType string
	sendBody           func(payload []byte) []byte
}

// mountProtocols builds the protocol table and the handlers of its
// entries: v1.0 on the three bindings, v0.3 beside it unless it is off
// (Options.DisableV03, or a service whose ProtocolVersions lack it), and
// every other version the service serves on the v1.0 bindings (the 1.1
// preview: version.Protocol.SharesV1), an entry per v1.0 entry reached
// through its handler: the A2A-Version service parameter, which the core
// reads, tells them apart.
func (h *Handler) mountProtocols(svc a2a.Service) {
	h.mountBindings(svc)
	var shared []protocol
	for _, v := range servedVersions(svc) {
		if p, ok := version.Lookup(v); !ok || !p.SharesV1 || v == a2a.ProtocolVersion {
			continue
		}
		for _, p := range h.protocols {
			if p.version == a2a.ProtocolVersion {
				p.version, p.owns = v, nil
				shared = append(shared, p)
			}
		}
	}
	h.protocols = append(h.protocols, shared...)
}

// servedVersions returns the versions a service serves: its
// ProtocolVersions when it says (server.Server does), else the defaults.
func servedVersions(svc a2a.Service) []string {
	if vs, ok := svc.(interface{ ProtocolVersions() []string }); ok {
		return vs.ProtocolVersions()
	}
	return version.Defaults()
}

// mountBindings builds the entries of v1.0 and v0.3 (mountProtocols).
func (h *Handler) mountBindings(svc a2a.Service) {
	bopts := httpx.Options{MaxBody: h.opts.MaxBody, KeepAlive: h.opts.KeepAlive, Logger: h.opts.Logger, Parking: h.opts.Parking}
	rpcOpts, restOpts := bopts, bopts
	rpcOpts.Middleware, restOpts.Middleware = h.middleware(a2a.BindingJSONRPC), h.middleware(a2a.BindingHTTPJSON)
	v03on := !h.opts.DisableV03 // New settled it with servesV03

	// JSON-RPC: one URL, with or without a trailing slash (the official
	// conformance kit adds one); the v0.3 method names are a dialect of
	// the v1.0 handler, refused as an unserved version when v0.3 is off.
	rpc := jsonrpc.NewHandler(svc, &rpcOpts, v03http.NewJSONRPC(svc, &rpcOpts, v03on))
	rpcOwns := func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == h.rpcPath
	}
	rpcBody := func(method string) func([]byte) []byte {
		return func(p []byte) []byte {
			return append([]byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`), p...)
		}
	}
	rpcPath := h.rpcPath + "/"
	h.protocols = append(h.protocols, protocol{version: a2a.ProtocolVersion, binding: a2a.BindingJSONRPC,
		owns: rpcOwns, serve: rpc, refuse: jsonrpc.WriteError,
		sendPath: rpcPath, sendType: httpx.ContentTypeJSON, sendBody: rpcBody("SendMessage")})
	if v03on {
		h.protocols = append(h.protocols, protocol{version: version.V03, binding: a2a.BindingJSONRPC,
			serve: rpc, refuse: jsonrpc.WriteError,
			sendPath: rpcPath, sendType: httpx.ContentTypeJSON, sendBody: rpcBody("message/send")})
	}

	// HTTP+JSON: the v0.3 routes are under /v1/ below the base; with v0.3
	// off, /v1/... is a v1.0 route like any other (a tenant named "v1").
	plain := func(p []byte) []byte { return p }
	if v03on {
		h.protocols = append(h.protocols, protocol{version: version.V03, binding: a2a.BindingHTTPJSON,
			owns: func(r *http.Request) bool {
				p, ok := strings.CutPrefix(r.URL.Path, h.restBase)
				return ok && v03http.IsRoute(p)
			},
			serve:  http.StripPrefix(h.restBase, v03http.NewREST(svc, &restOpts, true)),
			refuse: v03http.WriteRESTError, sendPath: h.restBase + "/v1/message:send", sendType: httpx.ContentTypeJSON, sendBody: plain})
	}
	// Every other request that is not gRPC is the v1.0 HTTP+JSON binding's
	// (which answers an unknown path with its 404).
	h.protocols = append(h.protocols, protocol{version: a2a.ProtocolVersion, binding: a2a.BindingHTTPJSON,
		owns:  func(r *http.Request) bool { return !grpcbind.IsGRPC(r) },
		serve: http.StripPrefix(h.restBase, rest.NewHandler(svc, &restOpts)), refuse: rest.WriteError,
		sendPath: h.restBase + "/message:send", sendType: httpx.ContentTypeJSON, sendBody: plain})

	if h.opts.DisableGRPC {
		return
	}
	var g grpcbind.Options
	if h.opts.GRPC != nil {
		g = *h.opts.GRPC
	}
	if g.MaxRecvBytes == 0 && h.opts.MaxBody > 0 {
		g.MaxRecvBytes = int(h.opts.MaxBody)
	}
	if g.Logger == nil {
		g.Logger = h.opts.Logger
	}
	g.Middleware = append(h.middleware(a2a.BindingGRPC), g.Middleware...)
	if v03on { // reflection lists every service served on the port
		g.ExtraServices = append(slices.Clone(g.ExtraServices), v03grpc.ServiceName)
	}
	h.grpc = grpcbind.NewHandler(svc, &g)
	framed := func(p []byte) []byte {
		return append([]byte{0, byte(len(p) >> 24), byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p))}, p...)
	}
	service := func(name string) func(*http.Request) bool {
		return func(r *http.Request) bool { return grpcbind.IsGRPC(r) && strings.HasPrefix(r.URL.Path, "/"+name+"/") }
	}
	h.protocols = append(h.protocols, protocol{version: a2a.ProtocolVersion, binding: a2a.BindingGRPC,
		owns: service(a2aconnect.A2AServiceName), serve: h.grpc, refuse: h.grpc.WriteError,
		sendPath: "/" + a2aconnect.A2AServiceName + "/SendMessage", sendType: "application/grpc", sendBody: framed})
	if v03on {
		v := v03grpc.NewHandler(svc, &v03grpc.Options{Card: h.opts.Card, Middleware: g.Middleware, Logger: g.Logger, MaxRecvBytes: g.MaxRecvBytes})
		h.protocols = append(h.protocols, protocol{version: version.V03, binding: a2a.BindingGRPC,
			owns: service(v03grpc.ServiceName), serve: v, refuse: h.grpc.WriteError,
			sendPath: "/" + v03grpc.ServiceName + "/SendMessage", sendType: "application/grpc", sendBody: framed})
	}
}

// servesV03 reports whether v0.3 is served: not turned off, and listed by
// a service that says which versions it serves (server.Server does).
func (h *Handler) servesV03(svc a2a.Service) bool {
	if h.opts.DisableV03 {
		return false
	}
	if vs, ok := svc.(interface{ ProtocolVersions() []string }); ok {
		for _, v := range vs.ProtocolVersions() {
			if v == version.V03 {
				return true
			}
		}
		return false
	}
	return true
}

// protocolFor returns the protocol of a request, nil for one that is no
// A2A operation of a binding served here.
func (h *Handler) protocolFor(r *http.Request) *protocol {
	for i := range h.protocols {
		if p := &h.protocols[i]; p.owns != nil && p.owns(r) {
			return p
		}
	}
	return nil
}
