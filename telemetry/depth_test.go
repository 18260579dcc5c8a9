package telemetry_test

import (
	"context"
	"path/filepath"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// The stores count their outbox for parley.push.outbox.depth: each event
// queued for a config is one row until it is delivered (DeletePush).
func TestOutboxDepth(t *testing.T) {
	sq, err := sqlitestore.Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	for _, st := range []struct {
		name  string
		store taskstore.Store
	}{{"memstore", memstore.New()}, {"sqlitestore", sq}} {
		t.Run(st.name, func(t *testing.T) {
			ctx, sc := context.Background(), taskstore.Scope{}
			d := st.store.(interface {
				OutboxDepth(context.Context) (int64, error)
			})
			depth := func() int64 {
				t.Helper()
				n, err := d.OutboxDepth(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			task := &a2a.Task{Id: "t-" + st.name, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
			ev := func(seq uint64) taskstore.Event {
				return taskstore.Event{Seq: seq, Push: true, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: task}}}
			}
			if err := st.store.CreateTask(ctx, sc, task, taskstore.Event{Seq: 1, Response: ev(1).Response}); err != nil {
				t.Fatal(err)
			}
			if n := depth(); n != 0 {
				t.Fatalf("depth %d before any config", n)
			}
			cfg := &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskId: task.Id, Id: "cfg", Url: "https://example.com/hook"}}
			if err := st.store.PutPushConfig(ctx, sc, cfg, ev(1)); err != nil {
				t.Fatal(err)
			}
			if err := st.store.Append(ctx, sc, task.Id, ev(2)); err != nil {
				t.Fatal(err)
			}
			if n := depth(); n != 2 {
				t.Fatalf("depth %d, want 2 (the snapshot and the update)", n)
			}
			rows, err := st.store.PendingPush(ctx, taskstore.PushTarget{Scope: sc, TaskID: task.Id, ConfigID: "cfg"}, 10)
			if err != nil || len(rows) != 2 {
				t.Fatalf("PendingPush: %d rows, %v", len(rows), err)
			}
			if err := st.store.DeletePush(ctx, rows[0].ID); err != nil {
				t.Fatal(err)
			}
			if n := depth(); n != 1 {
				t.Errorf("depth %d after one delivery, want 1", n)
			}
		})
	}
}
