package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/storetest"
)

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

var evictScope = taskstore.Scope{Tenant: "t", Owner: "o"}

// evictBase is the status timestamp of the first task; task i is i ms later.
var evictBase = time.UnixMilli(1_800_000_000_000)

func statusEvent(id string, st a2a.TaskState, at time.Time) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: id, ContextId: "ctx-" + id, Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.New(at)}}}}
}

// create stores task id, created SUBMITTED at ms and moved to st by a
// second event, with one push configuration that has a notification
// queued, and the message that made it recorded first, as the server core
// does.
func create(t *testing.T, s *memstore.Store, id string, ms int, st a2a.TaskState) {
	t.Helper()
	ctx := t.Context()
	at := evictBase.Add(time.Duration(ms) * time.Millisecond)
	msg := &a2a.Message{MessageId: "m-" + id, Role: a2a.Role_ROLE_USER, TaskId: id, ContextId: "ctx-" + id,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "do " + id}}}}
	if old, err := s.PutMessage(ctx, evictScope, &taskstore.MessageRecord{MessageID: msg.MessageId, Digest: "d",
		TaskID: id, Created: at}); err != nil || old != nil {
		t.Fatalf("PutMessage(%s): %v, %v", msg.MessageId, old, err)
	}
	tk := &a2a.Task{Id: id, ContextId: "ctx-" + id, History: []*a2a.Message{msg},
		Status: &a2a.TaskStatus{State: submitted, Timestamp: timestamppb.New(at)}}
	cfg := &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: "cfg", TaskId: id, Url: "https://example.test/hook"}}
	evs := []taskstore.Event{
		{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}, PushConfig: cfg, Push: true},
	}
	if st != submitted {
		evs = append(evs, taskstore.Event{Seq: 2, Response: statusEvent(id, st, at), Push: true})
	}
	if err := s.CreateTaskBatch(ctx, evictScope, tk, evs); err != nil {
		t.Fatalf("CreateTaskBatch(%s): %v", id, err)
	}
}

// setState appends a status update moving task id to st.
func setState(t *testing.T, s *memstore.Store, id string, ms int, st a2a.TaskState) {
	t.Helper()
	seq, err := s.LastSeq(t.Context(), evictScope, id)
	if err != nil {
		t.Fatal(err)
	}
	ev := taskstore.Event{Seq: seq + 1, Response: statusEvent(id, st, evictBase.Add(time.Duration(ms)*time.Millisecond))}
	if err := s.Append(t.Context(), evictScope, id, ev); err != nil {
		t.Fatalf("Append(%s, %v): %v", id, st, err)
	}
}

// kept returns the ids ListTasks returns, newest first, and checks that
// its total agrees.
func kept(t *testing.T, s *memstore.Store, q taskstore.ListQuery) []string {
	t.Helper()
	q.Limit = 1000
	res, err := s.ListTasks(t.Context(), evictScope, q)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res.Tasks))
	for i, tk := range res.Tasks {
		ids[i] = tk.GetId()
	}
	if res.Total != len(ids) {
		t.Errorf("ListTasks(%+v): total %d, %d tasks", q, res.Total, len(ids))
	}
	return ids
}

// wantGone checks that nothing of task id is left: the task, its events,
// its push configurations and notifications, its places in the
// indexes; and that the record of the message that made it is marked.
func wantGone(t *testing.T, s *memstore.Store, id string) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.GetTask(ctx, evictScope, id); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("GetTask(%s) = %v, want ErrNotFound", id, err)
	}
	if _, err := s.Events(ctx, evictScope, id, 0, 0); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("Events(%s) = %v, want ErrNotFound", id, err)
	}
	if _, err := s.ListPushConfigs(ctx, evictScope, id); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("ListPushConfigs(%s) = %v, want ErrNotFound", id, err)
	}
	if targets, err := s.PushTargets(ctx, id); err != nil || len(targets) != 0 {
		t.Errorf("PushTargets(%s) = %v, %v, want none", id, targets, err)
	}
	if got := kept(t, s, taskstore.ListQuery{ContextID: "ctx-" + id}); len(got) != 0 {
		t.Errorf("ListTasks of its context: %v, want none", got)
	}
	rec, err := s.GetMessage(ctx, evictScope, "m-"+id)
	if err != nil || !rec.TaskEvicted {
		t.Errorf("record of m-%s: %+v, %v, want one marked TaskEvicted", id, rec, err)
	}
}

