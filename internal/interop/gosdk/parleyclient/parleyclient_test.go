package parleyclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/interop/gosdk/internal/peer"
	"parley.dev/parley/internal/testkit"
)

// startSDKAgent starts the Go SDK agent (cmd/sdkpeer) and returns its base
// URL.
func startSDKAgent(t *testing.T) string {
	t.Helper()
	peer.RequireSDK(t)
	return peer.Start(t, peer.Binary(t, "parley.dev/parley/internal/interop/gosdk/cmd/sdkpeer"))
}

// TestParleyClient drives Parley's client against the Go SDK's server
// (a2asrv) on each of its three bindings: send, stream, get, list, cancel,
// subscribe, push configurations and the mapping of its errors.
func TestParleyClient(t *testing.T) {
	base := startSDKAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel) // the subtests run in parallel, after this function returns
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatalf("Resolve(%s) = %v", base, err)
	}
	if got := len(card.GetSupportedInterfaces()); got != 3 {
		t.Fatalf("card has %d interfaces, want 3", got)
	}
	for _, b := range []struct {
		name    string
		factory client.TransportFactory
	}{
		{a2a.BindingJSONRPC, client.JSONRPC()},
		{a2a.BindingHTTPJSON, client.REST()},
		{a2a.BindingGRPC, client.GRPC()},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{b.factory}, PollInterval: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if got := c.Interface().GetProtocolBinding(); got != b.name {
				t.Fatalf("interface %s, want %s", got, b.name)
			}
			for _, tc := range []struct {
				name  string
				check func(t *testing.T, ctx context.Context, c *client.Client)
			}{
				{"send", sendGetList},
				{"message", directMessage},
				{"stream", stream},
				{"cancel", cancelTask},
				{"subscribe", subscribe},
				{"wait", wait},
				{"push configs", pushConfigs},
				{"errors", mappedErrors},
			} {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.check(t, ctx, c)
				})
			}
		})
	}
}

// sendGetList: a task is sent, read back and listed by its context.
func sendGetList(t *testing.T, ctx context.Context, c *client.Client) {
	task := testkit.SendTask(t, ctx, c, "hello", nil)
	if st := task.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_COMPLETED || len(task.Artifacts) != 1 || a2a.JoinText(task.Artifacts[0].Parts) != "hello" {
		t.Fatalf("SendMessage(hello) = %v; want COMPLETED with the echo", task)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: testkit.Ptr[int32](1)})
	if err != nil || got.Id != task.Id || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(got.History) > 1 {
		t.Fatalf("GetTask(historyLength 1) = %v, %v", got, err)
	}
	// The SDK's task store lists only an authenticated user's tasks and
	// refuses an anonymous ListTasks with -31401 / 401 / UNAUTHENTICATED
	// (a choice the spec leaves open, §3.1.4). Parley's client must read
	// that as Unauthenticated on every binding.
	_, err = c.ListTasks(ctx, &a2a.ListTasksRequest{ContextId: task.ContextId, PageSize: testkit.Ptr[int32](10)})
	if !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("ListTasks(anonymous) = %v; want Unauthenticated", err)
	}
}

// directMessage: a direct reply, blocking and streamed.
func directMessage(t *testing.T, ctx context.Context, c *client.Client) {
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("reply")})
	if err != nil || a2a.FirstText(resp.GetMessage()) != "ahoy" {
		t.Fatalf("SendMessage(reply) = %v, %v; want the message ahoy", resp, err)
	}
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("reply")}))
	got := testkit.Kinds(evs)
	if err != nil || !slices.Equal(got, []string{"message:ahoy"}) {
		t.Fatalf("SendStreamingMessage(reply) = %q, %v", got, err)
	}
}

// stream: three artifact chunks, in order, between WORKING and COMPLETED.
func stream(t *testing.T, ctx context.Context, c *client.Client) {
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}))
	got := testkit.Kinds(evs)
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:chunk 0", "artifact:chunk 1", "artifact:chunk 2", "status:TASK_STATE_COMPLETED"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("SendStreamingMessage(stream 3) = %q, %v; want %q", got, err, want)
	}
}

// cancelTask: a running task is canceled, a completed one is not cancelable.
func cancelTask(t *testing.T, ctx context.Context, c *client.Client) {
	task := testkit.SendTask(t, ctx, c, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.Id})
	if err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask(running) = %v, %v; want CANCELED", got, err)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: testkit.SendTask(t, ctx, c, "hello", nil).Id}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("CancelTask(completed) = %v, want TaskNotCancelable", err)
	}
}

// subscribe: a subscription follows a running task to its end.
func subscribe(t *testing.T, ctx context.Context, c *client.Client) {
	task := testkit.SendTask(t, ctx, c, "slow 500", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	evs, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id}))
	got := testkit.Kinds(evs)
	if err != nil || len(got) < 2 || got[len(got)-1] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("SubscribeToTask(running) = %q, %v; want ... COMPLETED", got, err)
	}
}

