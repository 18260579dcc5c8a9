// Package a2ahttp puts an A2A service on HTTP: one http.Handler that serves
// the public agent card at /.well-known/agent-card.json, the JSON-RPC
// binding, the HTTP+JSON binding and the gRPC binding (requests whose
// Content-Type is application/grpc*), with authentication and middleware
// in front of all three. A GET of "/" itself, where no operation is, gets
// a short plain-text page naming the card's path and the interfaces.
// gRPC needs HTTP/2: serve the handler from an http.Server whose
// Protocols allow unencrypted HTTP/2, or with TLS.
//
// Serve and Start do all of it from one ServeConfig, as the parley
// serve command does: they listen, derive the agent card (its interfaces
// at the public URL, its capabilities, its security from the credentials
// configured), make the server core and the handler, serve HTTP/1.1 and
// HTTP/2 (h2c or TLS), and shut down gracefully.
//
// Who is calling is decided once per request from its headers, before any
// binding runs and before the body is read: a principal already set on the
// request context (a2a.WithPrincipal, by the library user's own HTTP
// middleware) is kept as it is; otherwise the configured authenticators
// are asked in order. Once any credential is configured, a request without
// one is refused (401 in the caller's binding) unless AllowAnonymous is
// set, and refused credentials are always refused. The core then decides
// what the caller may do (task scoping; server.Options.RequireAuth).
//
// Before the binding, a request also meets the browser rules (a
// cross-origin request from an origin not in CORSOrigins is refused; with
// anonymous callers allowed, so is a Host the server does not answer to,
// against DNS rebinding) and its body is read whole under a deadline
// (BodyTimeout) and a memory budget shared by all requests (BodyBudget),
// with a cap on anonymous requests still sending theirs
// (MaxPendingAnonymous).
package a2ahttp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/keyrate"
)

// CardPath is the well-known path of the public agent card (spec §8.2).
const CardPath = "/.well-known/agent-card.json"

