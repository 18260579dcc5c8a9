package pgstore

import (
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/timelinetest"
)

// TestPruneClockSetBack: a wall clock set back stamps a row of a task's
// log older than the row before it; PruneEvents still prunes the log from
// its start, so the timeline base folds it in order and the base and the
// log read as the whole log's timeline: a last row of several events so
// stamped is trimmed once no row is left before it, not while a row
// before it is kept.
func TestPruneClockSetBack(t *testing.T) {
	_, conn, s := migratedStore(t)
	defer s.Close()
	ctx := t.Context()
	status := func(text string) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "set-back", ContextId: "c",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: a2a.UserMessage(text)}}}}
	}
	tk := &a2a.Task{Id: "set-back", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	all := []*a2a.StreamResponse{{Payload: &a2a.StreamResponse_Task{Task: tk}}}
	if err := s.CreateTask(ctx, scope, tk, taskstore.Event{Seq: 1, Response: all[0]}); err != nil {
		t.Fatal(err)
	}
	all = append(all, status("at 200"))
	if err := s.Append(ctx, scope, "set-back", taskstore.Event{Seq: 2, Response: all[1]}); err != nil {
		t.Fatal(err)
	}
	run := []*a2a.StreamResponse{status("at 150, 1"), status("at 150, 2"), status("at 150, 3")}
	var batch []taskstore.Event
	for i, r := range run {
		batch = append(batch, taskstore.Event{Seq: uint64(3 + i), Response: r})
	}
	if err := s.AppendBatch(ctx, scope, "set-back", batch); err != nil {
		t.Fatal(err)
	}
	all = append(all, run...)
	// The rows as a clock set back between the second and the last would
	// have stamped them.
	if _, err := conn.Exec(ctx, `UPDATE task_events SET created_ms = CASE seq WHEN 1 THEN 100000 WHEN 2 THEN 200000 ELSE 150000 END
		WHERE task_id = 'set-back'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PruneEvents(ctx, time.UnixMilli(160000)); err != nil {
		t.Fatal(err)
	}
	timelinetest.Check(t, s, scope, "after a prune between the rows' times", "set-back", all)
	if _, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	timelinetest.Check(t, s, scope, "pruned to its last event", "set-back", all)
}
