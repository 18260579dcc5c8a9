package a2ahttp_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// whoAmI is an agent that completes every task with an artifact naming
// the principal the core gave it.
var whoAmI = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if err := em.Artifact(a2a.TextArtifact("who", "principal="+req.Principal)); err != nil {
		return err
	}
	return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "done")
})

// identityServer serves whoAmI on all three bindings behind outer, an HTTP
// middleware of the library user's own, with opts for a2ahttp; the core
// requires authentication.
func identityServer(t *testing.T, outer func(http.Handler) http.Handler, opts a2ahttp.Options) *a2a.AgentCard {
	t.Helper()
	return startWho(t, outer, opts, true)
}

// startWho is identityServer with the core's RequireAuth given.
func startWho(t *testing.T, outer func(http.Handler) http.Handler, opts a2ahttp.Options, requireAuth bool) *a2a.AgentCard {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs.Config.Protocols = p
	addr := hs.Listener.Addr().String()
	card := &a2a.AgentCard{
		Name: "who", Description: "names its caller", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{
			{Url: "http://" + addr + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: "http://" + addr, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{Url: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
		},
		Capabilities:       &a2a.AgentCapabilities{Streaming: proto.Bool(true)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []*a2a.AgentSkill{{Id: "who", Name: "who", Description: "who", Tags: []string{"who"}}},
	}
	srv, err := server.New(&server.Options{Card: card, Agent: whoAmI, Store: memstore.New(), RequireAuth: requireAuth})
	if err != nil {
		t.Fatal(err)
	}
	opts.Card = card
	h, err := a2ahttp.New(srv, &opts)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = outer(h)
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return card
}

// userHeader is an outer middleware that authenticates by a header of its
// own, the way a library user's SSO proxy might.
func userHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			r = r.WithContext(a2a.WithPrincipal(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

// caller returns a client of card on one binding, sending the bearer token
// (when not "") and the extra headers.
func caller(t *testing.T, card *a2a.AgentCard, binding, token string, header map[string]string) *client.Client {
	t.Helper()
	opts := client.Options{Retries: -1, BearerToken: token, Header: http.Header{}}
	for k, v := range header {
		if v != "" {
			opts.Header.Set(k, v)
		}
	}
	for _, f := range client.DefaultTransports() {
		if f.Binding == binding {
			opts.Transports = []client.TransportFactory{f}
		}
	}
	c, err := client.New(card, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// as returns a client that the userHeader middleware takes for user.
func as(t *testing.T, card *a2a.AgentCard, binding, user string) *client.Client {
	return caller(t, card, binding, "", map[string]string{"X-Test-User": user})
}

var allBindings = []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC}

// TestOuterMiddlewarePrincipal: a principal set on the request context by the
// user's own middleware reaches the agent and scopes tasks
// (docs/decisions.md#b12), on every binding, although no authenticator is
// configured.
func TestOuterMiddlewarePrincipal(t *testing.T) {
	card := identityServer(t, userHeader, a2ahttp.Options{})
	ctx := context.Background()
	for _, b := range allBindings {
		t.Run(b, func(t *testing.T) {
			alice := as(t, card, b, "alice")
			resp, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
			if err != nil {
				t.Fatalf("SendMessage as alice = %v", err)
			}
			task := resp.GetTask()
			if got := task.GetArtifacts()[0].GetParts()[0].GetText(); got != "principal=alice" {
				t.Errorf("the agent saw %q, want principal=alice", got)
			}
			if _, err := alice.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); err != nil {
				t.Errorf("GetTask as alice = %v, want the task", err)
			}
			bob := as(t, card, b, "bob")
			if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("GetTask as bob = %v, want TaskNotFoundError", err)
			}
			list, err := bob.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil || len(list.GetTasks()) != 0 {
				t.Errorf("ListTasks as bob = %d tasks, %v; want none", len(list.GetTasks()), err)
			}
			anon := as(t, card, b, "")
			if _, err := anon.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); !errors.Is(err, a2a.ErrUnauthenticated) {
				t.Errorf("GetTask without a principal = %v, want an authentication error", err)
			}
		})
	}
}

// TestOuterPrincipalWinsOverAuthenticators: Parley never overrides a
// principal the user's middleware set; without one, the authenticators
// decide, and one that refuses the credentials ends the call with an
// authentication error in the caller's binding.
func TestOuterPrincipalWinsOverAuthenticators(t *testing.T) {
	keyAuth := a2ahttp.AuthenticatorFunc(func(r *http.Request) (string, error) {
		switch k := r.Header.Get("X-Test-Key"); k {
		case "":
			return "", nil
		case "good":
			return "key-holder", nil
		default:
			return "", errors.New("API key refused")
		}
	})
	card := identityServer(t, userHeader, a2ahttp.Options{Tokens: map[string]string{"tok": "token-holder"}, Authenticators: []a2ahttp.Authenticator{keyAuth}})
	ctx := context.Background()
	cases := []struct {
		name, user, token, key string
		want                   string // the principal, or "" for a refusal
	}{
		{"outer principal", "alice", "tok", "good", "alice"},
		{"bearer token", "", "tok", "good", "token-holder"},
		{"api key", "", "", "good", "key-holder"},
		{"refused key", "", "", "bad", ""},
	}
	for _, b := range allBindings {
		for _, tc := range cases {
			t.Run(b+"/"+tc.name, func(t *testing.T) {
				c := caller(t, card, b, tc.token, map[string]string{"X-Test-User": tc.user, "X-Test-Key": tc.key})
				resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
				if tc.want == "" {
					if !errors.Is(err, a2a.ErrUnauthenticated) || !strings.Contains(err.Error(), "API key refused") {
						t.Fatalf("SendMessage = %v, want an authentication error saying the key was refused", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("SendMessage = %v", err)
				}
				if got := resp.GetTask().GetArtifacts()[0].GetParts()[0].GetText(); got != "principal="+tc.want {
					t.Errorf("the agent saw %q, want principal=%s", got, tc.want)
				}
			})
		}
	}
}

// TestMiddlewareOnEveryBinding: one a2a.Middleware sees every operation
// on every binding, unary and streaming, with the caller's principal.
func TestMiddlewareOnEveryBinding(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(ctx context.Context, m *a2a.Method) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, m.Name+"/"+a2a.CallInfoFrom(ctx).Principal)
	}
	mw := func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				record(ctx, m)
				return next.Call(ctx, m, req)
			},
			StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
				record(ctx, m)
				return next.Stream(ctx, m, req)
			},
		}
	}
	card := identityServer(t, userHeader, a2ahttp.Options{Middleware: []a2a.Middleware{mw}})
	ctx := context.Background()
	for _, b := range allBindings {
		seen = nil
		c := as(t, card, b, "carol")
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}); err != nil {
			t.Fatalf("%s: SendMessage = %v", b, err)
		}
		for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}) {
			if err != nil {
				t.Fatalf("%s: SendStreamingMessage = %v", b, err)
			}
		}
		want := []string{"SendMessage/carol", "SendStreamingMessage/carol"}
		if strings.Join(seen, ",") != strings.Join(want, ",") {
			t.Errorf("%s: middleware saw %v, want %v", b, seen, want)
		}
	}
}
