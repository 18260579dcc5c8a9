// Package storetest is the conformance suite for taskstore.Store
// implementations. Every store in this module runs it, and so should a
// store written outside it:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) taskstore.Store {
//			return mystore.New(t.TempDir())
//		})
//	}
//
// The suite checks the rules written in the taskstore package docs: copies
// in and out, unique ids, scope isolation, the ListTasks order, filters,
// totals and keyset pagination, ListActive, DeleteFinished, push
// configurations, message records and safe concurrent use (run the suite
// with -race for that one to mean much). Status timestamps are treated at
// millisecond precision, so the suite only uses whole milliseconds.
//
// Where the interface docs leave a case open, the suite expects what the
// server needs (DESIGN B12: another principal's task looks absent):
//
//   - ListPushConfigs and DeletePushConfig return taskstore.ErrNotFound when
//     the task is not in the scope. For a task in the scope, ListPushConfigs
//     of a task without configurations returns an empty list, and deleting a
//     missing configuration returns nil.
//   - UpdateTask may change a task's context and state; ListTasks filters
//     and totals follow at once.
//   - Push configurations survive UpdateTask and are removed with their task
//     by DeleteFinished; a task created later with the same id starts
//     without any.
//   - MessageRecord.Created comes back equal (time.Time.Equal) to what was
//     stored when it is a whole millisecond.
//   - A task without a status may be stored, read and listed.
//   - The push outbox (see outbox.go in this package): a write with
//     Event.Push queues one row per active configuration in the write
//     itself; rows come back per configuration in queue order with the
//     configuration as stored; deleting, replacing or suspending a
//     configuration, or removing its task, drops its rows.
package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Run runs the conformance suite. open must return a new, empty store each
// time it is called; Run calls it once per subtest and closes the store
// when that subtest ends.
func Run(t *testing.T, open func(t *testing.T) taskstore.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s taskstore.Store)
	}{
		{"CreateGetRoundTrip", testCreateGet},
		{"UpdateRoundTrip", testUpdate},
		{"CopiesInAndOut", testCopies},
		{"EventSequence", testEventSequence},
		{"DuplicateIDAcrossScopes", testDuplicate},
		{"ScopeIsolation", testScopeIsolation},
		{"TaskWithoutStatus", testNoStatus},
		{"ListOrder", testListOrder},
		{"ListFilters", testListFilters},
		{"ListSinceInclusive", testListSince},
		{"ListTotalAndMore", testTotalAndMore},
		{"ListPagination", testPagination},
		{"ListPaginationWhileCreating", testPaginationWhileCreating},
		{"ListAfterUpdate", testListAfterUpdate},
		{"ListActive", testListActive},
		{"DeleteFinished", testDeleteFinished},
		{"PushConfigs", testPushConfigs},
		{"PushConfigScope", testPushConfigScope},
		{"PushOutbox", testPushOutbox},
		{"PushOutboxLifecycle", testPushOutboxLifecycle},
		{"PushOutboxAtomicCreate", testPushOutboxAtomicCreate},
		{"Messages", testMessages},
		{"MessageScope", testMessageScope},
		{"Concurrent", testConcurrent},
		{"ConcurrentSameID", testConcurrentSameID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

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

func text(s string) *a2a.Part {
	return &a2a.Part{Content: &a2a.Part_Text{Text: s}}
}

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

func mustCreate(t *testing.T, s taskstore.Store, sc taskstore.Scope, tasks ...*a2a.Task) {
	t.Helper()
	for _, tk := range tasks {
		if err := s.CreateTask(t.Context(), sc, tk, taskstore.Event{}); err != nil {
			t.Fatalf("CreateTask(%v, %q): %v", sc, tk.GetId(), err)
		}
	}
}

func mustUpdate(t *testing.T, s taskstore.Store, sc taskstore.Scope, tk *a2a.Task) {
	t.Helper()
	if err := s.UpdateTask(t.Context(), sc, tk, taskstore.Event{}); err != nil {
		t.Fatalf("UpdateTask(%v, %q): %v", sc, tk.GetId(), err)
	}
}

func mustGet(t *testing.T, s taskstore.Store, sc taskstore.Scope, id string) *a2a.Task {
	t.Helper()
	got, err := s.GetTask(t.Context(), sc, id)
	if err != nil {
		t.Fatalf("GetTask(%v, %q): %v", sc, id, err)
	}
	return got
}

func mustList(t *testing.T, s taskstore.Store, sc taskstore.Scope, q taskstore.ListQuery) taskstore.ListResult {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	res, err := s.ListTasks(t.Context(), sc, q)
	if err != nil {
		t.Fatalf("ListTasks(%v, %+v): %v", sc, q, err)
	}
	return res
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: got error %v, want %v", what, got, want)
	}
}

func wantEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

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
	sort.Slice(c, func(i, j int) bool {
		ti, tj := c[i].GetStatus().GetTimestamp().AsTime(), c[j].GetStatus().GetTimestamp().AsTime()
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return c[i].GetId() > c[j].GetId()
	})
	return ids(c)
}

func cursorOf(tk *a2a.Task) *taskstore.Cursor {
	return &taskstore.Cursor{Time: tk.GetStatus().GetTimestamp().AsTime(), ID: tk.GetId()}
}

func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func testCreateGet(t *testing.T, s taskstore.Store) {
	want := richTask("rich")
	mustCreate(t, s, scopeA, want)
	wantEqual(t, "GetTask after CreateTask", mustGet(t, s, scopeA, "rich"), want)

	_, err := s.GetTask(t.Context(), scopeA, "missing")
	wantErr(t, "GetTask of an unknown id", err, taskstore.ErrNotFound)

	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	if len(res.Tasks) != 1 {
		t.Fatalf("ListTasks returned %d tasks, want 1", len(res.Tasks))
	}
	wantEqual(t, "task listed", res.Tasks[0], want)
}

func testUpdate(t *testing.T, s taskstore.Store) {
	tk := richTask("u1")
	mustCreate(t, s, scopeA, tk)

	up := proto.Clone(tk).(*a2a.Task)
	up.Status = &a2a.TaskStatus{State: completed, Timestamp: timestamppb.New(at(100))}
	up.History = append(up.History, message("m3", "u1", up.ContextId, "third"))
	up.Artifacts = nil
	up.Metadata = nil
	mustUpdate(t, s, scopeA, up)
	wantEqual(t, "GetTask after UpdateTask", mustGet(t, s, scopeA, "u1"), up)

	err := s.UpdateTask(t.Context(), scopeA, task("nope", "c", working, at(1)), taskstore.Event{})
	wantErr(t, "UpdateTask of an unknown id", err, taskstore.ErrNotFound)
	if _, err := s.GetTask(t.Context(), scopeA, "nope"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("UpdateTask of an unknown id created it (GetTask error %v)", err)
	}
}

