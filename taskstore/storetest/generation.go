package storetest

import (
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

func init() {
	taskChecks = append(taskChecks, check[TaskStore]{"Generation", testGeneration})
}

// testGeneration: a task's generation (the A2A 1.1 preview, spec §3.2.7)
// is the one its last applied event carried, through every write (a
// creation with events, Append, AppendBatch, a message without an event,
// a Task event, an event without a generation), and GetTask, ListTasks,
// ListActive and the logged events give it back.
func testGeneration(t *testing.T, s TaskStore) {
	ctx := t.Context()
	const id = "gen"
	stamp := func(prev int64, ev *a2a.StreamResponse) *a2a.StreamResponse {
		taskstore.Stamp(prev, ev)
		return ev
	}
	want := func(what string, g int64) {
		t.Helper()
		if got := mustGet(t, s, scopeA, id).GetGeneration(); got != g {
			t.Errorf("%s: GetTask generation %d, want %d", what, got, g)
		}
		res := mustList(t, s, scopeA, taskstore.ListQuery{Limit: 10})
		for _, tk := range res.Tasks {
			if tk.GetId() == id && tk.GetGeneration() != g {
				t.Errorf("%s: ListTasks generation %d, want %d", what, tk.GetGeneration(), g)
			}
		}
	}

	tk := task(id, "c", submitted, at(1))
	tk.Generation = 1
	made := stamp(0, snapshotEvent(tk))
	toWorking := statusAt(id, 2, working, at(2))
	stamp(1, toWorking.Response)
	evs := []taskstore.Event{{Seq: 1, Response: made}, toWorking, {Seq: 3, Response: stamp(2, chunk(id, "a", false, "x"))}}
	if err := s.CreateTaskBatch(ctx, scopeA, tk, evs); err != nil {
		t.Fatalf("CreateTaskBatch: %v", err)
	}
	want("after CreateTaskBatch of three events", 3)

	if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: 4, Response: stamp(3, chunk(id, "a", true, "y"))}); err != nil {
		t.Fatalf("Append chunk: %v", err)
	}
	want("after an appended chunk", 4)
	st := statusAt(id, 5, working, at(3))
	stamp(4, st.Response)
	if err := s.Append(ctx, scopeA, id, st); err != nil {
		t.Fatalf("Append status: %v", err)
	}
	want("after a status update", 5)

	batch := []taskstore.Event{{Seq: 6, Response: stamp(5, chunk(id, "b", false, "z"))}, statusAt(id, 7, working, at(4)),
		{Seq: 8, Response: stamp(7, chunk(id, "a", false, "replaced"))}}
	stamp(6, batch[1].Response)
	if err := s.AppendBatch(ctx, scopeA, id, batch); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	want("after AppendBatch", 8)

	if err := s.Append(ctx, scopeA, id, taskstore.Event{Message: message("follow", id, "c", "more")}); err != nil {
		t.Fatalf("Append message: %v", err)
	}
	want("after a message without an event", 8)

	active, err := s.ListActive(ctx)
	if err != nil {
		t.Fatalf("ListActive: %v", err)
	}
	for _, a := range active {
		if a.Task.GetId() == id && a.Task.GetGeneration() != 8 {
			t.Errorf("ListActive generation %d, want 8", a.Task.GetGeneration())
		}
	}

	snap := mustGet(t, s, scopeA, id)
	snap.Status = &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}
	snap.Generation = 9
	if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: 9, Response: snapshotEvent(snap)}); err != nil {
		t.Fatalf("Append Task: %v", err)
	}
	want("after a Task event", 9)
	if err := s.Append(ctx, scopeA, id, statusAt(id, 10, a2a.TaskState_TASK_STATE_COMPLETED, at(5))); err != nil {
		t.Fatalf("Append status without a generation: %v", err)
	}
	want("after an event without a generation", 9)

	logged := mustEvents(t, s, id, 0, 0)
	for i, ev := range logged[:len(logged)-1] {
		if g := taskstore.GenerationOf(ev.Response); g != int64(i+1) {
			t.Errorf("logged event %d carries generation %d, want %d", ev.Seq, g, i+1)
		}
	}
}
