package interop_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestJSServer03Interop drives Parley's Go client against a v0.3-only
// agent built with the JS SDK 0.3.14 server (internal/interop/js/server03.mjs) over
// v0.3 JSON-RPC and HTTP+JSON: the same Go API and typed errors as against
// a v1.0 agent. parley card says the agent serves 0.3 only, parley check
// says it is a v0.3-only agent, and parley send talks to it when asked for
// 0.3 by name.
func TestJSServer03Interop(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "express")
	checkSDK03Installed(t, dir)
	base := testkit.StartNodeServer(t, node, dir, "server03.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatalf("Resolve of a v0.3 card: %v", err)
	}
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			c := proto.Clone(card).(*a2a.AgentCard)
			c.SupportedInterfaces = nil
			for _, in := range card.GetSupportedInterfaces() {
				if in.GetProtocolBinding() == binding {
					c.SupportedInterfaces = append(c.SupportedInterfaces, in)
				}
			}
			cl, err := client.New(c, &client.Options{Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if v := cl.Interface().GetProtocolVersion(); v != "0.3" {
				t.Fatalf("interface at %q", v)
			}
			js03Calls(t, ctx, cl)
		})
	}
	bin := testkit.ParleyBinary(t)
	out, _ := exec.CommandContext(ctx, bin, "card", base).CombinedOutput()
	if !strings.Contains(string(out), "A2A Versions: 0.3 (no v1.0 interface") {
		t.Errorf("parley card does not say the agent serves 0.3 only:\n%s", out)
	}
	out, _ = exec.CommandContext(ctx, bin, "check", base).CombinedOutput()
	if !strings.Contains(string(out), "v0.3-only agent") {
		t.Errorf("parley check does not recognise a v0.3-only agent:\n%s", out)
	}
	out, err = exec.CommandContext(ctx, bin, "send", base, "hello from parley send", "--a2a-version", "0.3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "COMPLETED") || !strings.Contains(string(out), "hello from parley send") {
		t.Errorf("parley send to a v0.3 agent: %v\n%s", err, out)
	}
}

// js03Calls runs every operation v0.3 has through Parley's client.
func js03Calls(t *testing.T, ctx context.Context, c *client.Client) {
	task := testkit.SendTask(t, ctx, c, "hello", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 || task.GetArtifacts()[0].GetParts()[0].GetText() != "hello" {
		t.Fatalf("send: %v", task)
	}
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")})
	if err != nil || a2a.FirstText(resp.GetMessage()) != "pong" {
		t.Errorf("direct message reply: %v, %v", resp, err)
	}
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
	kinds := strings.Join(testkit.Kinds(evs), " ")
	if err != nil || !strings.HasPrefix(kinds, "task:TASK_STATE_SUBMITTED") || !strings.HasSuffix(kinds, "status:TASK_STATE_COMPLETED") || !strings.Contains(kinds, "artifact:chunk 1") {
		t.Errorf("stream: %s, %v", kinds, err)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
	if err != nil || got.GetId() != task.GetId() {
		t.Errorf("get: %v, %v", got, err)
	}
	wait := testkit.SendTask(t, ctx, c, "input-required", nil)
	if wait.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("input-required: %v", wait)
	}
	cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: wait.GetId(), Id: "c1", Url: "https://hooks.example/x", Token: "tk"})
	if err != nil || cfg.GetId() != "c1" || cfg.GetUrl() != "https://hooks.example/x" {
		t.Errorf("create push config: %v, %v", cfg, err)
	}
	if g, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: wait.GetId(), Id: "c1"}); err != nil || g.GetToken() != "tk" {
		t.Errorf("get push config: %v, %v", g, err)
	}
	if l, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: wait.GetId()}); err != nil || len(l.GetConfigs()) != 1 {
		t.Errorf("list push configs: %v, %v", l, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: wait.GetId(), Id: "c1"}); err != nil {
		t.Errorf("delete push config: %v", err)
	}
	// Follow-up on the waiting task completes it.
	follow := a2a.UserMessage("done")
	follow.TaskId, follow.ContextId = wait.GetId(), wait.GetContextId()
	if r, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow}); err != nil || r.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("follow-up: %v, %v", r, err)
	}
	// A slow task: subscribe, cancel while subscribed.
	slow, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("slow 5000"), Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("slow: %v", err)
	}
	id := slow.GetTask().GetId()
	n := 0
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: id}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if n++; n == 1 {
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: id}); err != nil {
				t.Fatalf("cancel: %v", err)
			}
		}
		if ev.Response.GetStatusUpdate().GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED {
			break
		}
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("unknown task: %v, want TaskNotFoundError", err)
	}
	if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("ListTasks: %v, want UnsupportedOperationError", err)
	}
}