// testEventSequence: the last event sequence number is stored with the
// task, never goes down, is kept by a write without an event, and is only
// visible in the task's scope.
func testEventSequence(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	tk := task("seq", "c", working, at(1))
	if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	want := func(n uint64) {
		t.Helper()
		got, err := s.LastSeq(ctx, scopeA, "seq")
		if err != nil || got != n {
			t.Fatalf("LastSeq = %d, %v; want %d", got, err, n)
		}
	}
	want(1)
	for _, step := range []struct{ write, after uint64 }{{5, 5}, {0, 5}, {3, 5}, {6, 6}} {
		if err := s.UpdateTask(ctx, scopeA, tk, taskstore.Event{Seq: step.write}); err != nil {
			t.Fatal(err)
		}
		want(step.after)
	}
	if _, err := s.LastSeq(ctx, scopeB, "seq"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("LastSeq from another scope: %v, want ErrNotFound", err)
	}
	if _, err := s.LastSeq(ctx, scopeA, "nope"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("LastSeq of a missing task: %v, want ErrNotFound", err)
	}
}

func testCopies(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	in := richTask("c1")
	want := proto.Clone(in).(*a2a.Task)
	mustCreate(t, s, scopeA, in)
	in.Status.State = failed
	in.History[0].Parts[0] = text("changed")
	in.Metadata.Fields["priority"] = structpb.NewNumberValue(9)
	wantEqual(t, "stored task after the caller changed the created task", mustGet(t, s, scopeA, "c1"), want)

	got := mustGet(t, s, scopeA, "c1")
	got.Id = "other"
	got.Status.State = canceled
	got.Artifacts[0].Parts = nil
	got.History = got.History[:1]
	wantEqual(t, "stored task after the caller changed a returned task", mustGet(t, s, scopeA, "c1"), want)

	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	res.Tasks[0].Status.State = rejected
	res.Tasks[0].History[0].MessageId = "x"
	wantEqual(t, "stored task after the caller changed a listed task", mustGet(t, s, scopeA, "c1"), want)

	up := proto.Clone(want).(*a2a.Task)
	up.Status = &a2a.TaskStatus{State: working, Timestamp: timestamppb.New(at(7))}
	want = proto.Clone(up).(*a2a.Task)
	mustUpdate(t, s, scopeA, up)
	up.Status.State = completed
	up.History = nil
	wantEqual(t, "stored task after the caller changed an updated task", mustGet(t, s, scopeA, "c1"), want)

	active, err := s.ListActive(ctx)
	if err != nil || len(active) != 1 {
		t.Fatalf("ListActive: %d tasks, error %v; want 1 task", len(active), err)
	}
	active[0].Task.Status.State = failed
	active[0].Task.ContextId = "zzz"
	wantEqual(t, "stored task after the caller changed an active task", mustGet(t, s, scopeA, "c1"), want)

	cfg := &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "c1", Url: "https://example.com/hook", Token: "tok",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}}
	wantCfg := proto.Clone(cfg).(*a2a.TaskPushNotificationConfig)
	if err := s.PutPushConfig(ctx, scopeA, cfg, taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}
	cfg.Url = "https://evil.example"
	cfg.Authentication.Credentials = "changed"
	gc, err := s.GetPushConfig(ctx, scopeA, "c1", "p")
	if err != nil {
		t.Fatalf("GetPushConfig: %v", err)
	}
	wantEqual(t, "stored config after the caller changed the put config", gc, wantCfg)
	gc.Token = "x"
	gc.Authentication.Scheme = "Basic"
	list, err := s.ListPushConfigs(ctx, scopeA, "c1")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListPushConfigs: %d configs, error %v; want 1", len(list), err)
	}
	wantEqual(t, "stored config after the caller changed a returned config", list[0], wantCfg)
	list[0].Url = "changed"
	gc, _ = s.GetPushConfig(ctx, scopeA, "c1", "p")
	wantEqual(t, "stored config after the caller changed a listed config", gc, wantCfg)

	rec := &taskstore.MessageRecord{MessageID: "msg", Digest: "d1", TaskID: "c1",
		Reply: message("r", "", "", "reply"), Created: at(0)}
	if old, err := s.PutMessage(ctx, scopeA, rec); err != nil || old != nil {
		t.Fatalf("PutMessage of a new id = %v, %v; want nil, nil", old, err)
	}
	rec.Digest = "d2"
	rec.Reply.Parts[0] = text("changed")
	old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if err != nil || old == nil {
		t.Fatalf("PutMessage of a known id = %v, %v; want the record", old, err)
	}
	if old.Digest != "d1" {
		t.Errorf("record digest %q after the caller changed the put record, want d1", old.Digest)
	}
	wantEqual(t, "record reply after the caller changed the put record", old.Reply, message("r", "", "", "reply"))
	old.Digest = "d4"
	old.Reply.MessageId = "changed"
	old2, _ := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if old2 == nil || old2.Digest != "d1" {
		t.Fatalf("record after the caller changed a returned record: %+v, want digest d1", old2)
	}
	wantEqual(t, "record reply after the caller changed a returned record", old2.Reply, message("r", "", "", "reply"))

	reply := message("r2", "", "", "second reply")
	if err := s.SetMessageReply(ctx, scopeA, "msg", reply); err != nil {
		t.Fatalf("SetMessageReply: %v", err)
	}
	reply.Parts = nil
	old3, _ := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if old3 == nil {
		t.Fatal("record vanished after SetMessageReply")
	}
	wantEqual(t, "reply after the caller changed the set reply", old3.Reply, message("r2", "", "", "second reply"))
}

func testDuplicate(t *testing.T, s taskstore.Store) {
	orig := task("dup", "c", working, at(1))
	mustCreate(t, s, scopeA, orig)
	for _, sc := range append([]taskstore.Scope{scopeA}, others...) {
		err := s.CreateTask(t.Context(), sc, task("dup", "other", completed, at(2)), taskstore.Event{})
		wantErr(t, fmt.Sprintf("CreateTask of a taken id in scope %+v", sc), err, taskstore.ErrExists)
	}
	wantEqual(t, "task after refused duplicates", mustGet(t, s, scopeA, "dup"), orig)
	for _, sc := range others {
		if _, err := s.GetTask(t.Context(), sc, "dup"); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("refused duplicate became visible in scope %+v (error %v)", sc, err)
		}
		if n := mustList(t, s, sc, taskstore.ListQuery{}).Total; n != 0 {
			t.Errorf("refused duplicate counted in scope %+v: Total %d", sc, n)
		}
	}
}

