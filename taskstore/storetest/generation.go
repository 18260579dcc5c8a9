package storetest

import (
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

func init() {
	taskChecks = append(taskChecks, check[TaskStore]{"Generation", testGeneration})
}

// testGeneration: GetTask and ListTasks report a task's generation (the
// A2A 1.1 preview, spec §3.2.7), the generation of the sequence number of
// its last event (taskstore.Generation), read with the task, through every
// write: a creation with events, Append, AppendBatch, a message without an
// event (no change), a Task event that replaces the task, and a task
// finished (which a store may keep otherwise).
func testGeneration(t *testing.T, s TaskStore) {
	ctx := t.Context()
	const id = "gen"
	want := func(what string, seq uint64) {
		t.Helper()
		g := taskstore.Generation(seq)
		got, err := s.GetTask(ctx, scopeA, id)
		if err != nil {
			t.Fatalf("%s: GetTask: %v", what, err)
		}
		if got.GetGeneration() != g {
			t.Errorf("%s: GetTask generation %d, want %d", what, got.GetGeneration(), g)
		}
		res, err := s.ListTasks(ctx, scopeA, taskstore.ListQuery{Limit: 10})
		if err != nil {
			t.Fatalf("%s: ListTasks: %v", what, err)
		}
		for _, tk := range res.Tasks {
			if tk.GetId() == id && tk.GetGeneration() != g {
				t.Errorf("%s: ListTasks generation %d, want %d", what, tk.GetGeneration(), g)
			}
		}
	}

	tk := task(id, "c", submitted, at(1))
	evs := []taskstore.Event{{Seq: 1, Response: snapshotEvent(tk)}, statusAt(id, 2, working, at(2)),
		{Seq: 3, Response: chunk(id, "a", false, "x")}}
	if err := s.CreateTaskBatch(ctx, scopeA, tk, evs); err != nil {
		t.Fatalf("CreateTaskBatch: %v", err)
	}
	want("after CreateTaskBatch of three events", 3)
	if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: 4, Response: chunk(id, "a", true, "y")}); err != nil {
		t.Fatalf("Append chunk: %v", err)
	}
	want("after an appended chunk", 4)
	batch := []taskstore.Event{{Seq: 5, Response: chunk(id, "b", false, "z")}, statusAt(id, 6, working, at(4))}
	if err := s.AppendBatch(ctx, scopeA, id, batch); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	want("after AppendBatch", 6)
	if err := s.Append(ctx, scopeA, id, taskstore.Event{Message: message("follow", id, "c", "more")}); err != nil {
		t.Fatalf("Append message: %v", err)
	}
	want("after a message without an event", 6)
	snap := mustGet(t, s, scopeA, id)
	snap.Status = &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}
	if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: 7, Response: snapshotEvent(snap)}); err != nil {
		t.Fatalf("Append Task: %v", err)
	}
	want("after a Task event", 7)
	if err := s.Append(ctx, scopeA, id, statusAt(id, 8, a2a.TaskState_TASK_STATE_COMPLETED, at(5))); err != nil {
		t.Fatalf("Append terminal status: %v", err)
	}
	want("after the task finished", 8)
}