// Options configure a Handler.
type Options struct {
	// Card is the public agent card to serve. Its JSONRPC and HTTP+JSON
	// interfaces decide where the bindings are mounted (the path of their
	// URLs); without one, JSON-RPC is at "/" and HTTP+JSON at the root.
	Card *a2a.AgentCard
	// Tokens maps bearer tokens to principal names: a BearerTokens
	// authenticator asked before Authenticators. The card stays public,
	// and says that a token is needed: when it declares no security
	// schemes and no security requirements, the card served gets
	// BearerScheme under BearerSchemeName and a requirement naming it
	// (spec §4.5), as it does for a TokenSet among Authenticators. New
	// refuses an empty token or principal name.
	Tokens map[string]string
	// Authenticators find the caller of a request that no outer middleware
	// authenticated, asked in order: the first that names a principal
	// wins, and one that refuses the request's credentials ends it with
	// an authentication error in the caller's binding.
	Authenticators []Authenticator
	// AllowAnonymous lets requests without credentials through (as the
	// anonymous caller, sharing one scope) although Tokens or
	// Authenticators are configured. Without credentials configured every
	// request is anonymous and this has no effect.
	AllowAnonymous bool
	// AllowedHosts are more Host names (a port is ignored; "*" for any)
	// that requests may be addressed to when anonymous callers are
	// allowed; the hosts of the card's interfaces and the loopback names
	// are always allowed.
	AllowedHosts []string
	// CORSOrigins are the origins (e.g. "https://app.example.com"; "*"
	// for any) whose browser pages may call the agent: they get CORS
	// answers, preflights included. Other cross-origin requests are
	// refused with 403.
	CORSOrigins []string
	// BodyTimeout bounds the time a request body may take to arrive once
	// its headers have (default 30 s; negative: no bound). A slower body
	// gets 408. When the http.Server sets ReadTimeout, that bounds the
	// whole request already and the handler adds no deadline of its own
	// (a deadline per request costs two timer updates).
	BodyTimeout time.Duration
	// BodyBudget is the memory, shared by all requests, for the part of
	// request bodies past their first 64 KiB while they are being read
	// (default 32 MiB; negative: no budget). A body that does not fit now
	// gets 503 with Retry-After.
	BodyBudget int64
	// MaxPendingAnonymous caps the requests without a principal that are
	// still sending their body (default 256; negative: no cap); more get
	// 503 with Retry-After.
	MaxPendingAnonymous int
	// RateLimit is the requests per second each caller may make (a token
	// bucket per principal; requests without one, refused ones included,
	// count per client address). 0: no limit. Over it a request gets
	// RateLimited: 429 with Retry-After, RESOURCE_EXHAUSTED on gRPC.
	RateLimit float64
	// RateBurst is the bucket's size (default RateLimit rounded up).
	RateBurst int
	// MaxCalls is the number of requests each caller may have in flight
	// at once, streams and long polls included, counted from the moment
	// the request is admitted (after its rate, before its body) until its
	// answer has been taken or dropped (default DefaultMaxCalls; negative:
	// no limit). A caller is a principal; requests without one count per
	// client address. One more is refused with RateLimited (429 with
	// Retry-After, RESOURCE_EXHAUSTED on gRPC). A stream parked off
	// net/http (Parking) leaves the count of calls, and stays in that of
	// streams.
	MaxCalls int
	// MaxStreams is the number of streams (SendStreamingMessage,
	// SubscribeToTask, and the A2A 1.1 GetTask long polls while the core
	// holds them) each caller may have open at once, within MaxCalls
	// (default DefaultMaxStreams; negative: no limit); one more is refused
	// as MaxCalls refuses.
	MaxStreams int
	// WriteTimeout is the time a client has to take each write of an
	// answer: a unary answer whole, or one stream event, parked streams
	// (Parking) included (default DefaultWriteTimeout; negative: no bound,
	// anywhere). A client that does not loses the stream (HTTP/2) or the
	// connection (HTTP/1.1), and what the answer held is released. An idle
	// stream is not cut: the deadline runs only while a write waits. When
	// the http.Server sets its own WriteTimeout, which bounds each response
	// whole (streams included), that applies instead, and to each write of
	// a parked stream.
	WriteTimeout time.Duration
	// AnswerBudget is the memory each caller's answers (and stream
	// events) of 64 KiB or more may hold while they are being written,
	// counted by their protobuf size before they are encoded (default
	// DefaultAnswerBudget; negative: none). An answer the budget has no
	// room for is not encoded: the call is refused with RateLimited (a
	// stream ends with it), and so are the caller's next calls until its
	// answers are taken. A first answer larger than the budget still goes.
	AnswerBudget int64
	// Middleware wraps every operation on every binding, the first
	// outermost, inside authentication (see a2a.Middleware).
	Middleware []a2a.Middleware
	// BindingMiddleware, when set, makes one more middleware for each
	// binding, given its name (a2a.BindingJSONRPC, a2a.BindingHTTPJSON,
	// a2a.BindingGRPC), placed outermost, before Middleware: for tracing
	// and metrics labelled by binding (package telemetry) at no cost per
	// request.
	BindingMiddleware func(binding string) a2a.Middleware
	// MaxBody limits a request body (default 10 MiB).
	MaxBody int64
	// KeepAlive is the SSE keep-alive interval (0: 15 s; negative: off).
	KeepAlive time.Duration
	// Parking, when set, parks SubscribeToTask streams over HTTP/1.1 that
	// have been silent for a while on their bare connections, which makes
	// an idle subscription cost a fraction of what it costs on net/http
	// (see Parking). Close it after
	// the http.Server's Shutdown: the server does not wait for parked
	// streams, and Close ends them.
	Parking *Parking
	// CacheMaxAge is the card's Cache-Control max-age (default 5 min).
	CacheMaxAge time.Duration
	// Logger receives logs (default slog.Default()).
	Logger *slog.Logger
	// GRPC configures the gRPC binding (nil: defaults, with reflection
	// on; its MaxRecvBytes defaults to MaxBody).
	GRPC *GRPCOptions
	// DisableGRPC turns the gRPC binding off.
	DisableGRPC bool
	// DisableV03 turns off serving A2A v0.3 beside v1.0: its
	// JSON-RPC methods and its HTTP+JSON routes under /v1/, and the v0.3
	// members of the card.
	DisableV03 bool
	// CardSigner, when set, signs the public card document once it is
	// whole (spec §8.4): it is given the JSON object to serve, the v0.3
	// interfaces and members in place, and returns it with its signatures
	// (cardsign.Signer.SignJSON), which is then served byte for byte.
	// Signatures Card already has are left out: they cannot cover the
	// members added.
	CardSigner func(card []byte) ([]byte, error)
}