func testScopeIsolation(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	a := task("a1", "shared-ctx", working, at(10))
	mustCreate(t, s, scopeA, a, task("a2", "shared-ctx", completed, at(20)))
	mustCreate(t, s, scopeB, task("b1", "shared-ctx", working, at(15)))
	if err := s.PutPushConfig(ctx, scopeA, &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "a1", Url: "https://a.example"}, taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}

	for _, sc := range others {
		name := fmt.Sprintf("scope %+v", sc)
		_, err := s.GetTask(ctx, sc, "a1")
		wantErr(t, name+": GetTask of another scope's task", err, taskstore.ErrNotFound)

		err = s.UpdateTask(ctx, sc, task("a1", "x", failed, at(99)), taskstore.Event{})
		wantErr(t, name+": UpdateTask of another scope's task", err, taskstore.ErrNotFound)

		for _, q := range []taskstore.ListQuery{{}, {ContextID: "shared-ctx"}, {State: working}, {Since: at(0)}} {
			res := mustList(t, s, sc, q)
			for _, tk := range res.Tasks {
				if tk.GetId() == "a1" || tk.GetId() == "a2" {
					t.Errorf("%s: ListTasks(%+v) shows scope A's task %q", name, q, tk.GetId())
				}
			}
			want := 0
			if sc == scopeB {
				want = 1
			}
			if res.Total != want || len(res.Tasks) != want {
				t.Errorf("%s: ListTasks(%+v) Total %d, %d tasks; want %d", name, q, res.Total, len(res.Tasks), want)
			}
		}

		_, err = s.GetPushConfig(ctx, sc, "a1", "p")
		wantErr(t, name+": GetPushConfig of another scope's task", err, taskstore.ErrNotFound)
		_, err = s.ListPushConfigs(ctx, sc, "a1")
		wantErr(t, name+": ListPushConfigs of another scope's task", err, taskstore.ErrNotFound)
		err = s.PutPushConfig(ctx, sc, &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "a1", Url: "https://evil.example"}, taskstore.Event{})
		wantErr(t, name+": PutPushConfig on another scope's task", err, taskstore.ErrNotFound)
		err = s.DeletePushConfig(ctx, sc, "a1", "p")
		wantErr(t, name+": DeletePushConfig on another scope's task", err, taskstore.ErrNotFound)
	}

	wantEqual(t, "scope A's task after other scopes touched it", mustGet(t, s, scopeA, "a1"), a)
	cfg, err := s.GetPushConfig(ctx, scopeA, "a1", "p")
	if err != nil || cfg.GetUrl() != "https://a.example" {
		t.Errorf("scope A's config after other scopes touched it: %v, %v", cfg, err)
	}
	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	sameIDs(t, "scope A's list", ids(res.Tasks), []string{"a2", "a1"})
	if res.Total != 2 {
		t.Errorf("scope A's Total %d, want 2", res.Total)
	}
}

func testNoStatus(t *testing.T, s taskstore.Store) {
	tk := &a2a.Task{Id: "bare", ContextId: "c"}
	mustCreate(t, s, scopeA, tk)
	wantEqual(t, "task without status", mustGet(t, s, scopeA, "bare"), tk)
	if res := mustList(t, s, scopeA, taskstore.ListQuery{}); res.Total != 1 || len(res.Tasks) != 1 {
		t.Errorf("ListTasks: Total %d, %d tasks; want 1", res.Total, len(res.Tasks))
	}
	if n, err := s.DeleteFinished(t.Context(), at(1000)); err != nil || n != 0 {
		t.Errorf("DeleteFinished removed %d (error %v), want 0: the task is not terminal", n, err)
	}
}

// orderFixture creates tasks with distinct and equal timestamps, inserted
// neither in id nor in time order.
func orderFixture(t *testing.T, s taskstore.Store) []*a2a.Task {
	tasks := []*a2a.Task{
		task("m", "c1", working, at(50)),
		task("b", "c2", completed, at(10)),
		task("z", "c1", completed, at(30)),
		task("a", "c1", working, at(30)),
		task("q", "c2", working, at(30)),
		task("k", "c1", failed, at(70)),
		task("c", "c2", working, at(-5)),
		task("y", "c1", canceled, at(10)),
		task("aa", "c2", working, at(30)),
		task("x", "c1", submitted, at(90)),
	}
	mustCreate(t, s, scopeA, tasks...)
	return tasks
}

func testListOrder(t *testing.T, s taskstore.Store) {
	tasks := orderFixture(t, s)
	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	want := expectedOrder(tasks)
	sameIDs(t, "ListTasks order", ids(res.Tasks), want)
	if res.Total != len(tasks) || res.More {
		t.Errorf("Total %d More %v, want %d false", res.Total, res.More, len(tasks))
	}
	// Spot-check the tie-break explicitly, independent of expectedOrder.
	sameIDs(t, "tasks at the same timestamp", ids(mustList(t, s, scopeA, taskstore.ListQuery{Since: at(30), Limit: 1000}).Tasks)[3:], []string{"z", "q", "aa", "a"})
	for i, tk := range res.Tasks {
		var src *a2a.Task
		for _, x := range tasks {
			if x.Id == tk.GetId() {
				src = x
			}
		}
		wantEqual(t, fmt.Sprintf("listed task %d", i), tk, src)
	}
}

func filter(tasks []*a2a.Task, keep func(*a2a.Task) bool) []*a2a.Task {
	var out []*a2a.Task
	for _, tk := range tasks {
		if keep(tk) {
			out = append(out, tk)
		}
	}
	return out
}

