package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
)

// This file is the one copy of the HTTP+JSON routes (spec §11.3): the server
// matches requests against them, and the client, the conformance checker
// and any other caller build requests with EncodeRequest.

// route is a parsed a2a.Method path.
type route struct {
	m    *a2a.Method
	segs []string // literal segments, or "{name}" variables
	verb string   // custom verb of the last segment, e.g. ":cancel"
	// vars names the path's variables in the order of the path, and fields
	// holds the request field each binds (nil when the request has none).
	vars   []string
	fields []protoreflect.FieldDescriptor
	tenant protoreflect.FieldDescriptor // the request's tenant field, or nil
}

// maxPathVars bounds the variables of one route (the method table's
// routes have at most two), so a match holds them without allocating.
const maxPathVars = 4

// pathVars are the values of a matched route's variables, unescaped, in the
// order of route.vars.
type pathVars [maxPathVars]string

// parseRoutes parses the paths of the method table.
func parseRoutes() []route {
	var routes []route
	for m := range a2a.Methods() {
		segs := strings.Split(strings.TrimPrefix(m.Path, "/"), "/")
		rt := route{m: m, segs: segs}
		last := segs[len(segs)-1]
		if j := strings.LastIndexByte(last, ':'); j >= 0 {
			rt.verb = last[j:]
			segs[len(segs)-1] = last[:j]
		}
		fields := m.NewRequest().ProtoReflect().Descriptor().Fields()
		rt.tenant = fields.ByJSONName("tenant")
		for _, seg := range segs {
			if strings.HasPrefix(seg, "{") {
				name := seg[1 : len(seg)-1]
				rt.vars = append(rt.vars, name)
				rt.fields = append(rt.fields, fields.ByJSONName(name))
			}
		}
		if len(rt.vars) > maxPathVars {
			panic("rest: route " + m.Path + " has more variables than maxPathVars")
		}
		routes = append(routes, rt)
	}
	return routes
}

// splitPath splits an escaped path without its leading slash at every
// slash, as strings.Split does, into buf when the segments fit.
func splitPath(p string, buf []string) []string {
	segs := buf[:0]
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(segs, p)
		}
		segs = append(segs, p[:i])
		p = p[i+1:]
	}
}

// match finds the route of a path: first as is, then with the first segment
// taken as the tenant. It returns the route, the path variables, the tenant,
// and, when the path matched routes only under other verbs, those verbs.
func (h *Handler) match(method string, segs []string) (*route, pathVars, string, []string) {
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
	return nil, pathVars{}, "", allowed
}

func (rt *route) matchPath(segs []string) (pathVars, bool) {
	var vars pathVars
	if len(segs) != len(rt.segs) {
		return vars, false
	}
	n := 0
	for i, want := range rt.segs {
		got := segs[i]
		if i == len(segs)-1 {
			if rt.verb != "" {
				if !strings.HasSuffix(got, rt.verb) {
					return vars, false
				}
				got = strings.TrimSuffix(got, rt.verb)
			} else if strings.Contains(got, ":") {
				return vars, false
			}
		}
		if strings.HasPrefix(want, "{") {
			v, err := url.PathUnescape(got)
			if err != nil || v == "" {
				return vars, false
			}
			vars[n] = v
			n++
		} else if want != got {
			return vars, false
		}
	}
	return vars, true
}

// bindPath copies the tenant segment and the path variables into the
// request, a matched route's request type (spec §11.3: every route is also
// served under a leading tenant segment). A body value that disagrees with
// the path is refused.
func (rt *route) bindPath(req proto.Message, vars *pathVars, tenant string) *a2a.Error {
	if tenant != "" && rt.tenant != nil {
		if err := bindField(req, rt.tenant, tenant); err != nil {
			return err
		}
	}
	for i, fd := range rt.fields {
		if fd == nil {
			continue
		}
		if err := bindField(req, fd, vars[i]); err != nil {
			return err
		}
	}
	return nil
}

