package interop_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents/proxyagent"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// TestProxyInFrontOfJSServer puts Parley's proxy agent in front of the
// official JS SDK server (a real peer): Parley's client, on each of
// Parley's bindings (gRPC included, which the JS server does not speak),
// sees the JS agent's answers, streams, follow-ups and cancels relayed
// into Parley's own tasks.
func TestProxyInFrontOfJSServer(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "express")
	checkSDKInstalled(t, dir)
	base := testkit.StartNodeServer(t, node, dir, "server_conformance.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	upCard, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	up, err := client.New(upCard, &client.Options{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a, err := proxyagent.New(proxyagent.Options{Client: up, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	px := testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true,
		Mutate: func(c *a2a.AgentCard, _ *server.Options) {
			ifaces := c.SupportedInterfaces
			proto.Reset(c)
			proto.Merge(c, proxyagent.Card(upCard, ifaces))
		},
		HTTP: func(o *a2ahttp.Options) { o.Middleware = append(o.Middleware, a.Middleware()) },
	})
	if px.Card.GetName() != "JS SDK conformance agent" {
		t.Fatalf("proxy card name %q, want the JS agent's", px.Card.GetName())
	}
	for _, iface := range px.Card.GetSupportedInterfaces() {
		t.Run(iface.GetProtocolBinding(), func(t *testing.T) {
			card := proto.Clone(px.Card).(*a2a.AgentCard)
			card.SupportedInterfaces = []*a2a.AgentInterface{iface}
			c, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient(), PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			proxiedJS(t, ctx, c, up)
		})
	}
}

// proxiedJS runs the scenarios through the proxy client c; up calls the
// JS server directly.
func proxiedJS(t *testing.T, ctx context.Context, c, up *client.Client) {
	task := testkit.SendTask(t, ctx, c, "hello", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.ArtifactText(task.GetArtifacts()[0]) != "hello" {
		t.Fatalf("hello: %v", task)
	}
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")})
	if err != nil || a2a.FirstText(resp.GetMessage()) != "pong" {
		t.Fatalf("message: %v, %v; want pong", resp, err)
	}
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}))
	var as a2a.ArtifactAssembler
	for _, ev := range evs {
		as.Add(ev)
	}
	if err != nil || as.Text("stream") != "chunk 0chunk 1chunk 2" || !as.Done("stream") || evs[len(evs)-1].State() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("stream 3: %q, %v", testkit.Kinds(evs), err)
	}

	asked := testkit.SendTask(t, ctx, c, "input-required", nil)
	if asked.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("input-required: %v", asked.GetStatus())
	}
	resp, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(asked, "blue")})
	if done := resp.GetTask(); err != nil || done.GetId() != asked.GetId() || done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED ||
		a2a.ArtifactText(done.GetArtifacts()[len(done.GetArtifacts())-1]) != "blue" {
		t.Fatalf("follow-up: %v, %v; want the task COMPLETED echoing blue", resp, err)
	}

	slow := testkit.SendTask(t, ctx, c, "slow 20000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	for slow.GetStatus().GetState() != a2a.TaskState_TASK_STATE_WORKING {
		time.Sleep(10 * time.Millisecond)
		if slow, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: slow.GetId()}); err != nil {
			t.Fatal(err)
		}
	}
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: slow.GetId()})
	if err != nil || canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("cancel: %v, %v", canceled.GetStatus(), err)
	}
	list, err := up.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatalf("the JS server's ListTasks: %v", err)
	}
	states := map[a2a.TaskState]int{}
	for _, tk := range list.GetTasks() {
		states[tk.GetStatus().GetState()]++
	}
	if states[a2a.TaskState_TASK_STATE_CANCELED] == 0 {
		t.Errorf("the JS server's tasks by state %v: want the canceled one", states)
	}
}
