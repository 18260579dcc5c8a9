package a2ahttp

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// This file is what a request meets before any binding: the browser rules
// (Origin and CORS, and Host when anonymous callers are allowed, against
// DNS rebinding), and the bounded reading of its body.

// Defaults of the guard options.
const (
	DefaultBodyTimeout         = 30 * time.Second
	DefaultBodyBudget          = 32 << 20
	DefaultMaxPendingAnonymous = 256
)

// corsAllowHeaders are the request headers an allowed origin may send.
const corsAllowHeaders = "Authorization, Content-Type, A2A-Version, A2A-Extensions, X-Request-Id, X-API-Key, " +
	"X-Grpc-Web, X-User-Agent, Grpc-Timeout"

// corsExposeHeaders are the response headers a page of an allowed origin
// may read.
const corsExposeHeaders = "A2A-Extensions, X-Request-Id, WWW-Authenticate, Retry-After, Grpc-Status, Grpc-Message"

// setGuardDefaults fills in the defaults of the options that bound what
// a request, and a caller, may hold ("Bounded by default"): each zero
// becomes its default, each negative 0, which means no bound from then
// on; h.opts then shows the bounds that apply.
func (h *Handler) setGuardDefaults() {
	o := &h.opts
	o.BodyTimeout = bound(o.BodyTimeout, DefaultBodyTimeout)
	o.WriteTimeout = bound(o.WriteTimeout, DefaultWriteTimeout)
	o.MaxCalls = bound(o.MaxCalls, DefaultMaxCalls)
	o.MaxStreams = bound(o.MaxStreams, DefaultMaxStreams)
	o.AnswerBudget = bound(o.AnswerBudget, DefaultAnswerBudget)
	switch {
	case o.BodyBudget == 0:
		h.budget = httpx.NewBudget(DefaultBodyBudget)
	case o.BodyBudget > 0:
		h.budget = httpx.NewBudget(o.BodyBudget)
	}
	if o.MaxPendingAnonymous == 0 {
		o.MaxPendingAnonymous = DefaultMaxPendingAnonymous
	}
	h.origins = map[string]bool{}
	for _, o := range o.CORSOrigins {
		h.origins[strings.TrimRight(o, "/")] = true
	}
}

// bound is the bound an option of value v sets: def for 0, none (0) for
// a negative value, else v.
func bound[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// hostsOf returns the host names the card's interfaces are served at, with
// the loopback names: the Host values accepted when anonymous callers are
// allowed.
func hostsOf(h *Handler) map[string]bool {
	hosts := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, in := range h.opts.Card.GetSupportedInterfaces() {
		raw := in.GetUrl()
		if !strings.Contains(raw, "://") {
			raw = "//" + raw // a gRPC dial target, host:port
		}
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			hosts[strings.ToLower(u.Hostname())] = true
		}
	}
	for _, a := range h.opts.AllowedHosts {
		hosts[strings.ToLower(hostOnly(a))] = true
	}
	return hosts
}

// hostOnly strips a port (and IPv6 brackets) from a Host value.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.Trim(hostport, "[]")
}

// hostAllowed refuses, when anonymous callers are allowed, a request whose
// Host the server does not answer to: a page on another site that
// re-points its own name at this server (DNS rebinding) must not reach an
// agent that asks no credentials.
func (h *Handler) hostAllowed(w http.ResponseWriter, r *http.Request) bool {
	if h.authRequired() || h.hosts["*"] || h.hosts[strings.ToLower(hostOnly(r.Host))] {
		return true
	}
	http.Error(w, "host "+strconv.Quote(r.Host)+" is not served here (the server asks no credentials, so it answers only to its own names; see AllowedHosts / --allowed-host)", http.StatusMisdirectedRequest)
	return false
}

// checkOrigin applies the browser rules to a request with an Origin
// header: same-origin requests and allowed origins go on (an allowed
// origin gets CORS headers, and its preflight is answered here), any other
// cross-origin request is refused. It reports whether the request goes on.
func (h *Handler) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	allowed := h.origins[origin] || h.origins["*"]
	if !allowed {
		if httpx.SameOrigin(origin, r.Host) {
			return true // same origin: not a CORS request
		}
		http.Error(w, "cross-origin request from "+strconv.Quote(origin)+" refused (see CORSOrigins / --cors-origin)", http.StatusForbidden)
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		hd.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		hd.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	hd.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	return true
}

// readBody reads the request body ahead of the binding (see
// httpx.Preread), counting anonymous requests that are still receiving
// theirs. When too many are, or the budget is spent, it refuses the
// request in its protocol's shape with UnavailableError (see busy); it
// answers 408 when the body is too slow. It reports whether the request
// goes on.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, anonymous bool, refuse refuseFunc) (*http.Request, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return r, true
	}
	if anonymous && h.opts.MaxPendingAnonymous > 0 {
		if h.pendingAnon.Add(1) > int64(h.opts.MaxPendingAnonymous) {
			h.pendingAnon.Add(-1)
			busy(w, r, refuse, "too many requests without credentials are sending their bodies")
			return r, false
		}
		defer h.pendingAnon.Add(-1)
	}
	r2, err := httpx.Preread(w, r, h.opts.MaxBody, h.opts.BodyTimeout, h.budget)
	switch {
	case err == nil:
		return r2, true
	case errors.Is(err, httpx.ErrBusy):
		busy(w, r, refuse, err.Error())
	case errors.Is(err, httpx.ErrBodyTimeout):
		closeHTTP1(w, r)
		http.Error(w, err.Error(), http.StatusRequestTimeout)
	default:
		closeHTTP1(w, r)
		http.Error(w, "could not read the request body", http.StatusBadRequest)
	}
	return r, false
}

// closeHTTP1 ends an HTTP/1.x connection after a body that could not be
// read (its unread rest would be taken for the next request). An HTTP/2
// stream ends alone: closing the connection would end the caller's other
// streams on it.
func closeHTTP1(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor < 2 {
		w.Header().Set("Connection", "close")
	}
}

// busy refuses a request the server has no room for now with
// UnavailableError, through its protocol's refuse: HTTP 503 with
// Retry-After on both HTTP bindings (JSON-RPC with its error object),
// UNAVAILABLE with a RetryInfo on gRPC, so every client takes it as
// "retry later" (spec §3.3.2, system errors).
func busy(w http.ResponseWriter, r *http.Request, refuse refuseFunc, why string) {
	refuse(w, r, a2a.Unavailable("server busy: "+why+"; retry later", a2a.DefaultRetryAfter, nil))
}

// refuseFunc answers a request refused before it reached its binding, in
// the binding's shape (a protocol's refuse).
type refuseFunc = func(http.ResponseWriter, *http.Request, *a2a.Error)
