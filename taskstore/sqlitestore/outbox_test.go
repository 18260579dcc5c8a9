package sqlitestore

import (
	"database/sql"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestUpgradeToOutbox opens a schema version 1 file (before the push
// outbox): its tasks and configurations are kept and the outbox works.
func TestUpgradeToOutbox(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	tk := newTask("task-1", a2a.TaskState_TASK_STATE_WORKING, 1)
	data, _ := proto.Marshal(tk)
	cfg := &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "task-1", Url: "https://h.example/p"}
	cdata, _ := proto.Marshal(cfg)
	stmts := append(append([]string(nil), migrations[0]...), "PRAGMA user_version = 1")
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data) VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
		tk.Id, scope.Tenant, scope.Owner, tk.ContextId, int32(tk.Status.State), 1, data); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO push_configs (tenant, owner, task_id, id, data) VALUES (?, ?, ?, ?, ?)`,
		scope.Tenant, scope.Owner, tk.Id, cfg.Id, cdata); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version 1 file: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
	if got, err := s.GetPushConfig(ctx, scope, tk.Id, "p"); err != nil || !proto.Equal(got, cfg) {
		t.Fatalf("config after upgrade = %v, %v", got, err)
	}
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: tk.Id, ContextId: tk.ContextId,
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}}}
	if err := s.Append(ctx, scope, tk.Id, taskstore.Event{Seq: 2, Response: ev, Push: true}); err != nil {
		t.Fatal(err)
	}
	ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: scope, TaskID: tk.Id, ConfigID: "p"}, 10)
	if err != nil || len(ns) != 1 || !proto.Equal(ns[0].Event, ev) {
		t.Fatalf("outbox after upgrade: %v, %v; want the event", ns, err)
	}
}
