package a2ahttp

import (
	"fmt"
	"net/http"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/grpcbind"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/jsonrpc"
	"parley.dev/parley/v03"
	"parley.dev/parley/v03/v03grpc"
	"parley.dev/parley/v03/v03http"
)

// Serving A2A v0.3 beside v1.0 (docs/versions.md): unless
// Options.DisableV03, the JSON-RPC URL also answers the v0.3 method names,
// the HTTP+JSON base also serves the v0.3 routes under /v1/, and the card
// carries the v0.3 interfaces and top-level members.

// encodeCard encodes the public card. With v0.3 on, an unsigned card
// gains a 0.3 interface beside each JSON-RPC and HTTP+JSON one (a signed
// card is served as signed: add them with v03.AddInterfaces before
// signing), and a card with 0.3 interfaces gains the v0.3 top-level
// members, which v1.0 readers ignore and signatures do not cover.
func (h *Handler) encodeCard() ([]byte, error) {
	if !h.opts.DisableV03 && len(h.opts.Card.GetSignatures()) == 0 {
		h.opts.Card = v03.AddInterfaces(h.opts.Card)
	}
	card, err := a2a.Marshal(h.opts.Card)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: encoding the card: %w", err)
	}
	if !h.opts.DisableV03 {
		card = v03.WithMembers(card, h.opts.Card)
	}
	return card, nil
}

// mountV03 puts the v0.3 JSON-RPC methods in front of the v1.0 JSON-RPC
// handler and makes the v0.3 HTTP+JSON handler. With v0.3 off the v0.3
// method names are refused with VersionNotSupportedError, and /v1/ paths
// are v1.0 routes like any other (a tenant named "v1").
func (h *Handler) mountV03(svc a2a.Service, rpcOpts, restOpts *httpx.Options) {
	on := !h.opts.DisableV03
	h.jsonrpc = v03http.NewJSONRPC(svc, rpcOpts, jsonrpc.NewHandler(svc, rpcOpts), on)
	if on {
		h.v03rest = http.StripPrefix(h.restBase, v03http.NewREST(svc, restOpts, true))
	}
}

// isV03Route reports whether r is for a v0.3 HTTP+JSON route.
func (h *Handler) isV03Route(r *http.Request) bool {
	if h.v03rest == nil {
		return false
	}
	p, ok := strings.CutPrefix(r.URL.Path, h.restBase)
	return ok && v03http.IsRoute(p)
}

// Card returns the public card as served (with the 0.3 interfaces added
// when v0.3 is on), without the v0.3 top-level members.
func (h *Handler) Card() *a2a.AgentCard { return h.opts.Card }

// mountV03GRPC makes the v0.3 gRPC service (a2a.v1.A2AService) with the
// v1.0 gRPC binding's middleware and limits.
func (h *Handler) mountV03GRPC(svc a2a.Service, g *grpcbind.Options) {
	if h.opts.DisableV03 {
		return
	}
	h.v03grpc = v03grpc.NewHandler(svc, &v03grpc.Options{Card: h.opts.Card, Middleware: g.Middleware, Logger: g.Logger, MaxRecvBytes: g.MaxRecvBytes})
}

// grpcFor is the gRPC handler of a request: the v0.3 service's procedures
// go to it while v0.3 is on, everything else to the v1.0 binding (which
// answers unknown services, a2a.v1 with v0.3 off among them, itself).
func (h *Handler) grpcFor(r *http.Request) http.Handler {
	if h.v03grpc != nil && v03grpc.IsProcedure(r.URL.Path) {
		return h.v03grpc
	}
	return h.grpc
}
