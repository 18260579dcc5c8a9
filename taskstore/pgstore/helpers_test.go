package pgstore

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

var scope = taskstore.Scope{Tenant: "t", Owner: "alice"}

// newTask returns a WORKING task whose status timestamp is ms
// milliseconds after a fixed instant.
func newTask(id string, ms int) *a2a.Task {
	return &a2a.Task{Id: id, ContextId: "ctx", Status: &a2a.TaskStatus{
		State:     a2a.TaskState_TASK_STATE_WORKING,
		Timestamp: timestamppb.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)),
	}}
}

// snapshot is the creation event of tk.
func snapshot(tk *a2a.Task) taskstore.Event {
	return taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}
}

// status is a status update event of task id to state.
func status(id string, seq uint64, state a2a.TaskState) taskstore.Event {
	return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
		StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "ctx", Status: &a2a.TaskStatus{State: state, Timestamp: timestamppb.Now()}},
	}}}
}
