// Package rest is the HTTP+JSON (REST) binding of A2A (spec §11), both
// halves: Handler serves it and Transport calls it. There is one route per
// operation, taken from the method table a2a.Methods, each also served
// under a leading /{tenant} segment; streams are Server-Sent Events whose
// data lines are bare StreamResponse objects. Both halves only translate:
// every rule is in the a2a.Service being served.
package rest

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// ContentType is the media type of HTTP+JSON bodies (spec §11.1;
// decision B8).
const ContentType = httpx.ContentTypeA2A

// Options configure a Handler: body limit, SSE keep-alive interval (0 means
// 15 s, negative turns it off), logger and middleware.
type Options = httpx.Options

// Handler serves the HTTP+JSON binding for one a2a.Service, with routes
// relative to the root of the URL it is mounted at.
type Handler struct {
	inv    a2a.Invoker
	opts   Options
	routes []route
}

// NewHandler returns a Handler. opts may be nil.
func NewHandler(svc a2a.Service, opts *Options) *Handler {
	o := opts.WithDefaults()
	return &Handler{inv: o.Invoker(svc), opts: o, routes: parseRoutes()}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ci := httpx.CallInfo(r)
	ct := responseType(r)
	var buf [8]string
	segs := splitPath(strings.TrimPrefix(r.URL.EscapedPath(), "/"), buf[:])
	rt, vars, tenant, allowed := h.match(r.Method, segs)
	if rt == nil {
		routeError(w, r, ci, ct, allowed)
		return
	}
	req := rt.m.NewRequest()
	if err := h.decode(w, r, rt, req); err != nil {
		writeError(w, ci, ct, a2a.AsError(err))
		return
	}
	if err := rt.bindPath(req, &vars, tenant); err != nil {
		writeError(w, ci, ct, err)
		return
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if rt.m.Streaming {
		h.opts.Stream(ctx, w, r, h.inv, rt.m, req, &streamEncoder{ctx: ctx, h: h, ci: ci, ct: ct, op: rt.m.Name})
		return
	}
	resp, err := h.inv.Call(ctx, rt.m, req)
	if err != nil {
		e, _ := httpx.ServerError(ctx, h.opts.Logger, rt.m.Name, err)
		writeError(w, ci, ct, e)
		return
	}
	bp := httpx.Body()
	b, err := a2a.AppendJSON(*bp, resp)
	defer httpx.PutBody(bp, b)
	if err != nil {
		writeError(w, ci, ct, a2a.Internal(err))
		return
	}
	httpx.SetResponseHeaders(w.Header(), ci, nil)
	httpx.WriteAnswer(w, 0, ct, b)
}

// responseType is the media type of a response body other than a stream
// (decision B8): application/a2a+json (spec §11.1), unless the
// request's Accept header names application/json and does not name
// application/a2a+json, in which case application/json, the media type
// some clients (the official Go SDK among them) insist on before they read
// an error body. Only named types count: a wildcard such as */* or
// application/* keeps the default, as does a range refused with q=0.
func responseType(r *http.Request) string {
	// Most requests name no plain JSON at all: answer without parsing.
	if r == nil || !strings.Contains(strings.Join(r.Header.Values("Accept"), ","), httpx.ContentTypeJSON) {
		return ContentType
	}
	wantJSON := false
	for _, v := range r.Header.Values("Accept") {
		for _, rng := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
				continue
			}
			switch mt {
			case ContentType:
				return ContentType
			case httpx.ContentTypeJSON:
				wantJSON = true
			}
		}
	}
	if wantJSON {
		return httpx.ContentTypeJSON
	}
	return ContentType
}

// decode fills req from the body (operations with a body) and the query
// string (spec §11.5).
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, rt *route, req proto.Message) error {
	if rt.m.HasBody || r.Method == http.MethodPost {
		body, err := httpx.ReadBody(w, r, h.opts.MaxBody)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if ct := r.Header.Get("Content-Type"); ct != "" {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || (mt != ContentType && mt != "application/json") {
					return a2a.NewError(a2a.CodeInvalidRequest,
						"content type %q is not accepted: send application/a2a+json or application/json", ct)
				}
			}
			if err := a2a.Unmarshal(body, req); err != nil {
				return a2a.InvalidParamsFor(err)
			}
		}
	}
	if r.URL.RawQuery == "" { // no query: no parameters to parse
		return nil
	}
	return decodeQuery(r.URL.Query(), req)
}

// streamEncoder renders a stream (spec §11.7): each event's data a bare
// StreamResponse; an error before the first event is an ordinary error
// response, and a later one an event named "error" holding the error body.
type streamEncoder struct {
	ctx context.Context // the call's
	h   *Handler
	ci  *a2a.CallInfo
	ct  string // the media type of a refusal's body (responseType)
	op  string
}

func (e *streamEncoder) Refuse(w http.ResponseWriter, err error) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	writeError(w, e.ci, e.ct, ae)
}

func (e *streamEncoder) Start(h http.Header) { httpx.SetResponseHeaders(h, e.ci, nil) }

func (e *streamEncoder) AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	return httpx.AppendEventJSON(b, ev)
}

func (e *streamEncoder) Fail(err error) (string, []byte) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	return "error", AppendError(nil, ae, 0, "")
}

// WriteError answers r, refused before the handler ran (by authentication
// in front of it, say), with the error's HTTP status and a
// google.rpc.Status body whose media type follows r's Accept header as the
// handler's responses do (see responseType).
func WriteError(w http.ResponseWriter, r *http.Request, e *a2a.Error) {
	writeError(w, nil, responseType(r), e)
}

// writeError writes an error response: the HTTP status of the error and
// a google.rpc.Status body (spec §11.6) of media type ct.
func writeError(w http.ResponseWriter, ci *a2a.CallInfo, ct string, e *a2a.Error) {
	writeErrorAs(w, ci, ct, e, 0, "")
}

// writeErrorAs is writeError with the HTTP status and the body's status
// name given (0 and "": the error's own).
func writeErrorAs(w http.ResponseWriter, ci *a2a.CallInfo, ct string, e *a2a.Error, status int, name string) {
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	httpx.SetResponseHeaders(w.Header(), ci, e)
	httpx.WriteAnswer(w, status, ct, AppendError(nil, e, status, name))
}

// routeError answers a request that names no operation with
// MethodNotFoundError, in the pairs of HTTP status and status name of
// Google's error model, which this binding's errors follow (spec §11.6):
// a path no operation has is 404 NOT_FOUND; an operation's path under
// another verb is 405 with an Allow header (RFC 9110 §15.5.6) and
// UNIMPLEMENTED, the error's own status name (the model pairs no code
// with 405). The error's ErrorInfo reason, METHOD_NOT_FOUND, tells either
// from TaskNotFoundError, which shares 404 (a2a.Error.Info).
func routeError(w http.ResponseWriter, r *http.Request, ci *a2a.CallInfo, ct string, allowed []string) {
	e := a2a.NewError(a2a.CodeMethodNotFound, "no A2A operation at %s %s", r.Method, r.URL.Path)
	if len(allowed) == 0 {
		writeErrorAs(w, ci, ct, e, http.StatusNotFound, "NOT_FOUND")
		return
	}
	e.Message = fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path)
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeErrorAs(w, ci, ct, e, http.StatusMethodNotAllowed, "")
}