func testListFilters(t *testing.T, s taskstore.Store) {
	tasks := orderFixture(t, s)
	// Noise in other scopes that match the same filters.
	mustCreate(t, s, scopeB, task("nb", "c1", working, at(30)))
	mustCreate(t, s, scopeC, task("nc", "c1", working, at(30)))

	cases := []struct {
		q    taskstore.ListQuery
		keep func(*a2a.Task) bool
	}{
		{taskstore.ListQuery{ContextID: "c1"}, func(x *a2a.Task) bool { return x.ContextId == "c1" }},
		{taskstore.ListQuery{ContextID: "none"}, func(x *a2a.Task) bool { return false }},
		{taskstore.ListQuery{State: working}, func(x *a2a.Task) bool { return x.Status.State == working }},
		{taskstore.ListQuery{State: rejected}, func(x *a2a.Task) bool { return false }},
		{taskstore.ListQuery{Since: at(30)}, func(x *a2a.Task) bool { return !x.Status.Timestamp.AsTime().Before(at(30)) }},
		{taskstore.ListQuery{ContextID: "c1", State: working}, func(x *a2a.Task) bool { return x.ContextId == "c1" && x.Status.State == working }},
		{taskstore.ListQuery{ContextID: "c2", Since: at(10)}, func(x *a2a.Task) bool {
			return x.ContextId == "c2" && !x.Status.Timestamp.AsTime().Before(at(10))
		}},
		{taskstore.ListQuery{State: completed, Since: at(30)}, func(x *a2a.Task) bool {
			return x.Status.State == completed && !x.Status.Timestamp.AsTime().Before(at(30))
		}},
		{taskstore.ListQuery{ContextID: "c2", State: working, Since: at(0)}, func(x *a2a.Task) bool {
			return x.ContextId == "c2" && x.Status.State == working && !x.Status.Timestamp.AsTime().Before(at(0))
		}},
	}
	for _, tc := range cases {
		want := expectedOrder(filter(tasks, tc.keep))
		res := mustList(t, s, scopeA, tc.q)
		sameIDs(t, fmt.Sprintf("ListTasks(%+v)", tc.q), ids(res.Tasks), want)
		if res.Total != len(want) || res.More {
			t.Errorf("ListTasks(%+v): Total %d More %v, want %d false", tc.q, res.Total, res.More, len(want))
		}
		// The same filters paged one task at a time.
		q := tc.q
		q.Limit = 1
		got := walk(t, s, scopeA, q, len(want))
		sameIDs(t, fmt.Sprintf("ListTasks(%+v) paged by 1", tc.q), got, want)
	}
}

func testListSince(t *testing.T, s taskstore.Store) {
	mustCreate(t, s, scopeA,
		task("before", "c", working, at(99)),
		task("exact", "c", working, at(100)),
		task("after", "c", working, at(101)))
	res := mustList(t, s, scopeA, taskstore.ListQuery{Since: at(100)})
	sameIDs(t, "Since is inclusive", ids(res.Tasks), []string{"after", "exact"})
	if res.Total != 2 {
		t.Errorf("Total %d, want 2", res.Total)
	}
	res = mustList(t, s, scopeA, taskstore.ListQuery{Since: at(102)})
	if len(res.Tasks) != 0 || res.Total != 0 {
		t.Errorf("Since after every task: %d tasks, Total %d; want none", len(res.Tasks), res.Total)
	}
	res = mustList(t, s, scopeA, taskstore.ListQuery{Since: at(-1000)})
	if res.Total != 3 {
		t.Errorf("Since before every task: Total %d, want 3", res.Total)
	}
}

func testTotalAndMore(t *testing.T, s taskstore.Store) {
	var tasks []*a2a.Task
	for i := range 7 {
		tasks = append(tasks, task(fmt.Sprintf("t%d", i), fmt.Sprintf("c%d", i%2), working, at(i)))
	}
	mustCreate(t, s, scopeA, tasks...)
	all := expectedOrder(tasks)

	check := func(q taskstore.ListQuery, wantIDs []string, total int, more bool) {
		t.Helper()
		res := mustList(t, s, scopeA, q)
		sameIDs(t, fmt.Sprintf("ListTasks(%+v)", q), ids(res.Tasks), wantIDs)
		if res.Total != total || res.More != more {
			t.Errorf("ListTasks(%+v): Total %d More %v, want %d %v", q, res.Total, res.More, total, more)
		}
	}
	check(taskstore.ListQuery{Limit: 7}, all, 7, false)
	check(taskstore.ListQuery{Limit: 8}, all, 7, false)
	check(taskstore.ListQuery{Limit: 6}, all[:6], 7, true)
	check(taskstore.ListQuery{Limit: 1}, all[:1], 7, true)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[6])}, all[1:4], 7, true)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[3])}, all[4:7], 7, false)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[0])}, nil, 7, false)
	// c1 holds t5, t3, t1.
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1"}, []string{"t5", "t3"}, 3, true)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1", After: cursorOf(tasks[3])}, []string{"t1"}, 3, false)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c0", Since: at(2)}, []string{"t6", "t4"}, 3, true)
	// A cursor that is not a stored task still positions the page.
	check(taskstore.ListQuery{Limit: 10, After: &taskstore.Cursor{Time: at(4), ID: "t4x"}}, all[2:], 7, false)
	check(taskstore.ListQuery{Limit: 10, After: &taskstore.Cursor{Time: at(4), ID: "t3"}}, all[3:], 7, false)
}

// walk pages through the query with its limit and returns the ids seen. It
// fails on a page larger than the limit, a More flag that disagrees with
// the next page, or a Total that changes.
func walk(t *testing.T, s taskstore.Store, sc taskstore.Scope, q taskstore.ListQuery, total int) []string {
	t.Helper()
	var seen []string
	for pages := 0; ; pages++ {
		if pages > total+2 {
			t.Fatalf("walk did not end after %d pages", pages)
		}
		res := mustList(t, s, sc, q)
		if len(res.Tasks) > q.Limit {
			t.Fatalf("page of %d tasks exceeds Limit %d", len(res.Tasks), q.Limit)
		}
		if total >= 0 && res.Total != total {
			t.Errorf("page %d: Total %d, want %d", pages, res.Total, total)
		}
		seen = append(seen, ids(res.Tasks)...)
		if !res.More {
			return seen
		}
		if len(res.Tasks) == 0 {
			t.Fatalf("page %d is empty but More is set", pages)
		}
		q.After = cursorOf(res.Tasks[len(res.Tasks)-1])
	}
}

func testPagination(t *testing.T, s taskstore.Store) {
	var tasks []*a2a.Task
	for i := range 53 {
		// Groups of up to 4 tasks share a timestamp, so page boundaries
		// fall inside groups.
		tasks = append(tasks, task(fmt.Sprintf("p%03d", (i*37)%53), "c", working, at(i/4)))
	}
	mustCreate(t, s, scopeA, tasks...)
	want := expectedOrder(tasks)
	for _, limit := range []int{1, 2, 3, 5, 10, 53, 100} {
		got := walk(t, s, scopeA, taskstore.ListQuery{Limit: limit}, len(tasks))
		sameIDs(t, fmt.Sprintf("walk with Limit %d", limit), got, want)
	}
}

