package storetest

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Scopes used throughout: B differs from A by owner, C by tenant, D is the
// shared (empty owner) scope of A's tenant and E has A's owner in the
// default (empty) tenant.
var (
	scopeA = taskstore.Scope{Tenant: "t1", Owner: "alice"}
	scopeB = taskstore.Scope{Tenant: "t1", Owner: "bob"}
	scopeC = taskstore.Scope{Tenant: "t2", Owner: "alice"}
	scopeD = taskstore.Scope{Tenant: "t1", Owner: ""}
	scopeE = taskstore.Scope{Tenant: "", Owner: "alice"}

	others = []taskstore.Scope{scopeB, scopeC, scopeD, scopeE}
)

// base is the reference instant; all suite times are whole milliseconds.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns the instant ms milliseconds after base.
func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

const (
	submitted     = a2a.TaskState_TASK_STATE_SUBMITTED
	working       = a2a.TaskState_TASK_STATE_WORKING
	completed     = a2a.TaskState_TASK_STATE_COMPLETED
	failed        = a2a.TaskState_TASK_STATE_FAILED
	canceled      = a2a.TaskState_TASK_STATE_CANCELED
	rejected      = a2a.TaskState_TASK_STATE_REJECTED
	inputRequired = a2a.TaskState_TASK_STATE_INPUT_REQUIRED
	authRequired  = a2a.TaskState_TASK_STATE_AUTH_REQUIRED
)

// text returns a text part.
func text(s string) *a2a.Part {
	return &a2a.Part{Content: &a2a.Part_Text{Text: s}}
}

// message returns a user message with one text part.
func message(id, taskID, contextID, body string) *a2a.Message {
	return &a2a.Message{
		MessageId: id,
		TaskId:    taskID,
		ContextId: contextID,
		Role:      a2a.Role_ROLE_USER,
		Parts:     []*a2a.Part{text(body)},
	}
}

// task returns a small task.
func task(id, contextID string, state a2a.TaskState, ts time.Time) *a2a.Task {
	return &a2a.Task{
		Id:        id,
		ContextId: contextID,
		Status:    &a2a.TaskStatus{State: state, Timestamp: timestamppb.New(ts)},
	}
}

// richTask returns a task with every field set, nested messages included.
func richTask(id string) *a2a.Task {
	meta, err := structpb.NewStruct(map[string]any{
		"priority": 3.0,
		"labels":   []any{"x", "y"},
		"nested":   map[string]any{"ok": true, "none": nil},
	})
	if err != nil {
		panic(err)
	}
	return &a2a.Task{
		Id:        id,
		ContextId: "ctx-" + id,
		Status: &a2a.TaskStatus{
			State:     inputRequired,
			Message:   &a2a.Message{MessageId: "m-status", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("need more")}},
			Timestamp: timestamppb.New(at(42)),
		},
		Artifacts: []*a2a.Artifact{{
			ArtifactId: "a1",
			Name:       "result",
			Parts:      []*a2a.Part{text("héllo, wörld"), {Content: &a2a.Part_Raw{Raw: []byte{0, 1, 2, 255}}, MediaType: "application/octet-stream", Filename: "b.bin"}},
			Metadata:   meta,
			Extensions: []string{"urn:ext"},
		}},
		History: []*a2a.Message{
			message("m1", id, "ctx-"+id, "first"),
			{MessageId: "m2", TaskId: id, ContextId: "ctx-" + id, Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("second")}, ReferenceTaskIds: []string{"other"}},
		},
		Metadata: meta,
	}
}

// mustCreate creates the tasks in the scope, failing the test on an error.
func mustCreate(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, tasks ...*a2a.Task) {
	t.Helper()
	for _, tk := range tasks {
		if err := s.CreateTask(t.Context(), sc, tk, taskstore.Event{}); err != nil {
			t.Fatalf("CreateTask(%v, %q): %v", sc, tk.GetId(), err)
		}
	}
}

// mustUpdate replaces the task in the scope with tk by appending a Task
// event (a snapshot, which replaces everything) after its last event,
// failing the test on an error.
func mustUpdate(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, tk *a2a.Task) {
	t.Helper()
	seq, err := s.LastSeq(t.Context(), sc, tk.GetId())
	if err != nil {
		t.Fatalf("LastSeq(%v, %q): %v", sc, tk.GetId(), err)
	}
	ev := taskstore.Event{Seq: seq + 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(tk).(*a2a.Task)}}}
	if err := s.Append(t.Context(), sc, tk.GetId(), ev); err != nil {
		t.Fatalf("Append(%v, %q, snapshot): %v", sc, tk.GetId(), err)
	}
}

// mustGet reads a task, failing the test on an error.
func mustGet(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, id string) *a2a.Task {
	t.Helper()
	got, err := s.GetTask(t.Context(), sc, id)
	if err != nil {
		t.Fatalf("GetTask(%v, %q): %v", sc, id, err)
	}
	got.Generation = 0 // checked by testGeneration alone
	return got
}

// mustList lists tasks (up to 1000 when q has no limit), failing the
// test on an error.
func mustList(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, q taskstore.ListQuery) taskstore.ListResult {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	res, err := s.ListTasks(t.Context(), sc, q)
	if err != nil {
		t.Fatalf("ListTasks(%v, %+v): %v", sc, q, err)
	}
	for _, tk := range res.Tasks {
		tk.Generation = 0 // checked by testGeneration alone
	}
	return res
}

// wantErr reports got unless it matches want (errors.Is).
func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: got error %v, want %v", what, got, want)
	}
}

// wantEqual reports got unless it equals want (proto.Equal).
func wantEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// v10 returns c as a store keeps a configuration registered over v1.0.
func v10(c *a2a.TaskPushNotificationConfig) *taskstore.PushConfig {
	return &taskstore.PushConfig{TaskPushNotificationConfig: c, Version: "1.0"}
}

// wantConfig reports got unless it is want, version included.
func wantConfig(t *testing.T, what string, got, want *taskstore.PushConfig) {
	t.Helper()
	if !taskstore.EqualPushConfig(got, want) {
		t.Errorf("%s:\n got  %v\n want %v (version %q)", what, got, want, want.Version)
	}
}

// ids returns the tasks' ids, in order.
func ids(tasks []*a2a.Task) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.GetId()
	}
	return out
}

// expectedOrder sorts tasks the way ListTasks must: status timestamp
// descending, then id descending. It returns their ids.
func expectedOrder(tasks []*a2a.Task) []string {
	c := slices.Clone(tasks)
	slices.SortFunc(c, func(a, b *a2a.Task) int {
		ta, tb := a.GetStatus().GetTimestamp().AsTime(), b.GetStatus().GetTimestamp().AsTime()
		return cmp.Or(tb.Compare(ta), strings.Compare(b.GetId(), a.GetId()))
	})
	return ids(c)
}

// cursorOf returns the cursor positioned on tk.
func cursorOf(tk *a2a.Task) *taskstore.Cursor {
	return &taskstore.Cursor{Time: tk.GetStatus().GetTimestamp().AsTime(), ID: tk.GetId()}
}

// sameIDs reports got unless it equals want.
func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}
