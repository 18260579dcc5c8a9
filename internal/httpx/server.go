// Package httpx holds what the two HTTP bindings (JSON-RPC and HTTP+JSON)
// share, both halves: on the server, reading service parameters and a
// bounded body and echoing response headers; on the client, sending
// requests, reading responses and streams, and decoding error bodies by
// their shape; and, for both, the JSON error details (ErrorInfo and
// BadRequest) in each direction.
package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/streamctx"
)

// Options are the settings both HTTP bindings share.
type Options struct {
	// MaxBody limits a request body (default 10 MiB).
	MaxBody int64
	// KeepAlive is the SSE keep-alive interval; 0 means the default of
	// 15 s, a negative value turns keep-alives off.
	KeepAlive time.Duration
	// Logger receives internal error causes (default slog.Default()).
	Logger *slog.Logger
	// Middleware wraps every operation the handler performs, the first
	// outermost (see a2a.Middleware).
	Middleware []a2a.Middleware
	// Parking, when set, parks SubscribeToTask streams over HTTP/1.1 that
	// have been silent for a while (sse.Parking).
	Parking *sse.Parking
}

// Stream answers the streaming operation m with the events inv streams
// for req, as Server-Sent Events framed by enc.
//
// Only SubscribeToTask streams may be parked: they are the ones that wait
// long (10,000 may follow one task). A SendStreamingMessage stream usually
// ends with its task's burst of work, and one that may park costs its
// client the connection (Connection: close), which a client running many
// short streams pays on every one of them.
func (o Options) Stream(ctx context.Context, w http.ResponseWriter, r *http.Request, inv a2a.Invoker, m *a2a.Method, req proto.Message, enc sse.Encoder) {
	open := func(ctx context.Context) iter.Seq2[a2a.StreamEvent, error] { return inv.Stream(ctx, m, req) }
	parking := o.Parking
	if m.Name != a2a.MethodSubscribeToTask {
		parking = nil
	}
	parking.Serve(ctx, w, r, open, enc, max(o.KeepAlive, 0))
}

// Invoker returns the Invoker a handler calls: svc by the method table,
// wrapped in the middleware.
func (o Options) Invoker(svc a2a.Service) a2a.Invoker {
	return a2a.Chain(a2a.NewInvoker(svc), o.Middleware...)
}

// WithDefaults returns the options (nil allowed) with defaults filled in.
func (o *Options) WithDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.KeepAlive == 0 {
		out.KeepAlive = sse.DefaultKeepAlive
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	return out
}

// Header names of the A2A service parameters (spec §3.2.6).
const (
	HeaderVersion    = "A2A-Version"
	HeaderExtensions = "A2A-Extensions"
	// HeaderExtensionsV03 is the name A2A v0.3 gave the extensions header
	// (its clients send it); it is read beside HeaderExtensions.
	HeaderExtensionsV03 = "X-A2A-Extensions"
)

// DefaultMaxBody is the default limit on a request body: 10 MiB.
const DefaultMaxBody = 10 << 20

// CallInfo returns the request's CallInfo (created by authentication
// middleware, or new) with the service parameters of the HTTP bindings filled
// in: A2A-Version from the header or, failing that, the A2A-Version query
// parameter (docs/decisions.md#b7); A2A-Extensions (and v0.3's X-A2A-Extensions,
// which v0.3 clients send) from every header line,
// comma-separated; Last-Event-ID as it came.
func CallInfo(r *http.Request) *a2a.CallInfo { return callInfo(r, true) }

// MetadataCallInfo is CallInfo for gRPC, whose service parameters travel
// only as metadata (spec §10.2): no query parameter is read.
func MetadataCallInfo(r *http.Request) *a2a.CallInfo { return callInfo(r, false) }

// The canonical forms of the header names callInfo reads (as
// http.Header.Get would make them on every call, allocating each time: the
// names are not canonical as written).
var (
	canonVersion       = textproto.CanonicalMIMEHeaderKey(HeaderVersion)
	canonLastEventID   = textproto.CanonicalMIMEHeaderKey(streamctx.LastEventIDHeader)
	canonExtensions    = textproto.CanonicalMIMEHeaderKey(HeaderExtensions)
	canonExtensionsV03 = textproto.CanonicalMIMEHeaderKey(HeaderExtensionsV03)
)

