package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/eventbus"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// staleOrphans is a replica's lease whose orphan listing is out of date:
// it names tasks as they were before another replica ended them.
type staleOrphans struct{ listed []taskstore.ScopedTask }

func (l *staleOrphans) TTL() time.Duration                  { return time.Hour }
func (l *staleOrphans) Renew(context.Context) (bool, error) { return false, nil }
func (l *staleOrphans) ClaimMessage(context.Context, taskstore.Scope, string) (bool, error) {
	return false, nil
}
func (l *staleOrphans) Orphans(context.Context) ([]taskstore.ScopedTask, error) {
	listed := l.listed
	l.listed = nil
	return listed, nil
}

// TestReapSkipsTasksEndedMeanwhile: a dead replica's task, listed as an
// orphan WORKING, was ended FAILED by another replica before this one
// wrote: this one writes nothing, so the log ends with one terminal event.
func TestReapSkipsTasksEndedMeanwhile(t *testing.T) {
	st := memstore.New()
	sc := taskstore.Scope{}
	working := &a2a.Task{Id: a2a.NewID(), ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
	if err := st.CreateTask(t.Context(), sc, working, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: working}}}); err != nil {
		t.Fatal(err)
	}
	listed := []taskstore.ScopedTask{{Scope: sc, Task: proto.Clone(working).(*a2a.Task)}}
	failed := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: working.Id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_FAILED, Timestamp: a2a.Timestamp(time.Now())}}}}
	if err := st.Append(t.Context(), sc, working.Id, taskstore.Event{Seq: 2, Response: failed}); err != nil {
		t.Fatal(err)
	}
	// The replica looks for orphans as it starts.
	newServer(t, server.Options{Store: st, Cluster: &server.Cluster{Bus: &eventbus.Local{}, Leases: &staleOrphans{listed: listed}}})
	if seq, err := st.LastSeq(t.Context(), sc, working.Id); err != nil || seq != 2 {
		t.Fatalf("the task's log ends at event %d (%v), want 2: an event after its FAILED", seq, err)
	}
}
