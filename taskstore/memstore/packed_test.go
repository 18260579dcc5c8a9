package memstore

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestFinishedTaskPacked: a task is kept encoded once terminal, decoded
// for a write and encoded again after it, and reads see it whole.
func TestFinishedTaskPacked(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	tk := &a2a.Task{Id: "t1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING},
		History: []*a2a.Message{{MessageId: "m1", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hi"}}}}}}
	want := proto.Clone(tk).(*a2a.Task)
	created := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(tk).(*a2a.Task)}}
	done := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "t1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}}}
	if err := s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: created}, {Seq: 2, Response: done}}); err != nil {
		t.Fatal(err)
	}
	taskstore.Apply(want, done)
	e := s.tasks["t1"]
	if e.task != nil || e.packed == nil || e.log[0].resp != nil || e.log[1].resp != nil {
		t.Fatalf("a completed task is not packed: task %v, %d bytes, log %+v", e.task != nil, len(e.packed), e.log)
	}
	check := func(what string) {
		t.Helper()
		got, err := s.GetTask(t.Context(), sc, "t1")
		if err != nil {
			t.Fatal(err)
		}
		want.Generation = taskstore.Generation(e.seq)
		if !proto.Equal(want, got) {
			t.Errorf("%s: GetTask = %v, want %v", what, got, want)
		}
		evs, err := s.Events(t.Context(), sc, "t1", 0, 0)
		if err != nil || len(evs) != int(e.seq) {
			t.Fatalf("%s: Events = %d events, %v; want %d", what, len(evs), err, e.seq)
		}
		if !proto.Equal(done, evs[1].Response) {
			t.Errorf("%s: logged event 2 = %v, want %v", what, evs[1].Response, done)
		}
	}
	check("packed")
	more := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: "t1", ContextId: "c", Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "late"}}}}}}}
	if err := s.Append(t.Context(), sc, "t1", taskstore.Event{Seq: 3, Response: more}); err != nil {
		t.Fatal(err)
	}
	taskstore.Apply(want, more)
	if e.task != nil || e.log[2].resp != nil {
		t.Error("a write to a finished task left it unpacked")
	}
	check("after a write")
}
