// Package rest is the HTTP+JSON (REST) binding of A2A (brief §11): one
// route per operation, taken from the method table a2a.Methods, each also
// served under a leading /{tenant} segment. It only translates: every rule
// is in the a2a.Service it serves.
package rest

import (
	"encoding/json"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// ContentType is the media type of HTTP+JSON bodies (brief §9.4, DESIGN B8).
const ContentType = "application/a2a+json"

// Options configure a Handler: body limit, SSE keep-alive interval (0 means
// 15 s, negative turns it off) and logger.
type Options = httpx.Options

// Handler serves the HTTP+JSON binding for one a2a.Service, with routes
// relative to the root of the URL it is mounted at.
type Handler struct {
	svc    a2a.Service
	opts   Options
	routes []route
}

// route is a parsed a2a.Method path.
type route struct {
	m    *a2a.Method
	segs []string // literal segments, or "{name}" variables
	verb string   // custom verb of the last segment, e.g. ":cancel"
}

// NewHandler returns a Handler. opts may be nil.
func NewHandler(svc a2a.Service, opts *Options) *Handler {
	h := &Handler{svc: svc, opts: opts.WithDefaults()}
	for i := range a2a.Methods {
		m := &a2a.Methods[i]
		segs := strings.Split(strings.TrimPrefix(m.Path, "/"), "/")
		rt := route{m: m, segs: segs}
		last := segs[len(segs)-1]
		if j := strings.LastIndexByte(last, ':'); j >= 0 {
			rt.verb = last[j:]
			segs[len(segs)-1] = last[:j]
		}
		h.routes = append(h.routes, rt)
	}
	return h
}

// match finds the route of a path: first as is, then with the first segment
// taken as the tenant. It returns the route, the path variables, the tenant,
// and, when the path matched routes only under other verbs, those verbs.
func (h *Handler) match(method string, segs []string) (*route, map[string]string, string, []string) {
	var allowed []string
	for _, tenantPrefix := range []bool{false, true} {
		s, tenant := segs, ""
		if tenantPrefix {
			if len(segs) < 2 || segs[0] == "" {
				break
			}
			t, err := url.PathUnescape(segs[0])
			if err != nil {
				break
			}
			s, tenant = segs[1:], t
		}
		for i := range h.routes {
			rt := &h.routes[i]
			vars, ok := rt.matchPath(s)
			if !ok {
				continue
			}
			if method != rt.m.HTTPMethod && method != rt.m.AltHTTPMethod {
				allowed = append(allowed, rt.m.HTTPMethod)
				if rt.m.AltHTTPMethod != "" {
					allowed = append(allowed, rt.m.AltHTTPMethod)
				}
				continue
			}
			return rt, vars, tenant, nil
		}
	}
	return nil, nil, "", allowed
}

func (rt *route) matchPath(segs []string) (map[string]string, bool) {
	if len(segs) != len(rt.segs) {
		return nil, false
	}
	var vars map[string]string
	for i, want := range rt.segs {
		got := segs[i]
		if i == len(segs)-1 {
			if rt.verb != "" {
				if !strings.HasSuffix(got, rt.verb) {
					return nil, false
				}
				got = strings.TrimSuffix(got, rt.verb)
			} else if strings.Contains(got, ":") {
				return nil, false
			}
		}
		if strings.HasPrefix(want, "{") {
			v, err := url.PathUnescape(got)
			if err != nil || v == "" {
				return nil, false
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[want[1:len(want)-1]] = v
		} else if want != got {
			return nil, false
		}
	}
	return vars, true
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ci := httpx.CallInfo(r)
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	rt, vars, tenant, allowed := h.match(r.Method, segs)
	if rt == nil {
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			h.writeError(w, ci, a2a.NewError(a2a.CodeMethodNotFound, "method %s is not allowed on %s", r.Method, r.URL.Path), http.StatusMethodNotAllowed)
			return
		}
		h.writeError(w, ci, a2a.NewError(a2a.CodeMethodNotFound, "no A2A operation at %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	req := rt.m.NewRequest()
	if err := h.decode(w, r, rt, req); err != nil {
		h.writeError(w, ci, a2a.AsError(err), 0)
		return
	}
	if err := bindPath(req, vars, tenant); err != nil {
		h.writeError(w, ci, err, 0)
		return
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if rt.m.Stream != nil {
		h.stream(w, ci, rt.m, rt.m.Stream(ctx, h.svc, req))
		return
	}
	resp, err := rt.m.Call(ctx, h.svc, req)
	if err != nil {
		e := a2a.AsError(err)
		httpx.LogError(h.opts.Logger, rt.m.Name, e)
		h.writeError(w, ci, e, 0)
		return
	}
	b, err := a2a.AppendJSON(make([]byte, 0, 512), resp)
	if err != nil {
		h.writeError(w, ci, a2a.Internal(err), 0)
		return
	}
	httpx.SetResponseHeaders(w, ci, nil)
	w.Header().Set("Content-Type", ContentType)
	w.Write(b)
}

// decode fills req from the body (operations with a body) and the query
// string (brief §11.5).
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, rt *route, req proto.Message) error {
	if rt.m.HasBody || r.Method == http.MethodPost {
		body, err := httpx.ReadBody(w, r, h.opts.MaxBody)
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			if ct := r.Header.Get("Content-Type"); ct != "" {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || (mt != ContentType && mt != "application/json") {
					return a2a.NewError(a2a.CodeInvalidRequest,
						"content type %q is not accepted: send application/a2a+json or application/json", ct)
				}
			}
			if err := a2a.Unmarshal(body, req); err != nil {
				return a2a.NewError(a2a.CodeInvalidParams, "%v", err)
			}
		}
	}
	return decodeQuery(r.URL.Query(), req)
}

// decodeQuery sets scalar fields of req from query parameters named by their
// JSON (camelCase) or proto (snake_case) names; unknown names are ignored
// (the A2A-Version parameter among them). Nested messages are not supported
// in queries (brief §11.5), except google.protobuf.Timestamp.
func decodeQuery(q url.Values, req proto.Message) error {
	if len(q) == 0 {
		return nil
	}
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	var bad []a2a.FieldViolation
	for key, vals := range q {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(key))
		}
		if fd == nil || len(vals) == 0 {
			continue
		}
		raw := vals[len(vals)-1]
		v, ok := scalar(fd, raw)
		if !ok {
			bad = append(bad, a2a.FieldViolation{Field: fd.JSONName(), Description: "invalid value " + strconv.Quote(raw)})
			continue
		}
		m.Set(fd, v)
	}
	if len(bad) > 0 {
		return a2a.InvalidParams(bad...)
	}
	return nil
}

// scalar parses one query value for a field.
func scalar(fd protoreflect.FieldDescriptor, raw string) (protoreflect.Value, bool) {
	if fd.IsList() || fd.IsMap() {
		return protoreflect.Value{}, false
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(raw), true
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(raw)
		return protoreflect.ValueOfBool(b), err == nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(raw, 10, 32)
		return protoreflect.ValueOfInt32(int32(n)), err == nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(raw)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), true
		}
		return protoreflect.Value{}, false
	case protoreflect.MessageKind:
		if fd.Message().FullName() == "google.protobuf.Timestamp" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return protoreflect.Value{}, false
			}
			return protoreflect.ValueOfMessage(timestamppb.New(t).ProtoReflect()), true
		}
	}
	return protoreflect.Value{}, false
}

