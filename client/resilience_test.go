package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// TestTenant: the interface's tenant travels in every request (REST: the
// /{tenant}/ route; JSON-RPC: params.tenant) and scopes the tasks.
func TestTenant(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			e := start(t, config{wrap: rec.wrap, ifaces: func(base string) []*a2a.AgentInterface {
				return []*a2a.AgentInterface{
					{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0", Tenant: "acme"},
					{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0", Tenant: "acme"},
					{Url: hostOf(base), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: "acme"},
				}
			}})
			ctx := testCtx(t)
			c := e.client(b, nil)
			// The caller's own tenant is replaced by the interface's.
			task, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Tenant: "other", Message: a2a.UserMessage("hello")})
			if err != nil {
				t.Fatal(err)
			}
			id := task.GetTask().GetId()
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); err != nil {
				t.Fatalf("GetTask in the tenant = %v", err)
			}
			for _, r := range rec.all() {
				if b.name == a2a.BindingGRPC {
					var m struct{ Tenant string }
					switch r.path {
					case "/lf.a2a.v1.A2AService/SendMessage":
						sm := &a2a.SendMessageRequest{}
						grpcMessage(r.body, sm)
						m.Tenant = sm.Tenant
					case "/lf.a2a.v1.A2AService/GetTask":
						gt := &a2a.GetTaskRequest{}
						grpcMessage(r.body, gt)
						m.Tenant = gt.Tenant
					}
					if m.Tenant != "acme" {
						t.Errorf("gRPC %s message tenant %q, want acme", r.path, m.Tenant)
					}
				} else if b.name == a2a.BindingHTTPJSON {
					if !strings.HasPrefix(r.path, "/acme/") || strings.Contains(string(r.body), "tenant") {
						t.Errorf("REST request %s %s body %s, want the /acme/ route and no body tenant", r.method, r.path, r.body)
					}
				} else if !strings.Contains(string(r.body), `"tenant":"acme"`) {
					t.Errorf("JSON-RPC body %s, want tenant acme", r.body)
				}
			}

			// Without the tenant the task does not exist.
			plain := proto.Clone(e.card).(*a2a.AgentCard)
			for _, in := range plain.SupportedInterfaces {
				in.Tenant = ""
			}
			c2, err := client.New(plain, &client.Options{Transports: []client.TransportFactory{b.factory}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c2.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTask outside the tenant = %v, want TaskNotFound", err)
			}
			for cl, want := range map[*client.Client]int32{c: 1, c2: 0} {
				l, err := cl.ListTasks(ctx, nil)
				if err != nil || l.TotalSize != want {
					t.Errorf("ListTasks (tenant %q) = %v, %v; want %d tasks", cl.Interface().GetTenant(), l, err, want)
				}
			}
		})
	}
}

