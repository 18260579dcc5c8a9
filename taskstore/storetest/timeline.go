package storetest

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// testTimelineOfPrunedLog: PruneEvents keeps what the events it removes
// say of the task's timeline in the task's base (taskstore.FoldBase):
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
		wantTimeline(t, s, what, "tl", all)
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

// wantTimeline checks that the task's timeline base and its events kept
// read as the timeline of its whole log, all.
func wantTimeline(t *testing.T, s taskstore.Tasks, what, id string, all []*a2a.StreamResponse) {
	t.Helper()
	var want, got taskstore.Timeline
	for i, r := range all {
		want.Add(a2a.StreamEvent{Seq: uint64(i + 1), Response: r})
	}
	tb, err := s.TimelineBase(t.Context(), scopeA, id)
	if err != nil {
		t.Fatalf("%s: TimelineBase: %v", what, err)
	}
	after, err := got.Start(tb)
	if err != nil {
		t.Fatalf("%s: the base does not decode: %v", what, err)
	}
	for _, ev := range mustEvents(t, s, id, after, 0) {
		got.Add(ev)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%s: %d timeline entries (base to %d), want %d", what, len(got.Entries), after, len(want.Entries))
	}
	for i := range want.Entries {
		wantEqual(t, fmt.Sprintf("%s: entry %d", what, i), got.Entries[i], want.Entries[i])
	}
	if !maps.Equal(got.Spans, want.Spans) {
		t.Errorf("%s: artifact spans %v, want %v", what, got.Spans, want.Spans)
	}
}