// Handler serves the card and the three bindings. Create it with New.
type Handler struct {
	opts        Options
	auth        []Authenticator
	hosts       map[string]bool            // Host names answered when anonymous callers are allowed
	origins     map[string]bool            // CORSOrigins
	budget      *httpx.Budget              // nil: none
	pendingAnon atomic.Int64               // anonymous requests sending their body
	rate        *keyrate.Limiter[callerID] // per caller (Options.RateLimit); nil: no rate limit
	callers     *callers                   // what each caller has in flight
	watchdog    *watchdog                  // ends the writes no client takes (Options.WriteTimeout); nil: none
	refusedLog  *sparseLog                 // the lines of refused credentials
	protocols   []protocol                 // the (version, binding) pairs served, in the order requests are matched
	served      []string                   // the versions the service serves, newest first
	grpc        *grpcbind.Handler          // nil when disabled; also serves health, reflection and unknown services
	rpcPath     string                     // JSON-RPC path without a trailing slash ("" for root)
	restBase    string                     // HTTP+JSON base path without a trailing slash
	card        []byte
	index       []byte // the page served for GET / (indexPage)
	etag        string
	modified    time.Time
}

// New returns a Handler serving svc.
func New(svc a2a.Service, opts *Options) (*Handler, error) {
	h := &Handler{}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Card == nil {
		return nil, fmt.Errorf("a2ahttp: Options.Card is required")
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	h.refusedLog = newSparseLog(refusedLogRate, refusedLogBurst)
	if h.opts.CacheMaxAge == 0 {
		h.opts.CacheMaxAge = 5 * time.Minute
	}
	h.setGuardDefaults()
	h.opts.DisableV03 = !h.servesV03(svc) // the card and the protocol table agree
	h.served = servedVersions(svc)
	card, err := h.encodeCard()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(card)
	h.card, h.etag, h.modified = card, `"`+hex.EncodeToString(sum[:16])+`"`, time.Now().UTC().Truncate(time.Second)
	h.index = indexPage(h.opts.Card)
	for _, in := range h.opts.Card.GetSupportedInterfaces() {
		b := in.GetProtocolBinding()
		if b != a2a.BindingJSONRPC && b != a2a.BindingHTTPJSON {
			continue // a GRPC url is a dial target (host:port), not an HTTP URL
		}
		u, err := url.Parse(in.GetUrl())
		if err != nil {
			return nil, fmt.Errorf("a2ahttp: interface URL %q: %w", in.GetUrl(), err)
		}
		p := strings.TrimSuffix(u.Path, "/")
		switch b {
		case a2a.BindingJSONRPC:
			h.rpcPath = p
		case a2a.BindingHTTPJSON:
			h.restBase = p
		}
	}
	if len(h.opts.Tokens) > 0 {
		if err := checkTokens(h.opts.Tokens); err != nil {
			return nil, err
		}
		h.auth = append(h.auth, BearerTokens(h.opts.Tokens))
	}
	h.auth = append(h.auth, h.opts.Authenticators...)
	h.hosts = hostsOf(h)
	h.rate = newRateLimiter(h.opts.RateLimit, h.opts.RateBurst)
	h.watchdog = newWatchdog(h.opts.WriteTimeout)
	h.callers = newCallers(h.opts.MaxCalls, h.opts.MaxStreams, h.opts.AnswerBudget)
	h.mountProtocols(svc)
	return h, nil
}

// middleware returns the middleware of one binding, outermost first:
// BindingMiddleware's for it (which so sees every call, refused ones too),
// the per-caller stream limit and answer budget (MaxStreams,
// AnswerBudget), then Middleware; in a slice of its own.
func (h *Handler) middleware(binding string) []a2a.Middleware {
	var mw []a2a.Middleware
	if f := h.opts.BindingMiddleware; f != nil {
		if m := f(binding); m != nil {
			mw = append(mw, m)
		}
	}
	if h.callers.maxStreams > 0 || h.callers.budget > 0 {
		mw = append(mw, h.callers.middleware)
	}
	return append(mw, h.opts.Middleware...)
}

// GRPC returns a handler that serves only the gRPC binding, with the same
// authentication, for a listener of its own; nil when DisableGRPC is set.
// Other requests get 415 Unsupported Media Type.
func (h *Handler) GRPC() http.Handler {
	if h.grpc == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !grpcbind.IsGRPC(r) {
			h.grpc.ServeHTTP(w, r) // 415
			return
		}
		aw := newAnswerWriter(w, r, h.watchdog)
		defer aw.done()
		if h.checkOrigin(aw, r) && h.hostAllowed(aw, r) {
			h.route(aw, r)
		}
	})
}

// SetServing sets what the gRPC health service (grpc.health.v1.Health)
// answers, for the server and for lf.a2a.v1.A2AService: SERVING, as at the
// start, or NOT_SERVING, for example while the server drains before it
// stops. Without the gRPC binding it does nothing.
func (h *Handler) SetServing(serving bool) {
	if h.grpc != nil {
		h.grpc.SetServing(serving)
	}
}