func testPaginationWhileCreating(t *testing.T, s taskstore.Store) {
	var tasks []*a2a.Task
	for i := range 30 {
		tasks = append(tasks, task(fmt.Sprintf("o%02d", i), "c", working, at(i/3)))
	}
	mustCreate(t, s, scopeA, tasks...)
	want := map[string]bool{}
	for _, tk := range tasks {
		want[tk.Id] = true
	}

	q := taskstore.ListQuery{Limit: 4}
	seen := map[string]int{}
	n := 0
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("walk did not end")
		}
		res := mustList(t, s, scopeA, q)
		for _, tk := range res.Tasks {
			seen[tk.GetId()]++
		}
		if !res.More {
			break
		}
		last := res.Tasks[len(res.Tasks)-1]
		lt := last.GetStatus().GetTimestamp().AsTime()
		// Tasks created during the walk: newer ones and ones tied with
		// the cursor but sorting before it must not appear later; older
		// ones and ones tied but sorting after it must.
		newer := task(fmt.Sprintf("n%02d", n), "c", working, at(1000+n))
		tieBefore := task(last.GetId()+"~", "c", working, lt)
		older := task(fmt.Sprintf("l%02d", n), "c", working, at(-1000-n))
		n++
		mustCreate(t, s, scopeA, newer, tieBefore, older)
		if lid := last.GetId(); len(lid) > 1 {
			tieAfter := task(lid[:len(lid)-1], "c", working, lt)
			if _, err := s.GetTask(t.Context(), scopeA, tieAfter.Id); errors.Is(err, taskstore.ErrNotFound) {
				mustCreate(t, s, scopeA, tieAfter)
				want[tieAfter.Id] = true
			}
		}
		want[older.Id] = true
		q.After = cursorOf(last)
	}
	for id, c := range seen {
		if c > 1 {
			t.Errorf("task %q seen %d times during the walk", id, c)
		}
		if !want[id] {
			t.Errorf("task %q, created during the walk before the cursor, was returned", id)
		}
	}
	for id := range want {
		if seen[id] == 0 {
			t.Errorf("task %q was never returned by the walk", id)
		}
	}
}

func testListAfterUpdate(t *testing.T, s taskstore.Store) {
	mustCreate(t, s, scopeA,
		task("t1", "c1", working, at(1)),
		task("t2", "c1", working, at(2)),
		task("t3", "c2", working, at(3)))
	// Move t1 to the front, to another state and another context.
	mustUpdate(t, s, scopeA, task("t1", "c2", completed, at(10)))
	sameIDs(t, "order after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{}).Tasks), []string{"t1", "t3", "t2"})
	sameIDs(t, "old state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{State: working}).Tasks), []string{"t3", "t2"})
	sameIDs(t, "new state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{State: completed}).Tasks), []string{"t1"})
	sameIDs(t, "old context after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c1"}).Tasks), []string{"t2"})
	sameIDs(t, "new context after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c2"}).Tasks), []string{"t1", "t3"})
	sameIDs(t, "context and state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c2", State: completed}).Tasks), []string{"t1"})
	// Move it back behind everything; totals follow.
	mustUpdate(t, s, scopeA, task("t1", "c1", working, at(0)))
	res := mustList(t, s, scopeA, taskstore.ListQuery{State: working, Since: at(0)})
	sameIDs(t, "order after second update", ids(res.Tasks), []string{"t3", "t2", "t1"})
	if res.Total != 3 {
		t.Errorf("Total %d, want 3", res.Total)
	}
	if n := mustList(t, s, scopeA, taskstore.ListQuery{State: completed}).Total; n != 0 {
		t.Errorf("completed Total %d after moving back, want 0", n)
	}
}

func testListActive(t *testing.T, s taskstore.Store) {
	type placed struct {
		sc taskstore.Scope
		tk *a2a.Task
	}
	all := []placed{
		{scopeA, task("s1", "c", submitted, at(1))},
		{scopeA, task("w1", "c", working, at(2))},
		{scopeA, task("i1", "c", inputRequired, at(3))},
		{scopeA, task("u1", "c", authRequired, at(4))},
		{scopeA, task("d1", "c", completed, at(5))},
		{scopeB, task("w2", "c", working, at(6))},
		{scopeB, task("f2", "c", failed, at(7))},
		{scopeC, task("s3", "c", submitted, at(8))},
		{scopeC, task("x3", "c", canceled, at(9))},
		{scopeD, task("w4", "c", working, at(10))},
		{scopeE, task("r5", "c", rejected, at(11))},
		{scopeE, task("w5", "c", working, at(-11))},
	}
	want := map[string]placed{}
	for _, p := range all {
		mustCreate(t, s, p.sc, p.tk)
		if st := p.tk.Status.State; st == submitted || st == working {
			want[p.tk.Id] = p
		}
	}
	// A task that stops being active leaves the list.
	mustUpdate(t, s, scopeA, task("s1", "c", completed, at(12)))
	delete(want, "s1")

	active, err := s.ListActive(t.Context())
	if err != nil {
		t.Fatalf("ListActive: %v", err)
	}
	got := map[string]bool{}
	for _, st := range active {
		id := st.Task.GetId()
		if got[id] {
			t.Errorf("ListActive returned %q twice", id)
		}
		got[id] = true
		p, ok := want[id]
		if !ok {
			t.Errorf("ListActive returned %q in state %v", id, st.Task.GetStatus().GetState())
			continue
		}
		if st.Scope != p.sc {
			t.Errorf("ListActive: task %q in scope %+v, want %+v", id, st.Scope, p.sc)
		}
		wantEqual(t, "active task "+id, st.Task, p.tk)
	}
	for id := range want {
		if !got[id] {
			t.Errorf("ListActive is missing %q", id)
		}
	}
}

