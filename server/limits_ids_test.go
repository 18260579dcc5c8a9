package server_test

// Identifier bounds (server.Limits.MaxIDBytes): every identifier a request
// carries is refused over the limit before any store lookup, and never
// echoed whole.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"parley.dev/parley/internal/testkit"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// spyStore counts the store calls that carry an identifier longer than
// long, which the core must refuse before looking anything up.
type spyStore struct {
	taskstore.Store
	long  int
	calls atomic.Int32
}

func (s *spyStore) saw(ids ...string) {
	for _, id := range ids {
		if len(id) > s.long {
			s.calls.Add(1)
		}
	}
}

func (s *spyStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	s.saw(id, sc.Tenant)
	return s.Store.GetTask(ctx, sc, id)
}

func (s *spyStore) GetMessage(ctx context.Context, sc taskstore.Scope, id string) (*taskstore.MessageRecord, error) {
	s.saw(id, sc.Tenant)
	return s.Store.GetMessage(ctx, sc, id)
}

func (s *spyStore) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	s.saw(r.MessageID, sc.Tenant)
	return s.Store.PutMessage(ctx, sc, r)
}

func (s *spyStore) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	s.saw(taskID, id, sc.Tenant)
	return s.Store.GetPushConfig(ctx, sc, taskID, id)
}

func (s *spyStore) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	s.saw(taskID, sc.Tenant)
	return s.Store.ListPushConfigs(ctx, sc, taskID)
}

func (s *spyStore) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	s.saw(q.ContextID, sc.Tenant)
	return s.Store.ListTasks(ctx, sc, q)
}

// idCase is a call carrying one over-long identifier, and the field its
// refusal must name.
type idCase struct {
	name, field string
	call        func(ctx context.Context) error
}

func TestMaxIDBytes(t *testing.T) {
	t.Parallel()
	store := &spyStore{Store: memstore.New(), long: server.DefaultMaxIDBytes}
	s := newServer(t, server.Options{Store: store})
	parked := sendTask(t, s, anon(t), "input-required")
	long := strings.Repeat("L", 5<<20) // the 5 MB id of the review
	limit := server.DefaultMaxIDBytes
	fit := strings.Repeat("f", limit)

	var cases []idCase
	cases = append(cases, sendIDCases(s, long)...)
	cases = append(cases, taskIDCases(s, parked.Id, long)...)
	cases = append(cases, pushConfigIDCases(s, parked.Id, long)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(anon(t))
			wantLimit(t, tc.name, err, tc.field, "maxIdBytes", limit)
			if strings.Contains(err.Error(), "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL") {
				t.Errorf("%s: the error echoes the over-long id (%d bytes of error)", tc.name, len(err.Error()))
			}
		})
	}
	if n := store.calls.Load(); n != 0 {
		t.Errorf("the store was asked %d times about an over-long identifier; want none", n)
	}

	// At the limit every identifier is accepted.
	req := msgReq("x")
	req.Message.MessageId, req.Message.ContextId, req.Message.ReferenceTaskIds = fit, fit, []string{fit}
	taskOf(t)(s.SendMessage(anon(t), req))
	_, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: fit})
	wantErr(t, "GetTask of a 256-byte id", err, a2a.ErrTaskNotFound)
}