// ServeHTTP implements http.Handler. Every request gets an id (the
// client's X-Request-Id, or a new one: newRequestID), echoed in the
// response and used in the debug log line that records the method, path,
// status and duration (never credentials or message content).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 128 {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	aw := newAnswerWriter(w, r, h.watchdog)
	defer aw.done()
	if !h.opts.Logger.Enabled(r.Context(), slog.LevelDebug) {
		h.serve(aw, r)
		return
	}
	sw := &statusWriter{ResponseWriter: aw}
	start := time.Now()
	h.serve(sw, r)
	h.opts.Logger.Debug("request", "id", id, "method", r.Method, "path", r.URL.Path,
		"status", sw.status, "duration", time.Since(start))
}

// statusWriter records the status code of a response. Unwrap lets
// http.ResponseController reach the underlying writer (for flushing SSE).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher, which gRPC streams need of the writer
// itself.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if !h.checkOrigin(w, r) || !h.hostAllowed(w, r) {
		return
	}
	if !grpcbind.IsGRPC(r) {
		switch {
		case r.URL.Path == CardPath:
			h.serveCard(w, r)
			return
		// GET / is no operation: a short page points to the card instead
		// of a 404. Every other unknown path keeps the HTTP+JSON binding's
		// 404.
		case isIndex(r):
			h.serveIndex(w, r)
			return
		}
	}
	h.route(w, r)
}

// route hands a request to its protocol through the pipeline. A gRPC
// request that is no A2A operation (health, reflection, an unknown
// service) is authenticated and rate-limited alike, but reads its own
// body: reflection is a bidirectional stream.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	if p := h.protocolFor(r); p != nil {
		h.dispatch(w, r, p.serve, p.refuse, true)
	} else if h.grpc != nil && grpcbind.IsGRPC(r) {
		h.dispatch(w, r, h.grpc, h.grpc.WriteError, false)
	} else {
		http.Error(w, "gRPC is not served here", http.StatusUnsupportedMediaType)
	}
}

// dispatch is the pipeline every request meets before its binding, in
// this order: authentication from the headers, the caller's rate, what
// the caller has in flight (MaxCalls, AnswerBudget), then (preread) the
// anonymous cap and the body, read whole under a deadline and the shared
// budget. refuse answers a refusal in the binding's shape.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, binding http.Handler, refuse func(http.ResponseWriter, *http.Request, *a2a.Error), preread bool) {
	r, e := h.authenticate(r)
	if e != nil {
		// Refused credentials count against the client address's rate:
		// a caller guessing tokens is slowed down (spec §13.4).
		if h.checkRate(w, r, "", refuse) {
			if ok, skipped := h.refusedLog.admit(time.Now()); ok {
				h.opts.Logger.Info("authentication refused", "remote", r.RemoteAddr, "path", r.URL.Path, "reason", e.Message, "skipped", skipped)
			}
			refuse(w, r, e)
		}
		return
	}
	principal := a2a.CallInfoFrom(r.Context()).Principal
	if !h.checkRate(w, r, principal, refuse) {
		return
	}
	r, release, ok := h.admit(w, r, principal, refuse)
	if !ok {
		return
	}
	if release != nil {
		defer h.callers.leave(release)
	}
	if preread {
		if r, ok = h.readBody(w, r, principal == "", refuse); !ok {
			return
		}
	}
	binding.ServeHTTP(w, r)
}

// serveCard serves the public card with HTTP caching headers (spec §8.6).
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(h.opts.CacheMaxAge.Seconds())))
	hd.Set("ETag", h.etag)
	hd.Set("Last-Modified", h.modified.Format(http.TimeFormat))
	if match := r.Header.Get("If-None-Match"); match != "" {
		for _, tag := range strings.Split(match, ",") {
			if t := strings.TrimSpace(tag); t == h.etag || t == "*" || t == "W/"+h.etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	} else if since, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !h.modified.After(since) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(h.card)
}

// requestIDs numbers the requests of this process that came without an
// X-Request-Id; requestIDPrefix, random per process, keeps the ids of two
// processes (replicas, restarts) apart.
var (
	requestIDs      atomic.Uint64
	requestIDPrefix = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:]) + "-"
	}()
)

// newRequestID returns an id for a request that came without one: the
// process's prefix and a counter. It only names the request in logs, so
// unlike a task id (a2a.NewID) it need not be unguessable.
func newRequestID() string {
	var b [40]byte
	return string(strconv.AppendUint(append(b[:0], requestIDPrefix...), requestIDs.Add(1), 36))
}