func testDeleteFinished(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	cut := at(100)
	type placed struct {
		sc   taskstore.Scope
		tk   *a2a.Task
		gone bool
	}
	all := []placed{
		{scopeA, task("c-old", "c", completed, at(99)), true},
		{scopeB, task("f-old", "c", failed, at(50)), true},
		{scopeC, task("x-old", "c", canceled, at(-500)), true},
		{scopeD, task("r-old", "c", rejected, at(0)), true},
		{scopeA, task("c-cut", "c", completed, at(100)), false},
		{scopeA, task("c-new", "c", completed, at(101)), false},
		{scopeA, task("s-old", "c", submitted, at(1)), false},
		{scopeA, task("w-old", "c", working, at(1)), false},
		{scopeE, task("i-old", "c", inputRequired, at(1)), false},
		{scopeE, task("a-old", "c", authRequired, at(1)), false},
	}
	for _, p := range all {
		mustCreate(t, s, p.sc, p.tk)
		for _, id := range []string{"p2", "p1"} {
			if err := s.PutPushConfig(ctx, p.sc, &a2a.TaskPushNotificationConfig{Id: id, TaskId: p.tk.Id, Url: "https://h.example/" + id}, taskstore.Event{}); err != nil {
				t.Fatalf("PutPushConfig: %v", err)
			}
		}
	}
	n, err := s.DeleteFinished(ctx, cut)
	if err != nil {
		t.Fatalf("DeleteFinished: %v", err)
	}
	if n != 4 {
		t.Errorf("DeleteFinished removed %d, want 4", n)
	}
	for _, p := range all {
		_, err := s.GetTask(ctx, p.sc, p.tk.Id)
		switch {
		case p.gone && !errors.Is(err, taskstore.ErrNotFound):
			t.Errorf("task %q survived DeleteFinished (error %v)", p.tk.Id, err)
		case !p.gone && err != nil:
			t.Errorf("task %q was removed by DeleteFinished: %v", p.tk.Id, err)
		}
		cfgs, err := s.ListPushConfigs(ctx, p.sc, p.tk.Id)
		switch {
		case p.gone && !errors.Is(err, taskstore.ErrNotFound):
			t.Errorf("configs of removed task %q still listed: %d, %v", p.tk.Id, len(cfgs), err)
		case !p.gone && (err != nil || len(cfgs) != 2):
			t.Errorf("configs of kept task %q: %d, %v; want 2", p.tk.Id, len(cfgs), err)
		}
	}
	if res := mustList(t, s, scopeA, taskstore.ListQuery{}); res.Total != 4 {
		t.Errorf("scope A Total %d after DeleteFinished, want 4", res.Total)
	}
	// A removed id can be used again and starts without configurations.
	mustCreate(t, s, scopeA, task("f-old", "c", working, at(200)))
	if cfgs, err := s.ListPushConfigs(ctx, scopeA, "f-old"); err != nil || len(cfgs) != 0 {
		t.Errorf("configs of a recreated task: %d, %v; want none", len(cfgs), err)
	}
	if n, err := s.DeleteFinished(ctx, cut); err != nil || n != 0 {
		t.Errorf("second DeleteFinished removed %d (error %v), want 0", n, err)
	}
}

func testPushConfigs(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("t1", "c", working, at(1)), task("t2", "c", working, at(2)))
	put := func(c *a2a.TaskPushNotificationConfig) {
		t.Helper()
		if err := s.PutPushConfig(ctx, scopeA, c, taskstore.Event{}); err != nil {
			t.Fatalf("PutPushConfig(%q, %q): %v", c.TaskId, c.Id, err)
		}
	}
	cfg := func(taskID, id, url string) *a2a.TaskPushNotificationConfig {
		return &a2a.TaskPushNotificationConfig{Tenant: "t1", Id: id, TaskId: taskID, Url: url, Token: "tok-" + id,
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-" + id}}
	}
	for _, id := range []string{"b", "c", "a", "B"} {
		put(cfg("t1", id, "https://h.example/"+id))
	}
	put(cfg("t2", "a", "https://other.example/a"))

	got, err := s.GetPushConfig(ctx, scopeA, "t1", "a")
	if err != nil {
		t.Fatalf("GetPushConfig: %v", err)
	}
	wantEqual(t, "GetPushConfig", got, cfg("t1", "a", "https://h.example/a"))

	// Upsert replaces the whole configuration.
	repl := &a2a.TaskPushNotificationConfig{Id: "a", TaskId: "t1", Url: "https://new.example"}
	put(repl)
	got, _ = s.GetPushConfig(ctx, scopeA, "t1", "a")
	wantEqual(t, "GetPushConfig after replace", got, repl)

	list, err := s.ListPushConfigs(ctx, scopeA, "t1")
	if err != nil {
		t.Fatalf("ListPushConfigs: %v", err)
	}
	var gotIDs []string
	for _, c := range list {
		gotIDs = append(gotIDs, c.GetId())
	}
	sameIDs(t, "ListPushConfigs order", gotIDs, []string{"B", "a", "b", "c"})
	wantEqual(t, "listed config", list[0], cfg("t1", "B", "https://h.example/B"))

	// Another task's config with the same id is separate.
	got, _ = s.GetPushConfig(ctx, scopeA, "t2", "a")
	wantEqual(t, "config of another task with the same id", got, cfg("t2", "a", "https://other.example/a"))

	if err := s.DeletePushConfig(ctx, scopeA, "t1", "b"); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	_, err = s.GetPushConfig(ctx, scopeA, "t1", "b")
	wantErr(t, "GetPushConfig after delete", err, taskstore.ErrNotFound)
	if err := s.DeletePushConfig(ctx, scopeA, "t1", "b"); err != nil {
		t.Errorf("DeletePushConfig of a missing config: %v, want nil", err)
	}
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t1"); len(list) != 3 {
		t.Errorf("ListPushConfigs after delete: %d configs, want 3", len(list))
	}
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t2"); len(list) != 1 {
		t.Errorf("other task's configs after delete: %d, want 1", len(list))
	}

	_, err = s.GetPushConfig(ctx, scopeA, "t1", "missing")
	wantErr(t, "GetPushConfig of a missing id", err, taskstore.ErrNotFound)
	err = s.PutPushConfig(ctx, scopeA, cfg("nope", "a", "https://h.example"), taskstore.Event{})
	wantErr(t, "PutPushConfig on an unknown task", err, taskstore.ErrNotFound)
	_, err = s.ListPushConfigs(ctx, scopeA, "nope")
	wantErr(t, "ListPushConfigs of an unknown task", err, taskstore.ErrNotFound)
	_, err = s.GetPushConfig(ctx, scopeA, "nope", "a")
	wantErr(t, "GetPushConfig of an unknown task", err, taskstore.ErrNotFound)

	// Configs survive updates of their task.
	mustUpdate(t, s, scopeA, task("t1", "c", completed, at(5)))
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t1"); len(list) != 3 {
		t.Errorf("ListPushConfigs after UpdateTask: %d configs, want 3", len(list))
	}

	mustCreate(t, s, scopeA, task("t3", "c", working, at(3)))
	if list, err := s.ListPushConfigs(ctx, scopeA, "t3"); err != nil || len(list) != 0 {
		t.Errorf("ListPushConfigs of a task without configs: %d, %v; want none", len(list), err)
	}
}