// sendIDCases: SendMessage and SendStreamingMessage with long in each
// identifier of the message, the tenant and an inline push configuration.
func sendIDCases(s *server.Server, long string) []idCase {
	withMsg := func(mod func(m *a2a.Message)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			req := msgReq("x")
			mod(req.Message)
			_, err := s.SendMessage(ctx, req)
			return err
		}
	}
	return []idCase{
		{"SendMessage messageId", "message.messageId", withMsg(func(m *a2a.Message) { m.MessageId = long })},
		{"SendMessage contextId", "message.contextId", withMsg(func(m *a2a.Message) { m.ContextId = long })},
		{"SendMessage taskId", "message.taskId", withMsg(func(m *a2a.Message) { m.TaskId = long })},
		{"SendMessage referenceTaskIds", "message.referenceTaskIds[1]", withMsg(func(m *a2a.Message) { m.ReferenceTaskIds = []string{"ok", long} })},
		{"SendMessage part mediaType", "message.parts[0].mediaType", withMsg(func(m *a2a.Message) { m.Parts[0].MediaType = long })},
		{"SendMessage tenant", "tenant", func(ctx context.Context) error {
			req := msgReq("x")
			req.Tenant = long
			_, err := s.SendMessage(ctx, req)
			return err
		}},
		{"SendMessage inline push id", "configuration.taskPushNotificationConfig.id", func(ctx context.Context) error {
			req := withConfig(msgReq("x"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: long, Url: "https://hooks.example/"}})
			_, err := s.SendMessage(ctx, req)
			return err
		}},
		{"SendStreamingMessage messageId", "message.messageId", func(ctx context.Context) error {
			req := msgReq("x")
			req.Message.MessageId = long
			_, err := testkit.Collect(s.SendStreamingMessage(ctx, req))
			return err
		}},
	}
}

// taskIDCases: the task calls and GetExtendedAgentCard with long as an
// identifier or tenant; parkedID names a task that exists.
func taskIDCases(s *server.Server, parkedID, long string) []idCase {
	return []idCase{
		{"GetTask", "id", func(ctx context.Context) error {
			_, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: long})
			return err
		}},
		{"GetTask tenant", "tenant", func(ctx context.Context) error {
			_, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: parkedID, Tenant: long})
			return err
		}},
		{"ListTasks contextId", "contextId", func(ctx context.Context) error {
			_, err := s.ListTasks(ctx, &a2a.ListTasksRequest{ContextId: long})
			return err
		}},
		{"CancelTask", "id", func(ctx context.Context) error {
			_, err := s.CancelTask(ctx, &a2a.CancelTaskRequest{Id: long})
			return err
		}},
		{"SubscribeToTask", "id", func(ctx context.Context) error {
			_, err := testkit.Collect(s.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: long}))
			return err
		}},
		{"GetExtendedAgentCard tenant", "tenant", func(ctx context.Context) error {
			_, err := s.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: long})
			return err
		}},
	}
}

// pushConfigIDCases: the push-configuration calls with long as the task
// or configuration id; parkedID names a task that exists.
func pushConfigIDCases(s *server.Server, parkedID, long string) []idCase {
	create := func(c *a2a.TaskPushNotificationConfig) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.CreateTaskPushNotificationConfig(ctx, c)
			return err
		}
	}
	return []idCase{
		{"Create taskId", "taskId", create(&a2a.TaskPushNotificationConfig{TaskId: long, Url: "https://hooks.example/"})},
		{"Create id", "id", create(&a2a.TaskPushNotificationConfig{TaskId: parkedID, Id: long, Url: "https://hooks.example/"})},
		{"Get taskId", "taskId", func(ctx context.Context) error {
			_, err := s.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: long, Id: "c"})
			return err
		}},
		{"Get id", "id", func(ctx context.Context) error {
			_, err := s.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: parkedID, Id: long})
			return err
		}},
		{"List taskId", "taskId", func(ctx context.Context) error {
			_, err := s.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: long})
			return err
		}},
		{"Delete id", "id", func(ctx context.Context) error {
			return s.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: parkedID, Id: long})
		}},
	}
}

// TestLongIDNotEchoed: with the identifier limit off, a not-found error
// still quotes only the start of the id.
func TestLongIDNotEchoed(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxIDBytes: -1}})
	long := strings.Repeat("L", 1<<20)
	_, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: long})
	wantErr(t, "GetTask", err, a2a.ErrTaskNotFound)
	var e *a2a.Error
	if errors.As(err, &e) && (len(e.Message) > 200 || len(e.Metadata["taskId"]) > 100) {
		t.Errorf("TaskNotFound carries %d bytes of message and %d of metadata; want the id clipped", len(e.Message), len(e.Metadata["taskId"]))
	}
}
