package transport_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03/v03grpc"
	"parley.dev/parley/internal/v03/v03http"
)

// Every client transport, v1.0 and v0.3 over the three bindings, against
// the servers of this module on one loopback port (HTTP/1.1 and h2c), each
// in front of a scripted service: a task id "ok" is found, a task id
// "e<code>" fails with that code, before any event (unary calls) or after
// one (streams).

// headerRecorder keeps the headers of every request the server got.
type headerRecorder struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *headerRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Clone())
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (h *headerRecorder) take() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.seen
	h.seen = nil
	return s
}

// scripted is the service: errors come from errorFor.
func scripted(errorFor func(id string) *a2a.Error) a2a.Service {
	task := func(id string) *a2a.Task {
		return &a2a.Task{Id: id, ContextId: "c1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
	}
	return a2a.NewService(a2a.InvokerFuncs{
		CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
			id := req.(*a2a.GetTaskRequest).GetId()
			if e := errorFor(id); e != nil {
				return nil, e
			}
			return task(id), nil
		},
		StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
			id := req.(*a2a.SubscribeToTaskRequest).GetId()
			return func(yield func(a2a.StreamEvent, error) bool) {
				if !yield(a2a.StreamEvent{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: task(id)}}}, nil) {
					return
				}
				if e := errorFor(id); e != nil {
					yield(a2a.StreamEvent{}, e)
				}
			}
		},
	})
}

// client is one transport under test.
type client struct {
	name    string
	factory transport.Factory
	path    string // below the server's URL
	grpc    bool
}

var clients = []client{
	{"v1.0 JSONRPC", jsonrpc.Factory(), "/jsonrpc", false},
	{"v1.0 HTTP+JSON", rest.Factory(), "/rest", false},
	{"v1.0 GRPC", grpcbind.Factory(), "", true},
	{"v0.3 JSONRPC", v03http.JSONRPCFactory(), "/jsonrpc", false},
	{"v0.3 HTTP+JSON", v03http.RESTFactory(), "/v03rest", false},
	{"v0.3 GRPC", v03grpc.Factory(), "", true},
}

// serve starts every binding's server, v1.0 and v0.3, for svc.
func serve(t *testing.T, svc a2a.Service, rec *headerRecorder) string {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hopts := &jsonrpc.Options{Logger: quiet}
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", jsonrpc.NewHandler(svc, hopts, v03http.NewJSONRPC(svc, hopts, true)))
	mux.Handle("/rest/", http.StripPrefix("/rest", rest.NewHandler(svc, hopts)))
	mux.Handle("/v03rest/", http.StripPrefix("/v03rest", v03http.NewREST(svc, hopts, true)))
	mux.Handle("/"+v03grpc.ServiceName+"/", v03grpc.NewHandler(svc, &v03grpc.Options{Logger: quiet}))
	mux.Handle("/", grpcbind.NewHandler(svc, &grpcbind.Options{Logger: quiet}))
	srv := httptest.NewUnstartedServer(rec.wrap(mux))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func (c client) open(t *testing.T, base string, cfg transport.Config) transport.Transport {
	t.Helper()
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{}}
	tr, err := c.factory.New(&a2a.AgentInterface{Url: base + c.path, ProtocolBinding: c.factory.Binding}, cfg)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

var (
	getTask     = a2a.MethodByName(a2a.MethodGetTask)
	subscribeTo = a2a.MethodByName(a2a.MethodSubscribeToTask)
)

// TestInjectedHeaders: Config.Inject's headers (a W3C traceparent and a
// header of the caller's) and Config.Header's arrive with every request of
// every transport, unary and streaming.
func TestInjectedHeaders(t *testing.T) {
	rec := &headerRecorder{}
	base := serve(t, scripted(func(string) *a2a.Error { return nil }), rec)
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cfg := transport.Config{
		Header: http.Header{"X-Fixed": {"f"}},
		Inject: func(ctx context.Context, h http.Header) {
			h.Set("Traceparent", traceparent)
			h.Set("X-Injected", ctx.Value(ctxKey{}).(string))
		},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			tr := c.open(t, base, cfg)
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "from-ctx"), 10*time.Second)
			defer cancel()
			rec.take()
			if _, err := tr.Call(ctx, getTask, &a2a.GetTaskRequest{Id: "ok"}); err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			check := func(call string) {
				t.Helper()
				seen := rec.take()
				if len(seen) != 1 {
					t.Fatalf("%s: the server saw %d requests, want 1", call, len(seen))
				}
				h := seen[0]
				if h.Get("Traceparent") != traceparent || h.Get("X-Injected") != "from-ctx" || h.Get("X-Fixed") != "f" {
					t.Errorf("%s: traceparent %q, x-injected %q, x-fixed %q; want %q, from-ctx, f",
						call, h.Get("Traceparent"), h.Get("X-Injected"), h.Get("X-Fixed"), traceparent)
				}
			}
			check("GetTask")
			n := 0
			for _, err := range tr.Stream(ctx, subscribeTo, &a2a.SubscribeToTaskRequest{Id: "ok"}) {
				if err != nil {
					t.Fatalf("SubscribeToTask: %v", err)
				}
				n++
			}
			if n != 1 {
				t.Fatalf("SubscribeToTask: %d events, want 1", n)
			}
			check("SubscribeToTask")
		})
	}
}

