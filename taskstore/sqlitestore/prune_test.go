package sqlitestore

import (
	"fmt"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/timelinetest"
)

// clockedStore opens a store whose clock is set by at, to sec seconds
// after epoch.
func clockedStore(t *testing.T) (s *Store, at func(sec int)) {
	s = openTemp(t)
	clock := epoch
	s.now = func() time.Time { return clock }
	return s, func(sec int) { clock = epoch.Add(time.Duration(sec) * time.Second) }
}

// TestPruneByMark: PruneEvents finds the tasks with events to prune by
// their mark, removes what was logged before the cut but each task's last
// event, and sets the mark again from what is left, so a task is pruned
// again once it has logged more; batches go on until no task is left.
func TestPruneByMark(t *testing.T) {
	s, at := clockedStore(t)
	defer s.Close()
	ctx := t.Context()
	status := func(id string, seq uint64) taskstore.Event {
		return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
			StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}}
	}
	created := func(id string) taskstore.Event {
		return taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: newTask(id, a2a.TaskState_TASK_STATE_SUBMITTED, 0)}}}
	}
	mark := func(id string) (ms *int64) {
		t.Helper()
		if err := s.reader.QueryRowContext(ctx, `SELECT prune_ms FROM tasks WHERE id = ?`, id).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	logged := func(id string) int {
		t.Helper()
		var n int
		if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM task_events WHERE task_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	prune := func(sec float64, want int) {
		t.Helper()
		n, err := s.PruneEvents(ctx, epoch.Add(time.Duration(sec*float64(time.Second))))
		if err != nil || n != want {
			t.Fatalf("PruneEvents(%vs) = %d, %v; want %d", sec, n, err, want)
		}
	}

	at(1)
	must(t, s.CreateTask(ctx, scope, newTask("task-a", a2a.TaskState_TASK_STATE_SUBMITTED, 0), created("task-a")))
	must(t, s.CreateTask(ctx, scope, newTask("task-b", a2a.TaskState_TASK_STATE_SUBMITTED, 0), created("task-b")))
	if mark("task-a") != nil || mark("task-b") != nil {
		t.Fatal("a task with one event has a pruning mark")
	}
	at(2)
	must(t, s.Append(ctx, scope, "task-a", status("task-a", 2)))
	if m := mark("task-a"); m == nil || *m != epoch.Add(time.Second).UnixMilli() {
		t.Fatalf("mark after a second event = %v, want the first event's time", m)
	}
	must(t, s.CreateTaskBatch(ctx, scope, newTask("task-c", a2a.TaskState_TASK_STATE_SUBMITTED, 0),
		[]taskstore.Event{created("task-c"), status("task-c", 2), status("task-c", 3)}))
	at(3)
	must(t, s.Append(ctx, scope, "task-a", status("task-a", 3)))

	prune(0.5, 0)
	prune(2.5, 4) // task-a's events 1 and 2, task-c's 1 and 2
	if got := []int{logged("task-a"), logged("task-b"), logged("task-c")}; fmt.Sprint(got) != "[1 1 1]" {
		t.Fatalf("events left %v, want each task's last", got)
	}
	for _, id := range []string{"task-a", "task-b", "task-c"} {
		if mark(id) != nil {
			t.Errorf("%s keeps a pruning mark with only its last event", id)
		}
	}
	at(4)
	must(t, s.Append(ctx, scope, "task-a", status("task-a", 4)))
	prune(3.5, 1) // task-a's event 3, the last until now
	prune(10, 0)
	if got := logged("task-a"); got != 1 {
		t.Fatalf("task-a has %d events, want 1", got)
	}

	// More tasks than one batch holds: every one is pruned in one call.
	at(5)
	for i := range deleteBatch + 3 {
		id := fmt.Sprintf("many-%04d", i)
		must(t, s.CreateTaskBatch(ctx, scope, newTask(id, a2a.TaskState_TASK_STATE_SUBMITTED, 0),
			[]taskstore.Event{created(id), status(id, 2)}))
	}
	prune(6, deleteBatch+3)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneClockSetBack: a wall clock set back stamps an event older than
// the one before it; PruneEvents still prunes a task's log from its
// start (that event goes with the ones before it), never leaving an
// event kept before one removed, so the timeline base folds the log in
// order and the base and the log read as the whole log's timeline: a row
// of one event logged after the clock went back, and a last row of
// several events so logged, trimmed with every row before it gone. The
// task is not left marked for a prune that removes nothing.
func TestPruneClockSetBack(t *testing.T) {
	s, at := clockedStore(t)
	defer s.Close()
	ctx := t.Context()
	status := func(id string, text string) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "c",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: a2a.UserMessage(text)}}}}
	}
	logs := map[string][]*a2a.StreamResponse{}
	create := func(id string) {
		tk := newTask(id, a2a.TaskState_TASK_STATE_SUBMITTED, 0)
		ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}
		must(t, s.CreateTask(ctx, scope, tk, taskstore.Event{Seq: 1, Response: ev}))
		logs[id] = []*a2a.StreamResponse{ev}
	}
	add := func(id string, evs ...*a2a.StreamResponse) {
		var batch []taskstore.Event
		for _, ev := range evs {
			logs[id] = append(logs[id], ev)
			batch = append(batch, taskstore.Event{Seq: uint64(len(logs[id])), Response: ev})
		}
		must(t, s.AppendBatch(ctx, scope, id, batch))
	}
	at(100)
	create("one")
	create("last")
	at(200)
	add("one", status("one", "at 200"))
	add("last", status("last", "at 200"))
	at(150) // the clock set back
	add("one", status("one", "at 150"))
	add("last", status("last", "at 150, 1"), status("last", "at 150, 2"), status("last", "at 150, 3"))
	at(300)
	add("one", status("one", "at 300"))
	if _, err := s.PruneEvents(ctx, epoch.Add(160*time.Second)); err != nil {
		t.Fatal(err)
	}
	for id, all := range logs {
		timelinetest.Check(t, s, scope, "task "+id+" after the prune", id, all)
		var marked bool
		if err := s.reader.QueryRowContext(ctx, `SELECT prune_ms < ? FROM tasks WHERE id = ?`, epoch.Add(160*time.Second).UnixMilli(), id).Scan(&marked); err == nil && marked {
			t.Errorf("task %s is marked for a prune before the cut just made", id)
		}
	}
	if _, err := s.PruneEvents(ctx, epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for id, all := range logs {
		timelinetest.Check(t, s, scope, "task "+id+" pruned to its last event", id, all)
	}
}