// TestFallback: an interface that cannot be reached is skipped for the
// next one in the card's order; an error the server sends is not a reason
// to move.
func TestFallback(t *testing.T) {
	t.Parallel()
	dead := closedURL(t)
	e := start(t, config{ifaces: func(base string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: dead + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: "http://192.0.2.1:1", ProtocolBinding: "SLIMRPC", ProtocolVersion: "1.0"}, // not supported: skipped
			{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"}, // wrong version: skipped
		}
	}})
	ctx := testCtx(t)

	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		c, err := client.New(e.card, &client.Options{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Interface().GetUrl(); got != dead+"/" {
			t.Fatalf("first interface = %s, want the card's first", got)
		}
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
			t.Fatalf("SendMessage = %v", err)
		}
		if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
			t.Fatalf("interface after fallback = %s, want HTTP+JSON", got)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		c, err := client.New(e.card, &client.Options{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
		if err != nil || len(evs) < 3 {
			t.Fatalf("SendStreamingMessage = %q, %v", kinds(evs), err)
		}
		if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
			t.Fatalf("interface after fallback = %s, want HTTP+JSON", got)
		}
	})
	t.Run("TLS handshake", func(t *testing.T) {
		t.Parallel()
		// A server whose certificate the client does not trust counts as
		// unreachable.
		untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
		untrusted.Config.ErrorLog = log.New(io.Discard, "", 0)
		untrusted.StartTLS()
		defer untrusted.Close()
		card := proto.Clone(e.card).(*a2a.AgentCard)
		card.SupportedInterfaces[0].Url = untrusted.URL + "/"
		c, err := client.New(card, &client.Options{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
			t.Fatalf("SendMessage = %v", err)
		}
		if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
			t.Fatalf("interface after a failed handshake = %s, want HTTP+JSON", got)
		}
	})
	t.Run("gRPC first, port closed", func(t *testing.T) {
		t.Parallel()
		live := start(t, config{})
		card := proto.Clone(live.card).(*a2a.AgentCard)
		card.SupportedInterfaces = []*a2a.AgentInterface{
			{Url: hostOf(dead), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
			{Url: hostOf(live.url), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
			{Url: live.url + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		}
		for _, stream := range []bool{false, true} {
			c, err := client.New(card, &client.Options{Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if stream {
				evs, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 1")}))
				if err != nil || len(evs) < 3 {
					t.Fatalf("SendStreamingMessage = %q, %v", kinds(evs), err)
				}
			} else if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
				t.Fatalf("SendMessage = %v", err)
			}
			if got := c.Interface(); got.GetUrl() != hostOf(live.url) || got.GetProtocolBinding() != a2a.BindingGRPC {
				t.Fatalf("interface after fallback = %s %s, want the second (gRPC) one", got.GetProtocolBinding(), got.GetUrl())
			}
		}
		// Alone, the closed gRPC port is a connect-phase TransportError.
		card.SupportedInterfaces = card.SupportedInterfaces[:1]
		c, err := client.New(card, &client.Options{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
		var te *client.TransportError
		var op *net.OpError
		if !errors.As(err, &te) || te.Phase != client.PhaseConnect || !errors.As(err, &op) {
			t.Fatalf("GetTask over a closed gRPC port = %v (%T), want a connect-phase TransportError wrapping a *net.OpError", err, err)
		}
	})
	t.Run("server error does not move", func(t *testing.T) {
		t.Parallel()
		live := start(t, config{})
		c, err := client.New(live.card, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("GetTask = %v", err)
		}
		if got := c.Interface().GetProtocolBinding(); got != a2a.BindingJSONRPC {
			t.Fatalf("interface = %s, want still JSONRPC", got)
		}
	})
	t.Run("nothing reachable", func(t *testing.T) {
		t.Parallel()
		card := proto.Clone(e.card).(*a2a.AgentCard)
		card.SupportedInterfaces = card.SupportedInterfaces[:1]
		c, err := client.New(card, &client.Options{Retries: 1, RetryDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
		var te *client.TransportError
		var op *net.OpError
		if !errors.As(err, &te) || te.Phase != client.PhaseConnect || !te.Temporary() || !errors.As(err, &op) {
			t.Fatalf("GetTask = %v (%T), want a connect-phase TransportError wrapping a *net.OpError", err, err)
		}
	})
	t.Run("no usable interface", func(t *testing.T) {
		t.Parallel()
		card := proto.Clone(e.card).(*a2a.AgentCard)
		card.SupportedInterfaces = card.SupportedInterfaces[1:2]
		if _, err := client.New(card, nil); err == nil || !strings.Contains(err.Error(), "SLIMRPC") {
			t.Fatalf("New = %v, want an error naming the unsupported binding", err)
		}
	})
}

// countingCard counts card requests and 304 answers in front of h.
type countingCard struct {
	h         http.Handler
	gets, nms atomic.Int64
	inm       atomic.Value // last If-None-Match
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (c *countingCard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/.well-known/agent-card.json" {
		c.h.ServeHTTP(w, r)
		return
	}
	c.gets.Add(1)
	c.inm.Store(r.Header.Get("If-None-Match"))
	sw := &statusWriter{ResponseWriter: w, status: 200}
	c.h.ServeHTTP(sw, r)
	if sw.status == http.StatusNotModified {
		c.nms.Add(1)
	}
}

// TestResolveCache: a fresh card is not fetched again; an expired one is
// revalidated and reused on 304.
func TestResolveCache(t *testing.T) {
	t.Parallel()
	cc := &countingCard{}
	e := start(t, config{wrap: func(h http.Handler) http.Handler { cc.h = h; return cc }})
	ctx := testCtx(t)
	var mu sync.Mutex
	now := time.Now()
	cache := &client.CardCache{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
	opts := &client.ResolveOptions{Cache: cache}

	card, err := client.Resolve(ctx, e.url, opts)
	if err != nil || !proto.Equal(card, e.card) {
		t.Fatalf("Resolve = %v, %v; want the served card", card, err)
	}
	card.Name = "changed by the caller" // must not reach the cache
	for _, u := range []string{e.url, e.url + "/", e.url + "/.well-known/agent-card.json"} {
		card, err = client.Resolve(ctx, u, opts)
		if err != nil || card.Name != e.card.Name {
			t.Fatalf("Resolve(%s) = %v, %v", u, card, err)
		}
	}
	if n := cc.gets.Load(); n != 1 {
		t.Fatalf("%d card requests within max-age, want 1", n)
	}

	mu.Lock()
	now = now.Add(301 * time.Second) // Parley's max-age is 300
	mu.Unlock()
	card, err = client.Resolve(ctx, e.url, opts)
	if err != nil || !proto.Equal(card, e.card) {
		t.Fatalf("Resolve after expiry = %v, %v", card, err)
	}
	if g, n := cc.gets.Load(), cc.nms.Load(); g != 2 || n != 1 || cc.inm.Load() == "" {
		t.Fatalf("after expiry: %d requests, %d answered 304 (If-None-Match %q); want 2 and 1", g, n, cc.inm.Load())
	}
	if _, err := client.Resolve(ctx, e.url, opts); err != nil || cc.gets.Load() != 2 {
		t.Fatalf("Resolve after revalidation: %v, %d requests; want the refreshed entry used", err, cc.gets.Load())
	}
	// Without a cache every call fetches.
	client.Resolve(ctx, e.url, nil)
	if cc.gets.Load() != 3 {
		t.Fatalf("Resolve without a cache did not fetch")
	}
}

// TestResolveErrors: what Resolve says about things that are not v1.0
// cards.
func TestResolveErrors(t *testing.T) {
	t.Parallel()
	v1, _ := json.Marshal(map[string]any{
		"name": "x", "description": "d", "version": "1", "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills":              []any{map[string]any{"id": "s", "name": "s", "description": "s", "tags": []string{"t"}}},
		"supportedInterfaces": []any{map[string]any{"url": "http://127.0.0.1:1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
	})
	cases := []struct {
		name        string
		ctype, body string
		status      int
		legacy      bool
		violations  string
		message     string
	}{
		{name: "v0.3 card", body: `{"name":"old","url":"http://h/a2a","protocolVersion":"0.3.0","preferredTransport":"JSONRPC","skills":[]}`, legacy: true, message: "0.3.0"},
		{name: "v0.3 url only", body: `{"name":"old","url":"http://h/a2a"}`, legacy: true},
		{name: "top-level protocolVersion", body: strings.Replace(string(v1), `{`, `{"protocolVersion":"0.3",`, 1), legacy: true},
		{name: "HTML", ctype: "text/html", body: "<html>hi</html>", message: "text/html"},
		{name: "not an object", body: `[1,2]`, message: "not a JSON object"},
		{name: "missing members", body: `{"name":"x","supportedInterfaces":[]}`, violations: "description"},
		{name: "wrong types", body: `{"name":5}`, message: "not an agent card"},
		{name: "404", status: 404, body: "no", message: "404"},
		{name: "valid", body: string(v1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("A2A-Version") != "1.0" {
					t.Errorf("card request without A2A-Version: 1.0")
				}
				ct := tc.ctype
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				if tc.status != 0 {
					w.WriteHeader(tc.status)
				}
				io.WriteString(w, tc.body)
			}))
			defer hs.Close()
			card, err := client.Resolve(testCtx(t), hs.URL+"/agent.json", nil)
			if tc.name == "valid" {
				if err != nil || card.Name != "x" {
					t.Fatalf("Resolve = %v, %v", card, err)
				}
				return
			}
			var ce *client.CardError
			if !errors.As(err, &ce) {
				t.Fatalf("Resolve = %v (%T), want a *CardError", err, err)
			}
			if errors.Is(err, client.ErrLegacyCard) != tc.legacy {
				t.Errorf("errors.Is(%v, ErrLegacyCard) = %v, want %v", err, !tc.legacy, tc.legacy)
			}
			if tc.violations != "" && !strings.Contains(err.Error(), tc.violations) {
				t.Errorf("error %q does not name %q", err, tc.violations)
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not mention %q", err, tc.message)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		_, err := client.Resolve(testCtx(t), closedURL(t), nil)
		var te *client.TransportError
		if !errors.As(err, &te) || te.Phase != client.PhaseConnect {
			t.Fatalf("Resolve = %v, want a connect TransportError", err)
		}
	})
	t.Run("CardURL", func(t *testing.T) {
		t.Parallel()
		for in, want := range map[string]string{
			"https://a.example":                        "https://a.example/.well-known/agent-card.json",
			"https://a.example/":                       "https://a.example/.well-known/agent-card.json",
			"https://a.example/agents/x":               "https://a.example/agents/x/.well-known/agent-card.json",
			"https://a.example/cards/x.json":           "https://a.example/cards/x.json",
			"https://a.example/.well-known/agent.json": "https://a.example/.well-known/agent.json",
		} {
			if got, err := client.CardURL(in); err != nil || got != want {
				t.Errorf("CardURL(%s) = %s, %v; want %s", in, got, err, want)
			}
		}
		if _, err := client.CardURL("ftp://x"); err == nil {
			t.Errorf("CardURL(ftp://x) succeeded")
		}
	})
}

// flaky sits in front of Parley and fails the first matching request
// after Parley handled it: "drop" closes the connection without an
// answer, "503" answers Service Unavailable. It records the messageIds it
// saw.
type flaky struct {
	h      http.Handler
	mode   string
	match  func(r *http.Request, body []byte) bool
	failed atomic.Bool
	count  atomic.Int64
	mu     sync.Mutex
	ids    []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if f.match != nil && !f.match(r, body) {
		f.h.ServeHTTP(w, r)
		return
	}
	f.count.Add(1)
	var probe struct {
		Message struct {
			MessageID string `json:"messageId"`
		} `json:"message"`
		Params struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		} `json:"params"`
	}
	json.Unmarshal(body, &probe)
	if isGRPC(r) {
		sm := &a2a.SendMessageRequest{}
		if grpcMessage(body, sm) == nil {
			probe.Message.MessageID = sm.GetMessage().GetMessageId()
		}
	}
	f.mu.Lock()
	f.ids = append(f.ids, probe.Message.MessageID+probe.Params.Message.MessageID)
	f.mu.Unlock()
	if f.failed.Swap(true) {
		f.h.ServeHTTP(w, r)
		return
	}
	// The server does the work; the answer is lost on the way back.
	f.h.ServeHTTP(httptest.NewRecorder(), r)
	switch f.mode {
	case "drop":
		if r.ProtoMajor == 2 {
			panic(http.ErrAbortHandler) // HTTP/2: the stream is reset
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case "503":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "upstream unavailable")
	}
}

func isSend(r *http.Request, body []byte) bool {
	return strings.HasPrefix(r.URL.Path, "/message:") || strings.HasSuffix(r.URL.Path, "/SendMessage") ||
		strings.HasSuffix(r.URL.Path, "/SendStreamingMessage") || bytes.Contains(body, []byte(`"method":"SendMessage"`)) ||
		bytes.Contains(body, []byte(`"method":"SendStreamingMessage"`))
}

// TestRetries: transport failures are retried with the same messageId, so
// the agent runs once and one task exists; server errors are not retried.
func TestRetries(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"drop", "503"} {
				for _, streaming := range []bool{false, true} {
					name := mode
					if streaming {
						name += " stream"
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						f := &flaky{mode: mode, match: isSend}
						e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
						c := e.client(b, nil)
						ctx := testCtx(t)
						req := &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("hello")}}}
						if streaming {
							evs, err := collect(c.SendStreamingMessage(ctx, req))
							if err != nil || len(evs) == 0 {
								t.Fatalf("SendStreamingMessage = %q, %v", kinds(evs), err)
							}
							last := evs[len(evs)-1].Response
							if last.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED &&
								last.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
								t.Fatalf("stream ended with %q, want COMPLETED", kinds(evs))
							}
						} else if resp, err := c.SendMessage(ctx, req); err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
							t.Fatalf("SendMessage = %v, %v", resp, err)
						}
						if req.Message.MessageId != "" {
							t.Errorf("the caller's request was modified")
						}
						f.mu.Lock()
						ids := append([]string(nil), f.ids...)
						f.mu.Unlock()
						if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
							t.Fatalf("messageIds sent = %q, want the same one twice", ids)
						}
						if n := e.runs.Load(); n != 1 {
							t.Errorf("the agent ran %d times, want 1", n)
						}
						list, err := c.ListTasks(ctx, nil)
						if err != nil || list.TotalSize != 1 {
							t.Errorf("ListTasks = %v, %v; want exactly one task", list, err)
						}
					})
				}
			}

			t.Run("no retries", func(t *testing.T) {
				t.Parallel()
				f := &flaky{mode: "drop", match: isSend}
				e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
				c := e.client(b, &client.Options{Retries: -1})
				_, err := c.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
				var te *client.TransportError
				if !errors.As(err, &te) || te.Phase != client.PhaseRequest || !te.Temporary() {
					t.Fatalf("SendMessage = %v (%T), want a request-phase TransportError", err, err)
				}
				if f.count.Load() != 1 {
					t.Errorf("%d attempts, want 1", f.count.Load())
				}
			})

			t.Run("server errors are not retried", func(t *testing.T) {
				t.Parallel()
				f := &flaky{mode: "none"}
				f.failed.Store(true)
				e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
				c := e.client(b, nil)
				if _, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("GetTask = %v", err)
				}
				if f.count.Load() != 1 {
					t.Errorf("%d attempts, want 1", f.count.Load())
				}
			})

			t.Run("unsafe operation", func(t *testing.T) {
				t.Parallel()
				f := &flaky{mode: "503", match: func(r *http.Request, body []byte) bool {
					return strings.Contains(r.URL.Path, "pushNotificationConfigs") || bytes.Contains(body, []byte("CreateTaskPushNotificationConfig")) ||
						strings.HasSuffix(r.URL.Path, "/CreateTaskPushNotificationConfig")
				}}
				e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
				c := e.client(b, nil)
				task := send(t, c, "hello", nil)
				_, err := c.CreateTaskPushNotificationConfig(testCtx(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "http://127.0.0.1:9/hook"})
				var te *client.TransportError
				if !errors.As(err, &te) || te.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("CreateTaskPushNotificationConfig = %v, want a 503 TransportError", err)
				}
				if f.count.Load() != 1 {
					t.Errorf("%d attempts of a non-idempotent call, want 1", f.count.Load())
				}
			})
		})
	}
}