func wantKept(t *testing.T, s *memstore.Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.GetTask(t.Context(), evictScope, id); err != nil {
			t.Errorf("GetTask(%s): %v", id, err)
		}
		if rec, err := s.GetMessage(t.Context(), evictScope, "m-"+id); err != nil || rec.TaskEvicted {
			t.Errorf("record of m-%s: %+v, %v, want one not marked", id, rec, err)
		}
	}
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestMaxTasksEvictsOldestFinished: with MaxTasks 3, each new task past
// three evicts the finished task that became terminal first, whatever its
// terminal state, with its events, push configurations, queued
// notifications and index entries; the counts follow.
func TestMaxTasksEvictsOldestFinished(t *testing.T) {
	s := memstore.NewWith(&memstore.Options{MaxTasks: 3})
	create(t, s, "a", 1, completed)
	create(t, s, "b", 2, failed)
	create(t, s, "c", 3, canceled)
	depth, _ := s.OutboxDepth(t.Context())
	if depth != 6 {
		t.Fatalf("outbox depth %d, want 6 (two events of three tasks)", depth)
	}
	create(t, s, "d", 4, rejected)
	wantGone(t, s, "a")
	wantKept(t, s, "b", "c", "d")
	if got := kept(t, s, taskstore.ListQuery{}); !equal(got, []string{"d", "c", "b"}) {
		t.Errorf("ListTasks: %v, want [d c b]", got)
	}
	if got := kept(t, s, taskstore.ListQuery{State: completed}); len(got) != 0 {
		t.Errorf("ListTasks COMPLETED: %v, want none", got)
	}
	if depth, _ := s.OutboxDepth(t.Context()); depth != 6 {
		t.Errorf("outbox depth %d, want 6: a's two rows gone, d's two queued", depth)
	}
	create(t, s, "e", 5, completed)
	create(t, s, "f", 6, completed)
	wantGone(t, s, "b")
	wantGone(t, s, "c")
	if got := kept(t, s, taskstore.ListQuery{}); !equal(got, []string{"f", "e", "d"}) {
		t.Errorf("ListTasks: %v, want [f e d]", got)
	}
	if got := kept(t, s, taskstore.ListQuery{State: completed}); !equal(got, []string{"f", "e"}) {
		t.Errorf("ListTasks COMPLETED: %v, want [f e]", got)
	}
}

// TestMaxTasksKeepsActiveTasks: a task that is not terminal is never
// evicted; with none finished, the store grows past the bound, and a new
// task evicts every finished one while it is past it.
func TestMaxTasksKeepsActiveTasks(t *testing.T) {
	s := memstore.NewWith(&memstore.Options{MaxTasks: 2})
	create(t, s, "s", 1, submitted)
	create(t, s, "w", 2, working)
	create(t, s, "i", 3, inputRequired)
	create(t, s, "u", 4, authRequired)
	if got := kept(t, s, taskstore.ListQuery{}); len(got) != 4 {
		t.Fatalf("ListTasks: %v, want all four active tasks past the bound", got)
	}
	create(t, s, "x", 5, completed)
	setState(t, s, "w", 6, completed)
	create(t, s, "y", 7, working) // evicts x and w, the finished ones
	wantGone(t, s, "x")
	wantGone(t, s, "w")
	wantKept(t, s, "s", "i", "u", "y")
	create(t, s, "z", 8, working) // nothing finished to evict
	if got := kept(t, s, taskstore.ListQuery{}); len(got) != 5 {
		t.Errorf("ListTasks: %v, want five active tasks", got)
	}
	if got, err := s.ListActive(t.Context()); err != nil || len(got) != 3 {
		t.Errorf("ListActive: %d tasks, %v, want the three SUBMITTED or WORKING", len(got), err)
	}
}

// TestMaxTasksEvictsInOrderOfFinishing: finished tasks go in the order
// they became terminal, not the order they were made.
func TestMaxTasksEvictsInOrderOfFinishing(t *testing.T) {
	s := memstore.NewWith(&memstore.Options{MaxTasks: 2})
	create(t, s, "a", 1, working)
	create(t, s, "b", 2, completed)
	setState(t, s, "a", 3, completed)
	create(t, s, "c", 4, completed) // evicts b, which finished before a
	wantGone(t, s, "b")
	wantKept(t, s, "a", "c")
	create(t, s, "d", 5, completed)
	wantGone(t, s, "a")
	wantKept(t, s, "c", "d")
}

