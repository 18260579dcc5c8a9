// Package timelinetest checks a task's timeline as a store keeps it
// across PruneEvents: its timeline base (taskstore.Fold) and the
// events after it must read as the timeline of the task's whole log. The
// store conformance tests and the SQL stores' migration tests use it.
package timelinetest

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Check fails t unless the timeline base of task id in sc and its events
// kept read as the timeline of all, the task's whole log.
func Check(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, what, id string, all []*a2a.StreamResponse) {
	t.Helper()
	var want, got taskstore.Timeline
	for i, r := range all {
		want.Add(a2a.StreamEvent{Seq: uint64(i + 1), Response: r})
	}
	tb, err := s.TimelineBase(t.Context(), sc, id)
	if err != nil {
		t.Fatalf("%s: TimelineBase: %v", what, err)
	}
	after, err := got.Start(tb)
	if err != nil {
		t.Fatalf("%s: the base does not decode: %v", what, err)
	}
	evs, err := s.Events(t.Context(), sc, id, after, 0)
	if err != nil {
		t.Fatalf("%s: Events after the base (%d): %v", what, after, err)
	}
	for _, ev := range evs {
		got.Add(ev)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%s: %d timeline entries (base to %d), want %d", what, len(got.Entries), after, len(want.Entries))
	}
	for i := range want.Entries {
		if !proto.Equal(got.Entries[i], want.Entries[i]) {
			t.Errorf("%s: entry %d = %v, want %v", what, i, got.Entries[i], want.Entries[i])
		}
	}
	if !maps.Equal(got.Spans, want.Spans) {
		t.Errorf("%s: artifact spans %v, want %v", what, got.Spans, want.Spans)
	}
}

// Write stores, in sc, a task of the id and its log, and returns the log:
// its creation, WORKING, an artifact streamed in n chunks (a batch, with
// them), a question, a client's follow-up (logged as the server logs it,
// with the message added to the history) and the end, numbered from 1.
func Write(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, id string, n int) []*a2a.StreamResponse {
	t.Helper()
	ctx := t.Context()
	status := func(st a2a.TaskState, text string) *a2a.StreamResponse {
		u := &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "c", Status: &a2a.TaskStatus{State: st}}
		if text != "" {
			u.Status.Message = &a2a.Message{MessageId: "m-" + text, Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{a2a.TextPart(text)}}
		}
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: u}}
	}
	tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED},
		History: []*a2a.Message{{MessageId: "m-" + id, Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("hi")}}}}
	log := []*a2a.StreamResponse{{Payload: &a2a.StreamResponse_Task{Task: tk}}}
	if err := s.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1, Response: log[0]}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	turn := []taskstore.Event{{Seq: 2, Response: status(a2a.TaskState_TASK_STATE_WORKING, "")}}
	for i := range n {
		turn = append(turn, taskstore.Event{Seq: uint64(i + 3), Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{
			ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: id, ContextId: "c", Append: i > 0, LastChunk: i == n-1,
				Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart(fmt.Sprint("chunk ", i))}}}}}})
	}
	turn = append(turn, taskstore.Event{Seq: uint64(n + 3), Response: status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "more?")})
	if err := s.AppendBatch(ctx, sc, id, turn); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	for _, ev := range turn {
		log = append(log, ev.Response)
	}
	follow := &a2a.Message{MessageId: "m-follow", Role: a2a.Role_ROLE_USER, TaskId: id, Parts: []*a2a.Part{a2a.TextPart("go on")}}
	for _, ev := range []taskstore.Event{{Response: taskstore.ClientMessage(follow), Message: follow},
		{Response: status(a2a.TaskState_TASK_STATE_COMPLETED, "done")}} {
		ev.Seq = uint64(len(log) + 1)
		if err := s.Append(ctx, sc, id, ev); err != nil {
			t.Fatalf("Append %d: %v", ev.Seq, err)
		}
		log = append(log, ev.Response)
	}
	return log
}

// PruneAndCheck prunes the log of task id, which Write made, to its last
// event, checks its timeline with Check, then removes the task (a finished
// one) with DeleteFinished.
func PruneAndCheck(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, what, id string, all []*a2a.StreamResponse) {
	t.Helper()
	ctx := t.Context()
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != len(all)-1 {
		t.Fatalf("%s: PruneEvents = %d, %v; want %d", what, n, err, len(all)-1)
	}
	Check(t, s, sc, what, id, all)
	if n, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("%s: DeleteFinished = %d, %v; want 1", what, n, err)
	}
}

// PruneLost prunes the log of task id, whose start a Parley before
// timeline bases pruned (no base kept it), to its last event, and fails t
// unless its base then reads as no timeline (taskstore.ErrTimelineLost)
// up to the event before its last, rather than a timeline without its
// start.
func PruneLost(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, what, id string, all []*a2a.StreamResponse) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("%s: PruneEvents: %v", what, err)
	}
	tb, err := s.TimelineBase(ctx, sc, id)
	if err != nil {
		t.Fatalf("%s: TimelineBase: %v", what, err)
	}
	var tl taskstore.Timeline
	if after, err := tl.Start(tb); !errors.Is(err, taskstore.ErrTimelineLost) || after != uint64(len(all)-1) {
		t.Errorf("%s: the base reads to %d, %v, %d entries; want to %d, ErrTimelineLost", what, after, err, len(tl.Entries), len(all)-1)
	}
}
