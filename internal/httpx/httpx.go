// Package httpx holds what the two HTTP bindings (JSON-RPC and HTTP+JSON)
// share: reading service parameters from a request, reading a bounded body,
// and rendering error details as JSON.
package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/sse"
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

// Stream answers a streaming operation. An error before the first event is
// an ordinary error response (writeErr); after that the events go out as
// SSE, each rendered by enc, and a later error is rendered by encErr into an
// event named errorEvent (none when "") that ends the stream.
func Stream(w http.ResponseWriter, ci *a2a.CallInfo, o Options, op string, seq iter.Seq2[a2a.StreamEvent, error],
	errorEvent string, writeErr func(*a2a.Error), enc func(*a2a.StreamResponse) ([]byte, error), encErr func(*a2a.Error) []byte) {
	first, err, ok, next, stop := sse.Pull(seq)
	defer stop()
	if !ok {
		err = a2a.NewError(a2a.CodeInternal, "the stream ended without an event")
	}
	if err != nil {
		e := a2a.AsError(err)
		LogError(o.Logger, op, e)
		writeErr(e)
		return
	}
	SetResponseHeaders(w, ci, nil)
	sse.Stream(w, max(o.KeepAlive, 0), errorEvent, first, next, func(ev a2a.StreamEvent, err error) []byte {
		if err == nil {
			var b []byte
			if b, err = enc(ev.Response); err == nil {
				return b
			}
		}
		e := a2a.AsError(err)
		LogError(o.Logger, op, e)
		return encErr(e)
	})
}

// Header names of the A2A service parameters (brief §9.1).
const (
	HeaderVersion    = "A2A-Version"
	HeaderExtensions = "A2A-Extensions"
)

// DefaultMaxBody is the default limit on a request body: 10 MiB.
const DefaultMaxBody = 10 << 20

// CallInfo returns the request's CallInfo (created by authentication
// middleware, or new) with the service parameters of the HTTP bindings
// filled in: A2A-Version from the header or, failing that, the A2A-Version
// query parameter (DESIGN B7); A2A-Extensions from every header line,
// comma-separated.
func CallInfo(r *http.Request) *a2a.CallInfo { return callInfo(r, true) }

// MetadataCallInfo is CallInfo for gRPC, whose service parameters travel
// only as metadata (brief §10.2): no query parameter is read.
func MetadataCallInfo(r *http.Request) *a2a.CallInfo { return callInfo(r, false) }

func callInfo(r *http.Request, query bool) *a2a.CallInfo {
	ci := a2a.CallInfoFrom(r.Context())
	if ci == nil {
		ci = &a2a.CallInfo{}
	}
	ci.Version = strings.TrimSpace(r.Header.Get(HeaderVersion))
	if ci.Version == "" && query {
		ci.Version = strings.TrimSpace(r.URL.Query().Get(HeaderVersion))
	}
	ci.Extensions = ci.Extensions[:0]
	for _, line := range r.Header.Values(HeaderExtensions) {
		for _, uri := range strings.Split(line, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				ci.Extensions = append(ci.Extensions, uri)
			}
		}
	}
	return ci
}

// SetResponseHeaders echoes activated extensions (brief §9.3) and, for an
// authentication error, the challenge (brief §7.3).
func SetResponseHeaders(w http.ResponseWriter, ci *a2a.CallInfo, err *a2a.Error) {
	if ci != nil && len(ci.Activated) > 0 {
		w.Header().Set(HeaderExtensions, strings.Join(ci.Activated, ", "))
	}
	if err != nil && err.Code == a2a.CodeUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
	}
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

// AppendDetails appends the JSON array of an error's details: a
// google.rpc.ErrorInfo for A2A errors (reason, domain a2a-protocol.org,
// metadata; brief §7.4) and a google.rpc.BadRequest when there are field
// violations.
func AppendDetails(b []byte, e *a2a.Error) []byte {
	b = append(b, '[')
	n := 0
	if e.Code.IsA2A() {
		b = append(b, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`...)
		b = strconv.AppendQuote(b, e.Code.Reason())
		b = append(b, `,"domain":"`+a2a.DomainA2A+`"`...)
		if len(e.Metadata) > 0 {
			b = append(b, `,"metadata":{`...)
			for i, k := range sortedKeys(e.Metadata) {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
				b = append(b, ':')
				b = appendString(b, e.Metadata[k])
			}
			b = append(b, '}')
		}
		b = append(b, '}')
		n++
	}
	if len(e.Violations) > 0 {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[`...)
		for i, v := range e.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = appendString(b, v.Field)
			b = append(b, `,"description":`...)
			b = appendString(b, v.Description)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	out, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, out...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// LogError logs the internal cause of a server-side error; it is never
// sent to the client.
func LogError(log interface{ Error(string, ...any) }, op string, e *a2a.Error) {
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeInvalidAgentResponse {
		log.Error("operation failed", "op", op, "err", fmt.Sprint(e))
	}
}
