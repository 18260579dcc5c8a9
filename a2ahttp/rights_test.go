package a2ahttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// rightsServer serves the conformance agent on every binding and both
// versions, with an extended card, and bearer tokens with rights: "full"
// (none declared: every right), "all" ("*"), and one token per right
// holding every right but that one ("no-tasks:read", …).
func rightsServer(t *testing.T) *testkit.Server {
	t.Helper()
	tokens := map[string]string{"full": "alice", "all": "alice"}
	rights := map[string]a2a.Rights{"all": {a2a.RightAll}}
	for _, r := range a2a.KnownRights() {
		if r == a2a.RightAll {
			continue
		}
		tok := "no-" + string(r)
		tokens[tok] = "alice"
		for _, other := range a2a.KnownRights() {
			if other != r && other != a2a.RightAll {
				rights[tok] = append(rights[tok], other)
			}
		}
	}
	set := a2ahttp.NewTokenSet(nil)
	set.ReplaceWithRights(tokens, rights)
	return testkit.StartServer(t, &testkit.Options{
		Tokens: tokens, // replaced by set below; with them the core requires authentication
		Mutate: func(c *a2a.AgentCard, o *server.Options) {
			c.Capabilities.ExtendedAgentCard = proto.Bool(true)
			x := proto.Clone(c).(*a2a.AgentCard)
			x.Name = "Extended"
			o.ExtendedCard = x
		},
		HTTP: func(o *a2ahttp.Options) { o.Tokens, o.Authenticators = nil, []a2ahttp.Authenticator{set} },
	})
}

// rightsRequest is a request of each operation that passes validation.
func rightsRequest(m *a2a.Method) proto.Message {
	switch m.Name {
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		return &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}
	case a2a.MethodGetTask:
		return &a2a.GetTaskRequest{Id: "t1"}
	case a2a.MethodCancelTask:
		return &a2a.CancelTaskRequest{Id: "t1"}
	case a2a.MethodSubscribeToTask:
		return &a2a.SubscribeToTaskRequest{Id: "t1"}
	case a2a.MethodCreateTaskPushNotificationConfig:
		return &a2a.TaskPushNotificationConfig{TaskId: "t1", Url: "https://hooks.example/x"}
	case a2a.MethodGetTaskPushNotificationConfig:
		return &a2a.GetTaskPushNotificationConfigRequest{TaskId: "t1", Id: "c1"}
	case a2a.MethodListTaskPushNotificationConfigs:
		return &a2a.ListTaskPushNotificationConfigsRequest{TaskId: "t1"}
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: "t1", Id: "c1"}
	}
	return m.NewRequest()
}

// invoke calls m through inv, a stream to its first error.
func invoke(ctx context.Context, inv a2a.Invoker, m *a2a.Method, req proto.Message) error {
	if !m.Streaming {
		_, err := inv.Call(ctx, m, req)
		return err
	}
	for _, err := range inv.Stream(ctx, m, req) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestRightsEveryOperation: on every binding, a token lacking the right an
// operation needs (a2a.Method.Right) is refused with PermissionDeniedError
// naming the right, read back as that typed error by Parley's client; a
// token declaring every right ("*"), or none, is not.
func TestRightsEveryOperation(t *testing.T) {
	s := rightsServer(t)
	for _, b := range allBindings {
		for m := range a2a.Methods() {
			t.Run(b+"/"+m.Name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err := invoke(ctx, caller(t, s.Card, b, "no-"+string(m.Right), nil).Invoker(), m, rightsRequest(m))
				var e *a2a.Error
				if !errors.As(err, &e) || e.Code != a2a.CodePermissionDenied {
					t.Fatalf("%s without %s = %v, want PermissionDeniedError", m.Name, m.Right, err)
				}
				if !strings.Contains(e.Message, string(m.Right)) {
					t.Errorf("the refusal %q does not name the right %s", e.Message, m.Right)
				}
				for _, tok := range []string{"full", "all"} {
					err := invoke(ctx, caller(t, s.Card, b, tok, nil).Invoker(), m, rightsRequest(m))
					if errors.Is(err, a2a.ErrPermissionDenied) {
						t.Errorf("%s with token %q = %v, want no permission error", m.Name, tok, err)
					}
				}
			})
		}
	}
}