type ctxKey struct{}

// allCodes is every code of a2a's error table. The table is not exported;
// a code outside it is named as InternalError, so the codes whose name is
// their own are the table's.
func allCodes() []a2a.Code {
	var out []a2a.Code
	for n := -35000; n <= -31000; n++ {
		c := a2a.Code(n)
		if c == a2a.CodeInternal || c.Name() != a2a.CodeInternal.Name() {
			out = append(out, c)
		}
	}
	return out
}

// readsAs is what a client reads an error without metadata as, where that
// is not the error itself: the errors the spec gives no ErrorInfo send
// none, and read as the default of a value they share with another error
// (a2a/errors.go, the error table). stream says the error ended a stream,
// where no HTTP status comes with it.
func readsAs(c client, code a2a.Code, stream bool) a2a.Code {
	switch {
	case (c.grpc || c.name == "v1.0 HTTP+JSON") && (code == a2a.CodeParseError || code == a2a.CodeInvalidRequest):
		return a2a.CodeInvalidParams // INVALID_ARGUMENT, HTTP 400
	case code == a2a.CodeRequestTooLarge && (strings.HasSuffix(c.name, "JSONRPC") || c.name == "v0.3 HTTP+JSON" && stream):
		return a2a.CodeInvalidRequest // -32600 (v0.3 HTTP+JSON: without its HTTP 413)
	}
	return code
}

// TestErrorsRoundTrip: every code of the error table, sent by each
// binding's server (unary, and in a stream after its first event), reads
// back in each client transport as the same code with the same message;
// with metadata and a field violation, as the same code exactly, with the
// same metadata and violations (an ErrorInfo, or v0.3's data, carries
// them).
func TestErrorsRoundTrip(t *testing.T) {
	codes := allCodes()
	if len(codes) != 20 { // the 1.1 preview's TaskGenerationMismatchError and PermissionDeniedError included
		t.Fatalf("the table has %d codes: %v", len(codes), codes)
	}
	for _, withMeta := range []bool{false, true} {
		errorFor := func(id string) *a2a.Error {
			n, err := strconv.Atoi(strings.TrimPrefix(id, "e"))
			if err != nil {
				return nil
			}
			e := a2a.NewError(a2a.Code(n), "message of %s", a2a.Code(n).Name())
			if withMeta {
				e = e.WithMeta("k", "v")
				e.Violations = []a2a.FieldViolation{{Field: "f", Description: "d"}}
			}
			return e
		}
		base := serve(t, scripted(errorFor), &headerRecorder{})
		for _, c := range clients {
			tr := c.open(t, base, transport.Config{})
			for _, code := range codes {
				name := c.name + "/" + code.Name()
				if withMeta {
					name += "/metadata"
				}
				t.Run(name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					want := errorFor("e" + strconv.Itoa(int(code)))
					wantCode := func(stream bool) a2a.Code {
						if withMeta {
							return code
						}
						return readsAs(c, code, stream)
					}
					_, err := tr.Call(ctx, getTask, &a2a.GetTaskRequest{Id: "e" + strconv.Itoa(int(code))})
					checkError(t, "GetTask", err, want, wantCode(false))
					var last error
					for _, err := range tr.Stream(ctx, subscribeTo, &a2a.SubscribeToTaskRequest{Id: "e" + strconv.Itoa(int(code))}) {
						last = err
					}
					checkError(t, "SubscribeToTask", last, want, wantCode(true))
				})
			}
		}
	}
}