// cutSubscribe ends every SubscribeToTask response after its first event,
// the way a server (or proxy) that closes streams early does.
type cutSubscribe struct {
	h    http.Handler
	cuts atomic.Int64
}

type cutWriter struct {
	http.ResponseWriter
	cancel context.CancelFunc
	grpc   bool
}

// Write passes the first event on, then ends the handler's request, so
// the handler closes the stream cleanly (gRPC: with UNAVAILABLE).
func (w *cutWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("data:")) || (w.grpc && len(b) > 0) {
		w.cancel()
	}
	return n, err
}

func (w *cutWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (c *cutSubscribe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasSuffix(r.URL.Path, ":subscribe") || strings.HasSuffix(r.URL.Path, "/SubscribeToTask") ||
		bytes.Contains(body, []byte(`"SubscribeToTask"`)) {
		c.cuts.Add(1)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		r = r.WithContext(ctx)
		w = &cutWriter{ResponseWriter: w, cancel: cancel, grpc: isGRPC(r)}
	}
	c.h.ServeHTTP(w, r)
}

// TestWaitForCompletion follows tasks with and without streaming.
func TestWaitForCompletion(t *testing.T) {
	t.Parallel()
	noStream := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.Streaming = ptr(false) }
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name  string
				cfg   config
				claim bool // the client's card claims streaming
				cut   bool
				text  string
				state a2a.TaskState
			}{
				{name: "streaming", text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "polling", cfg: config{mutate: noStream}, text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "server refuses streams", cfg: config{mutate: noStream}, claim: true, text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "streams cut", cut: true, text: "slow 600", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "input required", text: "input-required", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED},
				{name: "already done", text: "fail", state: a2a.TaskState_TASK_STATE_FAILED},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					cs := &cutSubscribe{}
					if tc.cut {
						tc.cfg.wrap = func(h http.Handler) http.Handler { cs.h = h; return cs }
					}
					e := start(t, tc.cfg)
					if tc.claim {
						e.card = proto.Clone(e.card).(*a2a.AgentCard)
						e.card.Capabilities.Streaming = ptr(true)
					}
					c := e.client(b, &client.Options{PollInterval: 20 * time.Millisecond})
					task := send(t, c, tc.text, &a2a.SendMessageConfiguration{ReturnImmediately: true})
					ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
					defer cancel()
					got, err := c.WaitForCompletion(ctx, task.Id)
					if err != nil || got.GetStatus().GetState() != tc.state || got.Id != task.Id {
						t.Fatalf("WaitForCompletion = %v, %v; want the task in %v", got, err, tc.state)
					}
					if tc.state == a2a.TaskState_TASK_STATE_COMPLETED && len(got.Artifacts) != 1 {
						t.Errorf("artifacts = %v, want the echo", got.Artifacts)
					}
					if tc.cut && cs.cuts.Load() < 2 {
						t.Errorf("%d subscriptions, want a resubscription after the cut", cs.cuts.Load())
					}
				})
			}
			t.Run("unknown task", func(t *testing.T) {
				t.Parallel()
				e := start(t, config{})
				_, err := e.client(b, nil).WaitForCompletion(testCtx(t), "nope")
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("WaitForCompletion(unknown) = %v, want TaskNotFound", err)
				}
			})
		})
	}
}

