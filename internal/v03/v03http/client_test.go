package v03http_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// only03 is the served card with its v0.3 interfaces of one binding alone,
// as a v0.3-only agent would offer.
func only03(card *a2a.AgentCard, binding string) *a2a.AgentCard {
	c := proto.Clone(card).(*a2a.AgentCard)
	c.SupportedInterfaces = nil
	for _, in := range card.GetSupportedInterfaces() {
		if in.GetProtocolVersion() == "0.3" && in.GetProtocolBinding() == binding {
			c.SupportedInterfaces = append(c.SupportedInterfaces, in)
		}
	}
	return c
}

// TestClientPrefersV1: with both versions on the card, Parley's client
// picks a v1.0 interface.
func TestClientPrefersV1(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	c, err := client.New(s.Card, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v := c.Interface().GetProtocolVersion(); v != "1.0" {
		t.Errorf("chose an interface at %q", v)
	}
}

// TestClientSpeaksV03: the same Go API over v0.3 JSON-RPC, HTTP+JSON and
// gRPC:
// send, stream, get, cancel, subscribe, push configs, typed errors.
func TestClientSpeaksV03(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		t.Run(binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.New(only03(s.Card, binding), &client.Options{Retries: -1, HTTPClient: testkit.H2CClient()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if v := c.Interface().GetProtocolVersion(); v != "0.3" {
				t.Fatalf("interface at %q", v)
			}
			task := testkit.SendTask(t, ctx, c, "hello", nil)
			if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 {
				t.Fatalf("send: %v", task)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
			if err != nil || got.GetId() != task.GetId() || len(got.GetHistory()) == 0 {
				t.Fatalf("get: %v, %v", got, err)
			}
			var last *a2a.StreamResponse
			n := 0
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
				Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "stream 2"}}}}}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				last, n = ev.Response, n+1
			}
			if n < 3 || last.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("stream: %d events, last %v", n, last)
			}
			// A waiting task: push configs, subscribe, cancel.
			wait := testkit.SendTask(t, ctx, c, "input-required", nil)
			cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: wait.GetId(), Id: "cfg", Url: "https://hooks.example/x", Token: "tk"})
			if err != nil || cfg.GetId() != "cfg" || cfg.GetUrl() != "https://hooks.example/x" {
				t.Fatalf("create push config: %v, %v", cfg, err)
			}
			if g, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: wait.GetId(), Id: "cfg"}); err != nil || g.GetToken() != "tk" {
				t.Errorf("get push config: %v, %v", g, err)
			}
			if l, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: wait.GetId()}); err != nil || len(l.GetConfigs()) != 1 {
				t.Errorf("list push configs: %v, %v", l, err)
			}
			if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: wait.GetId(), Id: "cfg"}); err != nil {
				t.Errorf("delete push config: %v", err)
			}
			sctx, scancel := context.WithCancel(ctx)
			sub := 0
			for ev, err := range c.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{Id: wait.GetId()}) {
				if err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				if sub++; sub == 1 {
					if ev.Response.GetTask().GetId() != wait.GetId() {
						t.Errorf("subscribe starts with %v", ev.Response)
					}
					if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: wait.GetId()}); err != nil {
						t.Fatalf("cancel: %v", err)
					}
				}
			}
			scancel()
			if sub < 2 {
				t.Errorf("subscription saw %d events", sub)
			}
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("unknown task: %v, want TaskNotFoundError", err)
			}
			if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Errorf("ListTasks over v0.3: %v, want UnsupportedOperationError", err)
			}
		})
	}
}