func checkError(t *testing.T, call string, err error, want *a2a.Error, code a2a.Code) {
	t.Helper()
	var got *a2a.Error
	if !errors.As(err, &got) {
		t.Fatalf("%s: %v, want an *a2a.Error", call, err)
	}
	if got.Code != code || got.Message != want.Message {
		t.Errorf("%s: %s %q, want %s %q", call, got.Code.Name(), got.Message, code.Name(), want.Message)
	}
	if !maps.Equal(got.Metadata, want.Metadata) || !slices.Equal(got.Violations, want.Violations) {
		t.Errorf("%s: metadata %v, violations %v; want %v, %v", call, got.Metadata, got.Violations, want.Metadata, want.Violations)
	}
}

// TestTokenPerRequest: Config.Token is asked for every request of every
// transport, unary and streaming, and its token replaces an Authorization
// in Config.Header; when it fails, nothing is sent and the call fails
// with a *transport.TokenError wrapping its error.
func TestTokenPerRequest(t *testing.T) {
	rec := &headerRecorder{}
	base := serve(t, scripted(func(string) *a2a.Error { return nil }), rec)
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			cfg := transport.Config{
				Header: http.Header{"Authorization": {"Bearer stale"}},
				Token: func(context.Context) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					n++
					return "tok" + strconv.Itoa(n), nil
				},
			}
			tr := c.open(t, base, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rec.take()
			for i := 1; i <= 2; i++ {
				if _, err := tr.Call(ctx, getTask, &a2a.GetTaskRequest{Id: "ok"}); err != nil {
					t.Fatalf("GetTask: %v", err)
				}
			}
			for _, err := range tr.Stream(ctx, subscribeTo, &a2a.SubscribeToTaskRequest{Id: "ok"}) {
				if err != nil {
					t.Fatalf("SubscribeToTask: %v", err)
				}
			}
			var got []string
			for _, h := range rec.take() {
				got = append(got, strings.Join(h.Values("Authorization"), ","))
			}
			if want := []string{"Bearer tok1", "Bearer tok2", "Bearer tok3"}; !slices.Equal(got, want) {
				t.Errorf("Authorization of the requests = %q, want %q", got, want)
			}

			refused := errors.New("refresh refused")
			cfg.Token = func(context.Context) (string, error) { return "", refused }
			tr = c.open(t, base, cfg)
			_, err := tr.Call(ctx, getTask, &a2a.GetTaskRequest{Id: "ok"})
			var tokErr *transport.TokenError
			if !errors.As(err, &tokErr) || !errors.Is(err, refused) {
				t.Errorf("GetTask with a failing token source = %v, want a *TokenError wrapping its error", err)
			}
			for _, err = range tr.Stream(ctx, subscribeTo, &a2a.SubscribeToTaskRequest{Id: "ok"}) {
			}
			if !errors.As(err, &tokErr) || !errors.Is(err, refused) {
				t.Errorf("SubscribeToTask with a failing token source = %v, want a *TokenError wrapping its error", err)
			}
			if seen := rec.take(); len(seen) != 0 {
				t.Errorf("the server saw %d requests without a token, want none", len(seen))
			}
		})
	}
}