// headerValue is r.Header.Get(key) for a canonical key.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func callInfo(r *http.Request, query bool) *a2a.CallInfo {
	ci := a2a.CallInfoFrom(r.Context())
	if ci == nil {
		ci = &a2a.CallInfo{}
	}
	ci.Version = strings.TrimSpace(headerValue(r.Header, canonVersion))
	if ci.Version == "" && query && r.URL.RawQuery != "" {
		ci.Version = strings.TrimSpace(r.URL.Query().Get(HeaderVersion))
	}
	// The resume position of SubscribeToTask: the SSE standard's header
	// on HTTP, the same name as gRPC metadata (headers on the wire).
	ci.LastEventID = strings.TrimSpace(headerValue(r.Header, canonLastEventID))
	ci.Extensions = ci.Extensions[:0]
	for _, name := range [...]string{canonExtensions, canonExtensionsV03} {
		for _, line := range r.Header[name] {
			for _, uri := range strings.Split(line, ",") {
				if uri = strings.TrimSpace(uri); uri != "" && !slices.Contains(ci.Extensions, uri) {
					ci.Extensions = append(ci.Extensions, uri)
				}
			}
		}
	}
	return ci
}

// MetaRetryAfter is the a2a.Error metadata key whose value (seconds) the
// Retry-After header of a RateLimited or Unavailable error carries
// (a2a.MetaRetryAfter).
const MetaRetryAfter = a2a.MetaRetryAfter

// JSONRPCStatus is the HTTP status of a JSON-RPC error response: 200, as
// JSON-RPC over HTTP carries errors in the body, except 401 for an
// authentication error (so that HTTP clients see the challenge), 429 for
// a rate limit and 503 for a server unavailable for a while (so that
// proxies, load balancers and HTTP clients see that a retry may succeed;
// docs/decisions.md#where-the-spec-is-silent), on v1.0 and v0.3 alike. The
// body is the JSON-RPC error object all the same.
func JSONRPCStatus(e *a2a.Error) int {
	switch e.Code {
	case a2a.CodeUnauthenticated:
		return http.StatusUnauthorized
	case a2a.CodeRateLimited:
		return http.StatusTooManyRequests
	case a2a.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// MetaBearerError is the metadata key of an UnauthenticatedError that
// refused a bearer token: its value, "invalid_token", is the error code of
// the Bearer challenge (RFC 6750 §3.1), and it reaches the client in the
// ErrorInfo too.
const MetaBearerError = "bearerError"

// challenge is the WWW-Authenticate value of an UnauthenticatedError: the
// Bearer challenge, with the error code of a refused token (RFC 6750
// §3.1); a request without credentials gets none (RFC 6750 §3.1: it
// SHOULD NOT).
func challenge(err *a2a.Error) string {
	switch code := err.Metadata[MetaBearerError]; code {
	case "invalid_token", "invalid_request", "insufficient_scope": // RFC 6750 §3.1's codes, and nothing else
		return `Bearer realm="a2a", error="` + code + `"`
	}
	return `Bearer realm="a2a"`
}

// SetResponseHeaders echoes activated extensions (as the A2A extensions guide
// recommends) and, for an authentication error, the challenge (spec §3.3.2);
// for a rate limit or an unavailable server, Retry-After (in seconds: the
// error's a2a.Error.RetryAfter).
func SetResponseHeaders(h http.Header, ci *a2a.CallInfo, err *a2a.Error) {
	if ci != nil && len(ci.Activated) > 0 {
		h.Set(HeaderExtensions, strings.Join(ci.Activated, ", "))
	}
	if err != nil && err.Code == a2a.CodeUnauthenticated {
		h.Set("WWW-Authenticate", challenge(err))
	}
	if err != nil && (err.Code == a2a.CodeRateLimited || err.Code == a2a.CodeUnavailable) {
		if d, ok := err.RetryAfter(); ok {
			h.Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
		}
	}
}

// WriteAnswer writes a whole answer of the given status (0: 200) and media
// type, with its Content-Length: an answer encoded whole says its length
// on every protocol, HTTP/1.1 and HTTP/2 alike, however the writer below
// sends it (net/http's HTTP/2 server counts the length itself only when
// nothing was flushed before the handler returned).
func WriteAnswer(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if status != 0 {
		w.WriteHeader(status)
	}
	w.Write(body)
}

// ReadBody reads the whole body, refusing more than limit bytes with a
// RequestTooLarge error.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	if pb, ok := r.Body.(*PrereadBody); ok {
		if int64(len(pb.b)) > limit {
			return nil, tooLarge(limit)
		}
		return pb.b, nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, a2a.NewError(a2a.CodeInvalidRequest, "could not read the request body: %v", err)
	}
	return b, nil
}