// TestRightsInlinePush: a send carrying a push configuration needs the push
// right besides tasks:write.
func TestRightsInlinePush(t *testing.T) {
	s := rightsServer(t)
	for _, b := range allBindings {
		t.Run(b, func(t *testing.T) {
			req := &a2a.SendMessageRequest{Message: a2a.UserMessage("hi"), Configuration: &a2a.SendMessageConfiguration{
				TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/x"}}}
			_, err := caller(t, s.Card, b, "no-push", nil).SendMessage(context.Background(), req)
			if !errors.Is(err, a2a.ErrPermissionDenied) || !strings.Contains(err.Error(), "push") {
				t.Fatalf("SendMessage with a push configuration, without push = %v, want PermissionDeniedError", err)
			}
			// The right comes before the request's fields: a message
			// without parts is refused for the right, not as invalid.
			req.Message = &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER}
			_, err = caller(t, s.Card, b, "no-push", nil).SendMessage(context.Background(), req)
			if !errors.Is(err, a2a.ErrPermissionDenied) {
				t.Fatalf("SendMessage without parts, with a push configuration, without push = %v, want PermissionDeniedError", err)
			}
		})
	}
}

// TestRightsWire: what a refused call looks like on the wire. JSON-RPC:
// HTTP 200 and the error -31403, whose message names the right (a stream
// refused in its one SSE event); HTTP+JSON: 403 and a
// google.rpc.Status PERMISSION_DENIED; gRPC: PERMISSION_DENIED; A2A v0.3
// (JSON-RPC and HTTP+JSON): the same codes and statuses.
func TestRightsWire(t *testing.T) {
	s := rightsServer(t)
	post := func(path, version, accept, body, token string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header.Set("A2A-Version", version)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// A refused stream: one SSE event holding the error response.
			data, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "data:")
			if !ok || strings.Count(string(raw), "data:") != 1 {
				t.Fatalf("POST %s: a refused stream %q, want one event", path, raw)
			}
			raw = []byte(data)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("POST %s: %d %q is not JSON", path, resp.StatusCode, raw)
		}
		return resp.StatusCode, doc
	}
	send := func(method string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, method, a2a.NewID())
	}
	rpcRefusal := func(name string, status int, doc map[string]any) {
		t.Helper()
		e, _ := doc["error"].(map[string]any)
		if status != 200 || e["code"] != float64(-31403) {
			t.Fatalf("%s: %d %v, want 200 and the JSON-RPC error -31403", name, status, doc)
		}
		if !strings.Contains(fmt.Sprint(e["message"]), "tasks:write") {
			t.Errorf("%s: error %v does not name the right", name, e)
		}
	}
	st, doc := post("/", "1.0", "", send("SendMessage"), "no-tasks:write")
	rpcRefusal("JSON-RPC SendMessage", st, doc)
	st, doc = post("/", "1.0", "text/event-stream", strings.Replace(send("SendStreamingMessage"), `"id":1`, `"id":2`, 1), "no-tasks:write")
	rpcRefusal("JSON-RPC SendStreamingMessage", st, doc)
	// v0.3 JSON-RPC: no A2A-Version, the v0.3 method name and message shape.
	v03 := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, a2a.NewID())
	st, doc = post("/", "", "", v03, "no-tasks:write")
	rpcRefusal("v0.3 JSON-RPC message/send", st, doc)

	restRefusal := func(name string, status int, doc map[string]any) {
		t.Helper()
		e, _ := doc["error"].(map[string]any)
		if status != 403 || e["status"] != "PERMISSION_DENIED" || e["code"] != float64(403) {
			t.Fatalf("%s: %d %v, want 403 and a google.rpc.Status PERMISSION_DENIED", name, status, doc)
		}
	}
	st, doc = post("/message:send", "1.0", "", fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"hi"}]}}`, a2a.NewID()), "no-tasks:write")
	restRefusal("HTTP+JSON SendMessage", st, doc)
	st, doc = post("/v1/message:send", "", "", fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","content":[{"text":"hi"}]}}`, a2a.NewID()), "no-tasks:write")
	if st != 403 || doc["code"] != float64(-31403) {
		t.Errorf("v0.3 HTTP+JSON message:send: %d %v, want 403 and code -31403 in v0.3's error shape", st, doc)
	}

	req, _ := http.NewRequest("GET", s.URL+"/extendedAgentCard", nil)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer no-card:extended")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(raw), "card:extended") || strings.Contains(string(raw), "Extended") {
		t.Errorf("GET /extendedAgentCard without card:extended: %d %s, want 403 naming the right, and no card", resp.StatusCode, raw)
	}

	g := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())
	greq := connect.NewRequest(&a2a.GetExtendedAgentCardRequest{})
	greq.Header().Set("A2A-Version", "1.0")
	greq.Header().Set("Authorization", "Bearer no-card:extended")
	_, err = g.GetExtendedAgentCard(context.Background(), greq)
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("gRPC GetExtendedAgentCard without card:extended = %v, want PERMISSION_DENIED", err)
	}
	greq.Header().Set("Authorization", "Bearer full")
	if c, err := g.GetExtendedAgentCard(context.Background(), greq); err != nil || c.Msg.GetName() != "Extended" {
		t.Errorf("gRPC GetExtendedAgentCard with every right = %v, %v", c, err)
	}
}

