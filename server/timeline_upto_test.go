package server_test

import (
	"context"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// TestTimelineOfABasePastTheAnswer: an answer made at a generation that a
// prune outran before its timeline was read (the base past it) gets the
// entries up to its generation, and an artifact that streamed then no
// end, though the base ends it later.
func TestTimelineOfABasePastTheAnswer(t *testing.T) {
	ctx := t.Context()
	store := memstore.New()
	s, err := server.New(&server.Options{Store: store, Agent: server.AgentFunc(func(context.Context, *server.Request, *server.Emitter) error { return nil }), Card: testCard(false, false)})
	if err != nil {
		t.Fatal(err)
	}
	sc := taskstore.Scope{}
	tk := &a2a.Task{Id: "t", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := store.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	status := func(st a2a.TaskState) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t", ContextId: "c",
			Status: &a2a.TaskStatus{State: st}}}}
	}
	chunk := func(last bool) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "t", ContextId: "c",
			Append: true, LastChunk: last, Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart("x")}}}}}
	}
	for i, r := range []*a2a.StreamResponse{status(a2a.TaskState_TASK_STATE_WORKING), chunk(false), chunk(false), // 2-4: the answer's
		chunk(true), status(a2a.TaskState_TASK_STATE_WORKING), status(a2a.TaskState_TASK_STATE_WORKING)} { // 5-7: after it
		if err := store.Append(ctx, sc, "t", taskstore.Event{Seq: uint64(i + 2), Response: r}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	tl, err := s.ReadTimeline(ctx, sc, "t", 4)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tl.Entries); n != 1 || tl.Entries[0].Generation != 2 {
		t.Errorf("entries %v, want the status at 2", tl.Entries)
	}
	if sp := tl.Span("a"); sp != (taskstore.Span{Start: 3}) {
		t.Errorf("artifact a at generation 4: span %+v, want {3 0} (it streamed then)", sp)
	}
}