// TestTenantAcrossBindings: a tenant is one scope whichever binding carries
// it, including a tenant that needs escaping in a URL path.
func TestTenantAcrossBindings(t *testing.T) {
	t.Parallel()
	for _, tenant := range []string{"acme", "acme corp/eu"} {
		t.Run(tenant, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{ifaces: func(base string) []*a2a.AgentInterface {
				return []*a2a.AgentInterface{
					{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0", Tenant: tenant},
					{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0", Tenant: tenant},
					{Url: hostOf(base), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: tenant},
				}
			}})
			ctx := testCtx(t)
			rest, rpc, grpc := e.client(bindings[1], nil), e.client(bindings[0], nil), e.client(bindings[2], nil)
			task := send(t, rest, "hello", nil)
			if _, err := rest.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
				t.Fatalf("REST GetTask = %v", err)
			}
			_, err := rpc.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
			if err != nil {
				t.Fatalf("JSON-RPC GetTask of a task made over REST in tenant %q = %v", tenant, err)
			}
			if _, err := grpc.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
				t.Fatalf("gRPC GetTask of a task made over REST in tenant %q = %v", tenant, err)
			}
			l, err := grpc.ListTasks(ctx, nil)
			if err != nil || len(l.Tasks) != 1 || l.Tasks[0].Id != task.Id {
				t.Fatalf("gRPC ListTasks in tenant %q = %v, %v; want the one task", tenant, l, err)
			}
		})
	}
}
