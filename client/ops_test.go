package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

func ptr[T any](v T) *T { return &v }

// TestOperations runs every operation's success path on every binding.
func TestOperations(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			c := e.client(b, nil)
			ctx := testCtx(t)

			task := checkSendMessage(t, ctx, c)
			checkGetTask(t, ctx, c, task)
			checkListTasks(t, ctx, c, task)
			checkCancelTask(t, ctx, c)
			checkPushConfigs(t, ctx, c, task)

			// A nil request is an empty one: the server says what is missing.
			if _, err := c.GetTask(ctx, nil); !errors.Is(err, a2a.ErrInvalidParams) {
				t.Errorf("GetTask(nil) = %v, want InvalidParams", err)
			}
		})
	}
}

// checkSendMessage sends a message that makes a task, one answered
// directly, and one without a messageId (which gets one); it returns the
// first task. Two tasks exist afterwards.
func checkSendMessage(t *testing.T, ctx context.Context, c *client.Client) *a2a.Task {
	task := send(t, c, "hello", nil)
	if st := task.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage(hello) state = %v, want COMPLETED", st)
	}
	if got := a2a.JoinText(task.GetArtifacts()[0].GetParts()); got != "hello" {
		t.Errorf("artifact = %q, want hello", got)
	}
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")})
	if err != nil || a2a.FirstText(resp.GetMessage()) != "pong" {
		t.Fatalf("SendMessage(message) = %v, %v; want the message pong", resp, err)
	}

	// A message without a messageId gets one.
	resp, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("no id")}}})
	if err != nil {
		t.Fatalf("SendMessage without messageId = %v", err)
	}
	if id := resp.GetTask().GetHistory()[0].GetMessageId(); id == "" {
		t.Errorf("stored message has no messageId")
	}
	return task
}

// checkGetTask reads task with and without its history.
func checkGetTask(t *testing.T, ctx context.Context, c *client.Client, task *a2a.Task) {
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || got.Id != task.Id || len(got.History) == 0 {
		t.Fatalf("GetTask(%s) = %v, %v; want the task with history", task.Id, got, err)
	}
	got, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: ptr[int32](0)})
	if err != nil || len(got.History) != 0 {
		t.Fatalf("GetTask(historyLength 0) = %v, %v; want no history", got, err)
	}
}

// checkListTasks lists the two tasks page by page, then task alone with
// every filter and query parameter.
func checkListTasks(t *testing.T, ctx context.Context, c *client.Client, task *a2a.Task) {
	page, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](1)})
	if err != nil || len(page.Tasks) != 1 || page.NextPageToken == "" || page.TotalSize != 2 {
		t.Fatalf("ListTasks(pageSize 1) = %v, %v; want 1 task of 2 and a next page", page, err)
	}
	page2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](1), PageToken: page.NextPageToken})
	if err != nil || len(page2.Tasks) != 1 || page2.NextPageToken != "" || page2.Tasks[0].Id == page.Tasks[0].Id {
		t.Fatalf("ListTasks(page 2) = %v, %v; want the other task and no next page", page2, err)
	}
	page, err = c.ListTasks(ctx, &a2a.ListTasksRequest{
		ContextId: task.ContextId, Status: a2a.TaskState_TASK_STATE_COMPLETED, IncludeArtifacts: ptr(true),
		StatusTimestampAfter: a2a.Timestamp(time.Now().Add(-time.Hour)), HistoryLength: ptr[int32](1),
	})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Id != task.Id || len(page.Tasks[0].Artifacts) != 1 || len(page.Tasks[0].History) != 1 {
		t.Fatalf("ListTasks(filters) = %v, %v; want the one task with artifacts and one history message", page, err)
	}
}

// checkCancelTask cancels a running task.
func checkCancelTask(t *testing.T, ctx context.Context, c *client.Client) {
	slow := send(t, c, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: slow.Id})
	if err != nil || canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", canceled, err)
	}
}

// checkPushConfigs creates, reads, lists and deletes a push notification
// configuration of task.
func checkPushConfigs(t *testing.T, ctx context.Context, c *client.Client, task *a2a.Task) {
	cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "http://127.0.0.1:9/hook", Token: "tok"})
	if err != nil || cfg.Id == "" || cfg.TaskId != task.Id {
		t.Fatalf("CreateTaskPushNotificationConfig = %v, %v", cfg, err)
	}
	gotCfg, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id})
	if err != nil || !proto.Equal(gotCfg, cfg) {
		t.Fatalf("GetTaskPushNotificationConfig = %v, %v; want %v", gotCfg, err, cfg)
	}
	list, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id})
	if err != nil || len(list.Configs) != 1 {
		t.Fatalf("ListTaskPushNotificationConfigs = %v, %v; want one config", list, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); err != nil {
		t.Fatalf("DeleteTaskPushNotificationConfig = %v", err)
	}
	if _, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTaskPushNotificationConfig after delete = %v, want TaskNotFound", err)
	}
}

// TestExtendedCard covers GetExtendedAgentCard with authentication.
func TestExtendedCard(t *testing.T) {
	t.Parallel()
	extended := func(card *a2a.AgentCard, o *server.Options) {
		card.Capabilities.ExtendedAgentCard = ptr(true)
		ext := proto.Clone(card).(*a2a.AgentCard)
		ext.Name = "extended"
		o.ExtendedCard = ext
	}
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{tokens: map[string]string{"secret": "alice"}, mutate: extended})
			ctx := testCtx(t)
			card, err := e.client(b, &client.Options{BearerToken: "secret"}).GetExtendedAgentCard(ctx, nil)
			if err != nil || card.Name != "extended" {
				t.Fatalf("GetExtendedAgentCard = %v, %v; want the extended card", card, err)
			}
			if _, err := e.client(b, nil).GetExtendedAgentCard(ctx, nil); !errors.Is(err, a2a.ErrUnauthenticated) {
				t.Fatalf("GetExtendedAgentCard without a token = %v, want Unauthenticated", err)
			}
		})
	}
}

// TestExtensionsHeader: A2A-Extensions activates a required extension.
func TestExtensionsHeader(t *testing.T) {
	t.Parallel()
	const uri = "https://example.com/ext/v1"
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			e := start(t, config{wrap: rec.wrap, mutate: func(card *a2a.AgentCard, _ *server.Options) {
				card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: uri, Required: true}}
			}})
			c := e.client(b, &client.Options{Extensions: []string{uri}})
			send(t, c, "hello", nil)
			for _, r := range rec.all() {
				if got := r.header.Get("A2A-Extensions"); got != uri {
					t.Errorf("%s %s: A2A-Extensions = %q, want %q", r.method, r.path, got, uri)
				}
			}
		})
	}
}