// wait: WaitForCompletion returns a task that is running, finished or
// interrupted, and one answered by a follow-up, in the state it ends in.
// The SDK's server refuses SubscribeToTask with TaskNotFoundError ("no
// active execution") for any task it is not executing right now, finished
// or interrupted; the client must read such a task with GetTask.
func wait(t *testing.T, ctx context.Context, c *client.Client) {
	for _, tc := range []struct {
		name     string
		start    func(t *testing.T) *a2a.Task // the task to wait for
		state    a2a.TaskState
		question string // the status message wanted ("" for none)
	}{
		{"running", func(t *testing.T) *a2a.Task {
			return testkit.SendTask(t, ctx, c, "slow 300", &a2a.SendMessageConfiguration{ReturnImmediately: true})
		}, a2a.TaskState_TASK_STATE_COMPLETED, ""},
		{"finished", func(t *testing.T) *a2a.Task {
			return testkit.SendTask(t, ctx, c, "hello", nil)
		}, a2a.TaskState_TASK_STATE_COMPLETED, ""},
		{"interrupted", func(t *testing.T) *a2a.Task {
			return testkit.SendTask(t, ctx, c, "ask", nil)
		}, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "which one?"},
		{"answered", func(t *testing.T) *a2a.Task {
			asked := testkit.SendTask(t, ctx, c, "ask", nil)
			if st := asked.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
				t.Fatalf("SendMessage(ask) = %v, want INPUT_REQUIRED", st)
			}
			resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(asked, "this one"),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
			if err != nil || resp.GetTask().GetId() != asked.Id {
				t.Fatalf("follow-up = %v, %v; want the task", resp, err)
			}
			return asked
		}, a2a.TaskState_TASK_STATE_COMPLETED, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := tc.start(t)
			got, err := c.WaitForCompletion(ctx, task.Id)
			if err != nil || got.GetId() != task.Id || got.GetStatus().GetState() != tc.state {
				t.Fatalf("WaitForCompletion = %v, %v; want the task in %v", got, err, tc.state)
			}
			if q := a2a.FirstText(got.GetStatus().GetMessage()); q != tc.question {
				t.Errorf("status message %q, want %q", q, tc.question)
			}
		})
	}
}

// pushConfigs: a push configuration is created, read, listed and deleted.
func pushConfigs(t *testing.T, ctx context.Context, c *client.Client) {
	task := testkit.SendTask(t, ctx, c, "hello", nil)
	cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "https://example.com/hook", Token: "t"})
	if err != nil || cfg.Id == "" || cfg.Url != "https://example.com/hook" {
		t.Fatalf("CreateTaskPushNotificationConfig = %v, %v", cfg, err)
	}
	if got, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); err != nil || got.Id != cfg.Id {
		t.Fatalf("GetTaskPushNotificationConfig = %v, %v", got, err)
	}
	if l, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id}); err != nil || len(l.Configs) != 1 {
		t.Fatalf("ListTaskPushNotificationConfigs = %v, %v", l, err)
	}
	// The SDK's JSON-RPC server answers the delete with an empty result:
	// the operation returns nothing, so that is success.
	if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); err != nil {
		t.Fatalf("DeleteTaskPushNotificationConfig = %v", err)
	}
	if l, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id}); err != nil || len(l.Configs) != 0 {
		t.Fatalf("ListTaskPushNotificationConfigs after delete = %v, %v; want none", l, err)
	}
}

// mappedErrors: the SDK server's errors arrive as the A2A errors they are.
func mappedErrors(t *testing.T, ctx context.Context, c *client.Client) {
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask(unknown) = %v, want TaskNotFound", err)
	}
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("CancelTask(unknown) = %v, want TaskNotFound", err)
	}
	if _, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "no-such-task"})); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("SubscribeToTask(unknown) = %v, want TaskNotFound", err)
	}
	// Known deviation of the SDK's server (spec §3.1.6: a terminal task is
	// UnsupportedOperationError, an interrupted one can be subscribed to):
	// it subscribes only to a task it is executing at the moment, and
	// answers TaskNotFoundError ("no active execution") for any other.
	// WaitForCompletion reads such a task with GetTask (see wait).
	// The SDK's execution may outlive the answer that reported the task
	// COMPLETED by a moment, during which a subscription still succeeds:
	// the deviation is asked again until that moment has passed.
	done := testkit.SendTask(t, ctx, c, "hello", nil)
	var err error
	for range 100 {
		if _, err = testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: done.Id})); err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("SubscribeToTask(completed) = %v; the known TaskNotFound is gone: update this test and docs/interoperability.md", err)
	}
	_, err = c.GetExtendedAgentCard(ctx, nil)
	if c.Interface().GetProtocolBinding() == a2a.BindingJSONRPC {
		// Known deviation of the SDK's JSON-RPC server (JSON-RPC 2.0 §4:
		// params "MAY be omitted"): a request without params is refused
		// as a parse error, -32700; Parley's client leaves params out
		// when the request is empty.
		if !errors.Is(err, a2a.ErrParse) {
			t.Errorf("JSON-RPC GetExtendedAgentCard(no params) = %v; the known ParseError is gone: update this test", err)
		}
	} else if !errors.Is(err, a2a.ErrUnsupportedOperation) {
		// The card declares no extended card: the SDK answers
		// UnsupportedOperation.
		t.Errorf("GetExtendedAgentCard(none declared) = %v, want UnsupportedOperation", err)
	}
}