func testPushConfigScope(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("t1", "c", working, at(1)))
	mustCreate(t, s, scopeB, task("t2", "c", working, at(1)))
	if err := s.PutPushConfig(ctx, scopeB, &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "t2", Url: "https://b.example"}, taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}
	// A's caller cannot reach B's task's configs, even by its own id.
	_, err := s.GetPushConfig(ctx, scopeA, "t2", "p")
	wantErr(t, "GetPushConfig across scopes", err, taskstore.ErrNotFound)
	err = s.DeletePushConfig(ctx, scopeA, "t2", "p")
	wantErr(t, "DeletePushConfig across scopes", err, taskstore.ErrNotFound)
	if c, err := s.GetPushConfig(ctx, scopeB, "t2", "p"); err != nil || c.GetUrl() != "https://b.example" {
		t.Errorf("B's config after A's attempts: %v, %v", c, err)
	}
	if list, err := s.ListPushConfigs(ctx, scopeA, "t1"); err != nil || len(list) != 0 {
		t.Errorf("A's task lists %d configs (error %v), want none", len(list), err)
	}
}

func testMessages(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	put := func(r *taskstore.MessageRecord) *taskstore.MessageRecord {
		t.Helper()
		old, err := s.PutMessage(ctx, scopeA, r)
		if err != nil {
			t.Fatalf("PutMessage(%q): %v", r.MessageID, err)
		}
		return old
	}
	first := &taskstore.MessageRecord{MessageID: "m1", Digest: "d1", TaskID: "t1", Created: at(10)}
	if old := put(first); old != nil {
		t.Fatalf("PutMessage of a new id returned %+v, want nil", old)
	}
	old := put(&taskstore.MessageRecord{MessageID: "m1", Digest: "d2", TaskID: "t9", Created: at(20)})
	if old == nil {
		t.Fatal("PutMessage of a known id returned nil, want the first record")
	}
	if old.MessageID != "m1" || old.Digest != "d1" || old.TaskID != "t1" || !old.Created.Equal(at(10)) || old.Reply != nil {
		t.Errorf("existing record %+v, want the first one unchanged", old)
	}

	if old := put(&taskstore.MessageRecord{MessageID: "m2", Digest: "d", Created: at(30)}); old != nil {
		t.Fatalf("PutMessage(m2) returned %+v, want nil", old)
	}
	reply := message("r", "", "ctx", "direct answer")
	if err := s.SetMessageReply(ctx, scopeA, "m2", reply); err != nil {
		t.Fatalf("SetMessageReply: %v", err)
	}
	old = put(&taskstore.MessageRecord{MessageID: "m2", Digest: "other", Created: at(40)})
	if old == nil || old.Digest != "d" || !old.Created.Equal(at(30)) {
		t.Fatalf("record after SetMessageReply: %+v", old)
	}
	wantEqual(t, "stored reply", old.Reply, reply)
	got, err := s.GetMessage(ctx, scopeA, "m2")
	if err != nil {
		t.Fatalf("GetMessage: %v", err)
	}
	if got.MessageID != "m2" || got.Digest != "d" || !got.Created.Equal(at(30)) || got.TaskID != "" {
		t.Errorf("GetMessage = %+v", got)
	}
	wantEqual(t, "reply from GetMessage", got.Reply, reply)
	got.Digest = "changed"
	got.Reply.Parts = nil
	if again, _ := s.GetMessage(ctx, scopeA, "m2"); again == nil || again.Digest != "d" || !proto.Equal(again.Reply, reply) {
		t.Errorf("record after the caller changed a returned record: %+v", again)
	}
	if got, err := s.GetMessage(ctx, scopeA, "m1"); err != nil || got.Digest != "d1" || got.TaskID != "t1" || got.Reply != nil {
		t.Errorf("GetMessage(m1) = %+v, %v", got, err)
	}
	_, err = s.GetMessage(ctx, scopeA, "missing")
	wantErr(t, "GetMessage of an unknown id", err, taskstore.ErrNotFound)
	err = s.SetMessageReply(ctx, scopeA, "missing", reply)
	wantErr(t, "SetMessageReply of an unknown id", err, taskstore.ErrNotFound)
	if _, err := s.GetMessage(ctx, scopeA, "missing"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("SetMessageReply of an unknown id created a record (GetMessage error %v)", err)
	}

	if old := put(&taskstore.MessageRecord{MessageID: "m3", Digest: "d", Created: at(50)}); old != nil {
		t.Fatalf("PutMessage(m3) returned %+v, want nil", old)
	}
	if _, err := s.PutMessage(ctx, scopeC, &taskstore.MessageRecord{MessageID: "mc", Digest: "d", Created: at(0)}); err != nil {
		t.Fatalf("PutMessage in scope C: %v", err)
	}
	// Created at(10) and at(0) are before at(30); at(30) is not.
	n, err := s.DeleteMessagesBefore(ctx, at(30))
	if err != nil || n != 2 {
		t.Errorf("DeleteMessagesBefore = %d, %v; want 2, nil", n, err)
	}
	if _, err := s.GetMessage(ctx, scopeA, "m1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("GetMessage of a deleted record: %v, want ErrNotFound", err)
	}
	if old := put(&taskstore.MessageRecord{MessageID: "m1", Digest: "new", Created: at(60)}); old != nil {
		t.Errorf("m1 survived DeleteMessagesBefore: %+v", old)
	}
	if old := put(&taskstore.MessageRecord{MessageID: "m2", Digest: "x", Created: at(60)}); old == nil || old.Digest != "d" {
		t.Errorf("m2 (created at the cutoff) was removed: %+v", old)
	}
	if old, _ := s.PutMessage(ctx, scopeC, &taskstore.MessageRecord{MessageID: "mc", Digest: "new", Created: at(60)}); old != nil {
		t.Errorf("scope C's old record survived DeleteMessagesBefore: %+v", old)
	}
}