// TestRightsV03Client: Parley's v0.3 client reads the refusal of a v0.3
// call as PermissionDeniedError too, on each v0.3 binding.
func TestRightsV03Client(t *testing.T) {
	s := rightsServer(t)
	var v03 []*a2a.AgentInterface
	for _, i := range s.Card.GetSupportedInterfaces() {
		if i.GetProtocolVersion() == "0.3" {
			v03 = append(v03, i)
		}
	}
	if len(v03) == 0 {
		t.Skip("the test server's card lists no v0.3 interface")
	}
	for _, i := range v03 {
		t.Run(i.GetProtocolBinding(), func(t *testing.T) {
			card := proto.Clone(s.Card).(*a2a.AgentCard)
			card.SupportedInterfaces = []*a2a.AgentInterface{i}
			c, err := client.New(card, &client.Options{Retries: -1, BearerToken: "no-tasks:read"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.GetTask(context.Background(), &a2a.GetTaskRequest{Id: "t1"})
			if !errors.Is(err, a2a.ErrPermissionDenied) {
				t.Fatalf("v0.3 %s GetTask without tasks:read = %v, want PermissionDeniedError", i.GetProtocolBinding(), err)
			}
			// Every operation v0.3 has, push configurations, resubscribe and
			// the authenticated extended card included.
			for m := range a2a.Methods() {
				c, err := client.New(card, &client.Options{Retries: -1, BearerToken: "no-" + string(m.Right)})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if m.Name == a2a.MethodGetExtendedAgentCard && i.GetProtocolBinding() == a2a.BindingGRPC {
					// v0.3 gRPC's GetAgentCard is the public card and the
					// extended one: without the right, the public card.
					got, err := c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
					if err != nil || got.GetName() == "Extended" {
						t.Errorf("v0.3 gRPC GetAgentCard without card:extended = %v, %v, want the public card", got.GetName(), err)
					}
					full, err := client.New(card, &client.Options{Retries: -1, BearerToken: "full"})
					if err != nil {
						t.Fatal(err)
					}
					if got, err := full.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{}); err != nil || got.GetName() != "Extended" {
						t.Errorf("v0.3 gRPC GetAgentCard with every right = %v, %v, want the extended card", got.GetName(), err)
					}
					full.Close()
					cancel()
					c.Close()
					continue
				}
				err = invoke(ctx, c.Invoker(), m, rightsRequest(m))
				cancel()
				c.Close()
				if m.Name == a2a.MethodListTasks && !errors.Is(err, a2a.ErrPermissionDenied) {
					continue // v0.3 has no tasks/list: the client says so itself
				}
				if !errors.Is(err, a2a.ErrPermissionDenied) {
					t.Errorf("v0.3 %s %s without %s = %v, want PermissionDeniedError", i.GetProtocolBinding(), m.Name, m.Right, err)
				}
			}
		})
	}
}

// TestOuterMiddlewareRights: rights an outer middleware gives with
// a2a.WithRights and no principal narrow the call whoever the handler's
// authenticators find (an anonymous caller, or a bearer token with every
// right), on every binding: a read-only front door stays read-only.
func TestOuterMiddlewareRights(t *testing.T) {
	readOnly := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(a2a.WithRights(r.Context(), a2a.Rights{a2a.RightTasksRead})))
		})
	}
	card := startWho(t, readOnly, a2ahttp.Options{Tokens: map[string]string{"tok-b": "bob"}, AllowAnonymous: true}, false)
	ctx := context.Background()
	for _, b := range allBindings {
		for _, tok := range []string{"", "tok-b"} {
			t.Run(b+"/"+tok, func(t *testing.T) {
				c := caller(t, card, b, tok, nil)
				_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
				if !errors.Is(err, a2a.ErrPermissionDenied) || !strings.Contains(err.Error(), "tasks:write") {
					t.Errorf("SendMessage behind a read-only middleware = %v, want PermissionDeniedError naming tasks:write", err)
				}
				if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "t1"}); errors.Is(err, a2a.ErrPermissionDenied) {
					t.Errorf("GetTask behind a read-only middleware = %v, want no permission error", err)
				}
			})
		}
	}
}