// bindPath copies path variables and the tenant segment into the request.
// A body value that disagrees with the path is refused.
func bindPath(req proto.Message, vars map[string]string, tenant string) *a2a.Error {
	if tenant != "" {
		vars2 := map[string]string{"tenant": tenant}
		for k, v := range vars {
			vars2[k] = v
		}
		vars = vars2
	}
	m := req.ProtoReflect()
	for name, val := range vars {
		fd := m.Descriptor().Fields().ByJSONName(name)
		if fd == nil {
			continue
		}
		if cur := m.Get(fd).String(); cur != "" && cur != val {
			return a2a.InvalidParams(a2a.FieldViolation{Field: name, Description: "the value in the body differs from the one in the URL path"})
		}
		m.Set(fd, protoreflect.ValueOfString(val))
	}
	return nil
}

// stream answers a streaming operation with SSE whose data lines are bare
// StreamResponse objects (brief §5.1). An error before the first event is an
// ordinary error response; a later one is sent as an `error` event holding
// the error object, and ends the stream.
func (h *Handler) stream(w http.ResponseWriter, ci *a2a.CallInfo, m *a2a.Method, seq iter.Seq2[a2a.StreamEvent, error]) {
	httpx.Stream(w, ci, h.opts, m.Name, seq, "error",
		func(e *a2a.Error) { h.writeError(w, ci, e, 0) },
		func(resp *a2a.StreamResponse) ([]byte, error) { return a2a.AppendJSON(make([]byte, 0, 512), resp) },
		func(e *a2a.Error) []byte { return AppendError(nil, e, 0) })
}

// writeError writes an error response: the HTTP status of the error (or
// the given one) and a google.rpc.Status body (brief §7.4).
func (h *Handler) writeError(w http.ResponseWriter, ci *a2a.CallInfo, e *a2a.Error, status int) {
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	httpx.SetResponseHeaders(w, ci, e)
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(status)
	w.Write(AppendError(nil, e, status))
}

// AppendError renders {"error":{"code","status","message","details"}}.
// status 0 means the error's own HTTP status.
func AppendError(b []byte, e *a2a.Error, status int) []byte {
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	_, name := e.Code.GRPCStatus()
	if status == http.StatusNotFound && e.Code == a2a.CodeMethodNotFound {
		name = "NOT_FOUND"
	}
	b = append(b, `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"status":"`...)
	b = append(b, name...)
	b = append(b, `","message":`...)
	msg, _ := json.Marshal(e.WireMessage())
	b = append(b, msg...)
	b = append(b, `,"details":`...)
	b = httpx.AppendDetails(b, e)
	return append(b, "}}"...)
}