func testMessageScope(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	if old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m", Digest: "da", TaskID: "ta", Created: at(1)}); old != nil || err != nil {
		t.Fatalf("PutMessage in A = %v, %v", old, err)
	}
	for _, sc := range others {
		old, err := s.PutMessage(ctx, sc, &taskstore.MessageRecord{MessageID: "m", Digest: "d-" + sc.Owner + sc.Tenant, Created: at(2)})
		if err != nil || old != nil {
			t.Errorf("PutMessage in scope %+v of an id known only in A = %+v, %v; want nil, nil", sc, old, err)
		}
	}
	if _, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m-only-a", Digest: "d", Created: at(1)}); err != nil {
		t.Fatalf("PutMessage: %v", err)
	}
	for _, sc := range others {
		_, err := s.GetMessage(ctx, sc, "m-only-a")
		wantErr(t, fmt.Sprintf("GetMessage in scope %+v of A's id", sc), err, taskstore.ErrNotFound)
		if got, err := s.GetMessage(ctx, sc, "m"); err != nil || got.Digest != "d-"+sc.Owner+sc.Tenant {
			t.Errorf("GetMessage in scope %+v = %+v, %v; want its own record", sc, got, err)
		}
	}
	err := s.SetMessageReply(ctx, scopeB, "m-only-a", message("r", "", "", "x"))
	wantErr(t, "SetMessageReply of an id unknown in the scope", err, taskstore.ErrNotFound)
	if err := s.SetMessageReply(ctx, scopeB, "m", message("rb", "", "", "b's reply")); err != nil {
		t.Fatalf("SetMessageReply in B: %v", err)
	}
	old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m", Digest: "zz", Created: at(3)})
	if err != nil || old == nil || old.Digest != "da" || old.TaskID != "ta" || old.Reply != nil {
		t.Errorf("A's record after other scopes used the same id: %+v, %v", old, err)
	}
}

func testConcurrent(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*8)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := scopeA
			if w%2 == 1 {
				sc = scopeB
			}
			for i := range each {
				id := fmt.Sprintf("w%d-%03d", w, i)
				tk := task(id, fmt.Sprintf("ctx%d", i%3), submitted, at(i))
				if err := s.CreateTask(ctx, sc, tk, taskstore.Event{}); err != nil {
					errs <- fmt.Errorf("CreateTask %s: %w", id, err)
					continue
				}
				tk.Status = &a2a.TaskStatus{State: working, Timestamp: timestamppb.New(at(i + 1))}
				tk.History = append(tk.History, message("m-"+id, id, tk.ContextId, "hi"))
				if err := s.UpdateTask(ctx, sc, tk, taskstore.Event{}); err != nil {
					errs <- fmt.Errorf("UpdateTask %s: %w", id, err)
				}
				if err := s.PutPushConfig(ctx, sc, &a2a.TaskPushNotificationConfig{Id: "p", TaskId: id, Url: "https://h.example"}, taskstore.Event{}); err != nil {
					errs <- fmt.Errorf("PutPushConfig %s: %w", id, err)
				}
				if _, err := s.PutMessage(ctx, sc, &taskstore.MessageRecord{MessageID: "m-" + id, Digest: "d", TaskID: id, Created: at(i)}); err != nil {
					errs <- fmt.Errorf("PutMessage %s: %w", id, err)
				}
				if _, err := s.GetTask(ctx, sc, id); err != nil {
					errs <- fmt.Errorf("GetTask %s: %w", id, err)
				}
				if _, err := s.ListTasks(ctx, sc, taskstore.ListQuery{Limit: 5, ContextID: "ctx1"}); err != nil {
					errs <- fmt.Errorf("ListTasks: %w", err)
				}
				if _, err := s.ListPushConfigs(ctx, sc, id); err != nil {
					errs <- fmt.Errorf("ListPushConfigs %s: %w", id, err)
				}
				tk.Status = &a2a.TaskStatus{State: completed, Timestamp: timestamppb.New(at(i + 2))}
				if err := s.UpdateTask(ctx, sc, tk, taskstore.Event{}); err != nil {
					errs <- fmt.Errorf("UpdateTask %s: %w", id, err)
				}
				if i%10 == 0 {
					if _, err := s.ListActive(ctx); err != nil {
						errs <- fmt.Errorf("ListActive: %w", err)
					}
					if _, err := s.DeleteFinished(ctx, at(-1)); err != nil {
						errs <- fmt.Errorf("DeleteFinished: %w", err)
					}
					if _, err := s.DeleteMessagesBefore(ctx, at(-1)); err != nil {
						errs <- fmt.Errorf("DeleteMessagesBefore: %w", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, sc := range []taskstore.Scope{scopeA, scopeB} {
		want := workers / 2 * each
		got := walk(t, s, sc, taskstore.ListQuery{Limit: 7}, want)
		if len(got) != want {
			t.Errorf("scope %+v: walk returned %d tasks, want %d", sc, len(got), want)
		}
		if res := mustList(t, s, sc, taskstore.ListQuery{State: completed}); res.Total != want {
			t.Errorf("scope %+v: %d completed tasks, want %d", sc, res.Total, want)
		}
	}
	if active, err := s.ListActive(ctx); err != nil || len(active) != 0 {
		t.Errorf("ListActive after the run: %d tasks, %v; want none", len(active), err)
	}
	n, err := s.DeleteFinished(ctx, at(1000))
	if err != nil || n != workers*each {
		t.Errorf("DeleteFinished = %d, %v; want %d", n, err, workers*each)
	}
}

func testConcurrentSameID(t *testing.T, s taskstore.Store) {
	ctx := t.Context()
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, exists, fresh, seen := 0, 0, 0, 0
	var other []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := others[i%len(others)]
			err := s.CreateTask(ctx, sc, task("same", "c", working, at(i)), taskstore.Event{})
			old, perr := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "same", Digest: fmt.Sprint(i), Created: at(i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, taskstore.ErrExists):
				exists++
			default:
				other = append(other, err)
			}
			switch {
			case perr != nil:
				other = append(other, perr)
			case old == nil:
				fresh++
			default:
				seen++
			}
		}()
	}
	wg.Wait()
	for _, err := range other {
		t.Error(err)
	}
	if created != 1 || exists != n-1 {
		t.Errorf("concurrent CreateTask of one id: %d created, %d ErrExists; want 1 and %d", created, exists, n-1)
	}
	if fresh != 1 || seen != n-1 {
		t.Errorf("concurrent PutMessage of one id: %d new, %d existing; want 1 and %d", fresh, seen, n-1)
	}
}
