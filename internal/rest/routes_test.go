package rest

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
)

// genericBind is the binder by reflection alone that route.bindPath
// replaced: the path variables and the tenant by the request's JSON field
// names, a body value that disagrees with the path refused.
func genericBind(req proto.Message, vars map[string]string, tenant string) *a2a.Error {
	all := map[string]string{}
	for k, v := range vars {
		all[k] = v
	}
	if tenant != "" {
		all["tenant"] = tenant
	}
	m := req.ProtoReflect()
	for name, val := range all {
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

// TestBindPathMatchesGeneric checks, for every route of the method table,
// that the binder with its fields without reflection binds what binding by
// reflection alone does: each variable and the tenant into the same field,
// values from the body kept when they agree and refused when they differ.
func TestBindPathMatchesGeneric(t *testing.T) {
	h := &Handler{routes: parseRoutes()}
	if n := len(h.routes); n != len(slices.Collect(a2a.Methods())) {
		t.Fatalf("%d routes for %d methods", n, len(slices.Collect(a2a.Methods())))
	}
	for m := range a2a.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			var rt *route
			for i := range h.routes {
				if h.routes[i].m == m {
					rt = &h.routes[i]
				}
			}
			if rt == nil {
				t.Fatal("no route")
			}
			// The fast fields are the fields reflection finds.
			fields := m.NewRequest().ProtoReflect().Descriptor().Fields()
			for _, name := range append([]string{"tenant"}, rt.vars...) {
				req := m.NewRequest()
				p := stringField(req, name)
				if p == nil {
					continue
				}
				fd := fields.ByJSONName(name)
				if fd == nil {
					t.Fatalf("stringField has %q, the message has no such field", name)
				}
				*p = "sentinel"
				if got := req.ProtoReflect().Get(fd).String(); got != "sentinel" {
					t.Fatalf("stringField(%q) is not the field reflection reads (%q)", name, got)
				}
			}
			// Build a path for the route, with and without a tenant, and
			// bind it into requests whose body left the fields empty, set
			// them to the path's values, or set them to other values.
			for _, tenant := range []string{"", "acme corp"} {
				vals := map[string]string{}
				path := m.Path
				for _, v := range rt.vars {
					vals[v] = "v-" + v + "/%x"
					path = strings.Replace(path, "{"+v+"}", url.PathEscape(vals[v]), 1)
				}
				if tenant != "" {
					path = "/" + url.PathEscape(tenant) + path
				}
				var buf [8]string
				got, vars, gotTenant, _ := h.match(m.HTTPMethod, splitPath(strings.TrimPrefix(path, "/"), buf[:]))
				if got != rt {
					t.Fatalf("%s %s matched %v", m.HTTPMethod, path, got)
				}
				if gotTenant != tenant {
					t.Fatalf("tenant %q, want %q", gotTenant, tenant)
				}
				for i, v := range rt.vars {
					if vars[i] != vals[v] {
						t.Fatalf("variable %s = %q, want %q", v, vars[i], vals[v])
					}
				}
				names := append([]string{"tenant"}, rt.vars...)
				for _, body := range []string{"empty", "same", "other"} {
					fast, generic := m.NewRequest(), m.NewRequest()
					for _, req := range []proto.Message{fast, generic} {
						if body == "empty" {
							continue
						}
						r := req.ProtoReflect()
						for _, name := range names {
							fd := fields.ByJSONName(name)
							if fd == nil {
								continue
							}
							v := vals[name]
							if name == "tenant" {
								v = tenant
							}
							if body == "other" || v == "" {
								v = "from-body-" + name
							}
							r.Set(fd, protoreflect.ValueOfString(v))
						}
					}
					errFast := rt.bindPath(fast, &vars, gotTenant)
					errGeneric := genericBind(generic, vals, gotTenant)
					if (errFast == nil) != (errGeneric == nil) {
						t.Fatalf("tenant %q, body %s: fast binder error %v, generic %v", tenant, body, errFast, errGeneric)
					}
					if errFast != nil {
						if errFast.Code != errGeneric.Code {
							t.Fatalf("tenant %q, body %s: codes %v and %v", tenant, body, errFast.Code, errGeneric.Code)
						}
						continue
					}
					if !proto.Equal(fast, generic) {
						t.Fatalf("tenant %q, body %s: fast binder %v, generic %v", tenant, body, fast, generic)
					}
				}
			}
		})
	}
}

// TestSplitPathIsStringsSplit checks the split into a buffer against
// strings.Split, the buffer's size exceeded included.
func TestSplitPathIsStringsSplit(t *testing.T) {
	for _, p := range []string{"", "/", "a", "a/", "/a", "tasks/x:cancel", "a//b", strings.Repeat("s/", 20)} {
		var buf [8]string
		got, want := splitPath(p, buf[:]), strings.Split(p, "/")
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
			t.Errorf("splitPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// BenchmarkRoute measures the match and binding of a GetTask path.
func BenchmarkRoute(b *testing.B) {
	h := &Handler{routes: parseRoutes()}
	b.ReportAllocs()
	for b.Loop() {
		var buf [8]string
		rt, vars, tenant, _ := h.match("GET", splitPath("tasks/0f5e2c1a-6d3b-4c1e-9a7f-2b8d4e6f1a3c", buf[:]))
		req := rt.m.NewRequest()
		if err := rt.bindPath(req, &vars, tenant); err != nil {
			b.Fatal(err)
		}
	}
}
