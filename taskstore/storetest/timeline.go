package storetest

import (
	"fmt"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/timelinetest"
)

// testTimelineOfPrunedLog: PruneEvents keeps what the events it removes
// say of the task's timeline in the task's base (taskstore.Fold):
// after each prune (of rows of one event, of batches, of a last row
// trimmed to its last event) the base and the events kept read as the
// timeline of the whole log, and a prune that removes nothing changes
// nothing. TimelineBase is nil before any prune, and ErrNotFound for a
// task not in the scope.
func testTimelineOfPrunedLog(t *testing.T, s TaskStore) {
	ctx := t.Context()
	b := batcher(t, s)
	tk := task("tl", "c", submitted, at(1))
	tk.History = []*a2a.Message{{MessageId: "m-1", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{text("hi")}}}
	all := []*a2a.StreamResponse{snapshotEvent(tk)}
	if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: all[0]}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if tb, err := s.TimelineBase(ctx, scopeA, "tl"); err != nil || tb != nil {
		t.Errorf("TimelineBase before any prune = %x, %v; want nil", tb, err)
	}
	_, err := s.TimelineBase(ctx, scopeB, "tl")
	wantErr(t, "TimelineBase in another scope", err, taskstore.ErrNotFound)
	_, err = s.TimelineBase(ctx, scopeA, "none")
	wantErr(t, "TimelineBase of no task", err, taskstore.ErrNotFound)

	appendOne := func(ev taskstore.Event) {
		t.Helper()
		ev.Seq = uint64(len(all) + 1)
		if err := s.Append(ctx, scopeA, "tl", ev); err != nil {
			t.Fatalf("Append %d: %v", ev.Seq, err)
		}
		all = append(all, ev.Response)
	}
	appendRun := func(evs ...*a2a.StreamResponse) {
		t.Helper()
		if err := b.AppendBatch(ctx, scopeA, "tl", numbered(uint64(len(all)+1), evs...)); err != nil {
			t.Fatalf("AppendBatch: %v", err)
		}
		all = append(all, evs...)
	}
	status := func(st a2a.TaskState, msg string) taskstore.Event {
		ev := statusAt("tl", 0, st, at(len(all)+1))
		if msg != "" {
			ev.Response.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: fmt.Sprint("m-", len(all)+1),
				Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text(msg)}}
		}
		return ev
	}
	prune := func(what string) {
		t.Helper()
		if _, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("PruneEvents %s: %v", what, err)
		}
		timelinetest.Check(t, s, scopeA, what, "tl", all)
	}

	// A turn: WORKING, artifact a streamed in a batch, INPUT_REQUIRED.
	appendOne(status(working, ""))
	var run []*a2a.StreamResponse
	for i := range 50 {
		run = append(run, chunk("tl", "a", i > 0, fmt.Sprint("chunk ", i)))
	}
	run[len(run)-1].GetArtifactUpdate().LastChunk = true
	appendRun(run...)
	appendOne(status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "more?"))
	prune("after the first turn")

	// The follow-up, progress, two artifacts logged in one row, which is
	// the task's last: pruned to its last event.
	follow := &a2a.Message{MessageId: "m-follow", Role: a2a.Role_ROLE_USER, TaskId: "tl", Parts: []*a2a.Part{text("go on")}}
	appendOne(taskstore.Event{Response: taskstore.ClientMessage(follow), Message: follow})
	appendOne(status(working, "progress"))
	appendRun(chunk("tl", "b", false, "b"), chunk("tl", "a", false, "a again"))
	prune("after the follow-up")

	appendOne(status(completed, "done"))
	prune("after the end")
	prune("again, with nothing to remove")
}