// TestMaxTasksMarksFollowUps: the records of follow-up messages, recorded
// after the task was made, are marked with the task's eviction too;
// records naming other tasks are not.
func TestMaxTasksMarksFollowUps(t *testing.T) {
	ctx := t.Context()
	s := memstore.NewWith(&memstore.Options{MaxTasks: 1})
	create(t, s, "a", 1, inputRequired)
	if _, err := s.PutMessage(ctx, evictScope, &taskstore.MessageRecord{MessageID: "follow", Digest: "d", TaskID: "a", Created: evictBase}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessage(ctx, evictScope, &taskstore.MessageRecord{MessageID: "other", Digest: "d", TaskID: "nope", Created: evictBase}); err != nil {
		t.Fatal(err)
	}
	setState(t, s, "a", 2, completed)
	create(t, s, "b", 3, completed)
	wantGone(t, s, "a")
	for id, want := range map[string]bool{"follow": true, "other": false} {
		if rec, err := s.GetMessage(ctx, evictScope, id); err != nil || rec.TaskEvicted != want {
			t.Errorf("record %s: %+v, %v, want TaskEvicted %v", id, rec, err, want)
		}
	}
}

// TestMaxTasksNegativeKeepsAll: a negative MaxTasks sets no bound.
func TestMaxTasksNegativeKeepsAll(t *testing.T) {
	s := memstore.NewWith(&memstore.Options{MaxTasks: -1})
	for i := range 50 {
		create(t, s, fmt.Sprint("t", i), i, completed)
	}
	if got := kept(t, s, taskstore.ListQuery{}); len(got) != 50 {
		t.Errorf("ListTasks: %d tasks, want 50", len(got))
	}
}

// TestMaxTasksWithRetentionAndPruning: eviction, DeleteFinished and
// PruneEvents interleaved keep the store consistent: every task left is
// readable, the counts agree, and the bound holds.
func TestMaxTasksWithRetentionAndPruning(t *testing.T) {
	ctx := t.Context()
	s := memstore.NewWith(&memstore.Options{MaxTasks: 10})
	for i := range 500 {
		st := completed
		if i%7 == 0 {
			st = working
		}
		create(t, s, fmt.Sprint("t", i), i, st)
		if i%7 == 0 && i >= 21 {
			setState(t, s, fmt.Sprint("t", i-21), i, completed) // the active ones finish later
		}
		switch i % 50 {
		case 17:
			if _, err := s.DeleteFinished(ctx, evictBase.Add(time.Duration(i-5)*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		case 33:
			if _, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := kept(t, s, taskstore.ListQuery{})
	active := 0
	for _, id := range all {
		tk, err := s.GetTask(ctx, evictScope, id)
		if err != nil {
			t.Fatalf("GetTask(%s): %v", id, err)
		}
		if !a2a.IsTerminal(tk.GetStatus().GetState()) {
			active++
		}
	}
	if len(all) > max(10, active+1) {
		t.Errorf("%d tasks kept (%d active), want at most 10", len(all), active)
	}
	if active != 3 { // t483, t490, t497: not yet finished
		t.Errorf("%d active tasks kept, want 3", active)
	}
}

// TestMaxTasksHeapFlat: with a bound, what the store holds stays the
// same whether 2,000 or 20,000 finished tasks went through it.
func TestMaxTasksHeapFlat(t *testing.T) {
	heapAfter := func(n int) uint64 {
		s := memstore.NewWith(&memstore.Options{MaxTasks: 1000})
		for i := range n {
			fillTask(t, s, i)
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		runtime.KeepAlive(s)
		return m.HeapAlloc
	}
	small, large := heapAfter(2000), heapAfter(20000)
	// Unbounded, the 18,000 more tasks would hold several MiB.
	if large > small+1<<20 {
		t.Errorf("live heap %d B after 20,000 tasks, %d B after 2,000: not flat", large, small)
	}
}

// fillTask stores a finished task as a blocking SendMessage leaves it.
func fillTask(t testing.TB, s *memstore.Store, i int) {
	tk := benchTask(i)
	tk.Status.State = submitted
	id := tk.Id
	evs := []taskstore.Event{
		{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}},
		{Seq: 2, Response: statusEvent(id, working, time.Now())},
		{Seq: 3, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: id, ContextId: tk.ContextId, Artifact: a2a.TextArtifact("echo", "the answer to "+id)}}}},
		{Seq: 4, Response: statusEvent(id, completed, time.Now())},
	}
	if err := s.CreateTaskBatch(context.Background(), benchScope, tk, evs); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceUnbounded runs the store suite without a bound.
func TestConformanceUnbounded(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store { return memstore.NewWith(&memstore.Options{MaxTasks: -1}) })
}

// BenchmarkCreateBounded is BenchmarkHeapPerFinishedTask's blocking send
// into a store at its bound of 1,000 tasks: each new task evicts one.
func BenchmarkCreateBounded(b *testing.B) {
	s := memstore.NewWith(&memstore.Options{MaxTasks: 1000})
	for i := range 1000 {
		fillTask(b, s, i)
	}
	b.ReportAllocs()
	i := 1000
	for b.Loop() {
		fillTask(b, s, i)
		i++
	}
}