func tooLarge(limit int64) error {
	return a2a.NewError(a2a.CodeRequestTooLarge, "request body exceeds the limit of %d bytes", limit)
}

// ServerError is what a binding's server answers for the call op that failed
// with err, every binding's one way there: the error as an *a2a.Error,
// its internal cause logged at ERROR (never sent). A failure that only
// says the call's own context ended (Ended: the caller's deadline passed,
// the caller left, the server stopped waiting at the end of a shutdown) is
// no fault of the server's: it is logged at DEBUG, so that a caller
// cannot write ERROR lines at will (a gRPC grpc-timeout of 1n), and ended
// is true. The error returned for it is an UnavailableError saying the
// call ended before its answer, which an HTTP binding writes as it is (a
// caller that left reads nothing; one still there when the server stops
// is told to retry); the gRPC bindings answer ended calls with their own
// status, DEADLINE_EXCEEDED for a deadline (grpcbind).
func ServerError(ctx context.Context, log *slog.Logger, op string, err error) (e *a2a.Error, ended bool) {
	if Ended(ctx, err) {
		log.Debug("call ended before its answer", "op", op, "err", err)
		return a2a.Unavailable("the call ended before its answer (its deadline passed, its caller left or the server is stopping); a task it started goes on", 0, nil), true
	}
	e = a2a.AsError(err)
	logError(log, op, e)
	return e, false
}

// Ended reports whether err, the failure of a call whose context is ctx,
// says only that ctx ended: ctx is done and err is no A2A error (a
// context's error, as the core returns it from a wait) or is an
// InternalError. An internal failure met once the call's context has
// ended is taken as its consequence: a store query cut short by the
// deadline fails with the context's error, wrapped (the store cannot tell
// whose deadline it was, the binding can), or with whatever its driver
// makes of the interruption (database/sql: "statement is closed"). Its
// cause is still logged, at DEBUG.
func Ended(ctx context.Context, err error) bool {
	if ctx.Err() == nil {
		return false
	}
	var e *a2a.Error
	return !errors.As(err, &e) || e.Code == a2a.CodeInternal
}

// logError logs the internal cause of a server-side error; it is never
// sent to the client.
func logError(log *slog.Logger, op string, e *a2a.Error) {
	switch {
	case e.Code == a2a.CodeInternal || e.Code == a2a.CodeInvalidAgentResponse:
		log.Error("operation failed", "op", op, "err", fmt.Sprint(e))
	case e.Code == a2a.CodeUnavailable && e.Unwrap() != nil:
		// A failure that passes, with its cause: the store's driver error,
		// which the caller is not told.
		log.Error("operation failed: unavailable", "op", op, "err", fmt.Sprint(e))
	}
}

// AppendEventJSON appends the ProtoJSON of an event's StreamResponse to b:
// the data of an HTTP+JSON event and the result of a JSON-RPC one. An
// event several streams carry (a2a.StreamEvent.Cache) is encoded once for
// all of them, and its bytes copied to each.
func AppendEventJSON(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	if !ev.Cache.Holds(ev.Response) {
		return a2a.AppendJSON(b, ev.Response)
	}
	data, err := ev.Cache.LoadBytes(ev.Response, "json", func() ([]byte, error) {
		return a2a.AppendJSON(make([]byte, 0, 512), ev.Response)
	})
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}