// bindField sets one string field of req to a value from the path, unless
// the body set it to another.
func bindField(req proto.Message, fd protoreflect.FieldDescriptor, val string) *a2a.Error {
	if p := stringField(req, fd.JSONName()); p != nil {
		if *p != "" && *p != val {
			return pathMismatch(fd)
		}
		*p = val
		return nil
	}
	m := req.ProtoReflect()
	if cur := m.Get(fd).String(); cur != "" && cur != val {
		return pathMismatch(fd)
	}
	m.Set(fd, protoreflect.ValueOfString(val))
	return nil
}

func pathMismatch(fd protoreflect.FieldDescriptor) *a2a.Error {
	return a2a.InvalidParams(a2a.FieldViolation{Field: fd.JSONName(), Description: "the value in the body differs from the one in the URL path"})
}

// stringField returns the Go field of the request types that path
// variables and the tenant segment most often bind, by JSON name, so that
// binding them needs no reflection; nil for any other, which bindField
// sets through protoreflect.
func stringField(req proto.Message, name string) *string {
	switch r := req.(type) {
	case *a2a.GetTaskRequest:
		switch name {
		case "id":
			return &r.Id
		case "tenant":
			return &r.Tenant
		}
	case *a2a.CancelTaskRequest:
		switch name {
		case "id":
			return &r.Id
		case "tenant":
			return &r.Tenant
		}
	case *a2a.SubscribeToTaskRequest:
		switch name {
		case "id":
			return &r.Id
		case "tenant":
			return &r.Tenant
		}
	case *a2a.SendMessageRequest:
		if name == "tenant" {
			return &r.Tenant
		}
	case *a2a.ListTasksRequest:
		if name == "tenant" {
			return &r.Tenant
		}
	}
	return nil
}

// Request is one operation as an HTTP+JSON request.
type Request struct {
	// Verb is the HTTP method.
	Verb string
	// Path is the path below the interface URL: the tenant as a leading
	// segment when the request has one, then the route with its variables
	// filled in, each segment percent-encoded.
	Path string
	// Query is the encoded query string ("" when empty) of a GET or
	// DELETE request: the members not carried by the path (spec §11.5).
	Query string
	// Body is the JSON body of a POST request without the members carried
	// by the path; nil when nothing remains.
	Body []byte
}

// EncodeRequest maps a request message onto its operation's route. verb
// overrides the route's HTTP method when not "" (the client sends
// SubscribeToTask as POST, decision B1). A path variable left empty is
// refused with InvalidParams, since the route cannot be built.
func EncodeRequest(m *a2a.Method, req proto.Message, verb string) (Request, error) {
	msg := req.ProtoReflect()
	fields := msg.Descriptor().Fields()
	bound := map[string]bool{"tenant": true}
	var path strings.Builder
	if tf := fields.ByName("tenant"); tf != nil {
		if tenant := msg.Get(tf).String(); tenant != "" {
			path.WriteString("/")
			path.WriteString(url.PathEscape(tenant))
		}
	}
	rest := m.Path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			path.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}') + i
		name := rest[i+1 : j]
		path.WriteString(rest[:i])
		v := ""
		if fd := fields.ByJSONName(name); fd != nil {
			v = msg.Get(fd).String()
		}
		if v == "" {
			return Request{}, a2a.InvalidParams(a2a.FieldViolation{Field: name, Description: "required field is missing"})
		}
		path.WriteString(url.PathEscape(v))
		bound[name] = true
		rest = rest[j+1:]
	}
	r := Request{Verb: m.HTTPMethod, Path: path.String()}
	if verb != "" {
		r.Verb = verb
	}
	var err error
	if r.Verb == http.MethodPost {
		if r.Body, err = bodyWithout(req, bound); err != nil {
			return Request{}, fmt.Errorf("encoding the %s request: %w", m.Name, err)
		}
		return r, nil
	}
	r.Query, err = encodeQuery(msg, bound)
	return r, err
}

// bodyWithout renders req as JSON without the members carried by the path.
// An empty result is sent as no body at all.
func bodyWithout(req proto.Message, bound map[string]bool) ([]byte, error) {
	b, err := a2a.Marshal(req)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	changed := false
	for name := range bound {
		if _, ok := obj[name]; ok {
			delete(obj, name)
			changed = true
		}
	}
	if len(obj) == 0 {
		return nil, nil
	}
	if !changed {
		return b, nil
	}
	return json.Marshal(obj)
}
