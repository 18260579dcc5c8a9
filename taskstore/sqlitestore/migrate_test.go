package sqlitestore

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// v3Tasks are the tasks of the version 3 file TestUpgradeToV4 builds: one
// with everything (status message, history, two artifacts, metadata), one
// without a status, one plain, with the seq each had.
func v3Tasks(t *testing.T) map[string]*a2a.Task {
	meta, err := structpb.NewStruct(map[string]any{"k": "v", "n": 2.0})
	if err != nil {
		t.Fatal(err)
	}
	rich := newTask("rich-1", a2a.TaskState_TASK_STATE_INPUT_REQUIRED, 5)
	rich.Metadata = meta
	rich.Status.Message = &a2a.Message{MessageId: "m-s", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "more?"}}}}
	rich.History = append(rich.History, rich.Status.Message)
	rich.Artifacts = []*a2a.Artifact{
		{ArtifactId: "a", Name: "first", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "one"}}, {Content: &a2a.Part_Raw{Raw: []byte{0, 1}}}}},
		{ArtifactId: "b", Metadata: meta, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "two"}}}},
	}
	return map[string]*a2a.Task{
		"rich-1": rich,
		"bare-2": {Id: "bare-2", ContextId: "c"},
		"plain3": newTask("plain3", a2a.TaskState_TASK_STATE_COMPLETED, 9),
	}
}

// writeV3 writes a schema version 3 file at path with the version 3
// statements: the tasks (whole, in data, each with seq 7) and a push
// configuration of rich-1.
func writeV3(t *testing.T, path string, tasks map[string]*a2a.Task) {
	ctx := t.Context()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for v := range 3 {
		stmts = append(stmts, migrations[v]...)
	}
	for _, q := range append(stmts, "PRAGMA user_version = 3") {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for id, tk := range tasks {
		data, err := proto.Marshal(tk)
		if err != nil {
			t.Fatal(err)
		}
		var ms int64
		if ts := tk.GetStatus().GetTimestamp(); ts != nil {
			ms = ts.AsTime().UnixMilli()
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data) VALUES (?, ?, ?, ?, ?, ?, 7, ?)`,
			id, scope.Tenant, scope.Owner, tk.ContextId, int32(tk.GetStatus().GetState()), ms, data); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "rich-1", Url: "https://h.example/p"}
	cdata, _ := proto.Marshal(cfg)
	if _, err := db.ExecContext(ctx, `INSERT INTO push_configs (tenant, owner, task_id, id, data) VALUES (?, ?, ?, ?, ?)`,
		scope.Tenant, scope.Owner, cfg.TaskId, cfg.Id, cdata); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeToV4 builds a schema version 3 file with the version 3
// statements, opens it, and reads every task back whole; the upgraded
// tasks take appends, keep their sequence numbers and their push mark.
func TestUpgradeToV4(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v3.db")
	want := v3Tasks(t)
	writeV3(t, path, want)

	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version 3 file: %v", err)
	}
	defer s.Close()
	var v int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
	for _, tk := range want {
		// Schema version 6 gives a task written before its last sequence
		// number as its generation (spec §3.2.7).
		tk.Generation = 7
	}
	for id, tk := range want {
		got, err := s.GetTask(ctx, scope, id)
		if err != nil || !proto.Equal(got, tk) {
			t.Errorf("GetTask(%s) after upgrade:\n got  %v, %v\n want %v", id, got, err, tk)
		}
		if seq, err := s.LastSeq(ctx, scope, id); err != nil || seq != 7 {
			t.Errorf("LastSeq(%s) after upgrade = %d, %v; want 7", id, seq, err)
		}
		if evs, err := s.Events(ctx, scope, id, 7, 0); err != nil || len(evs) != 0 {
			t.Errorf("Events(%s, after 7) = %v, %v; want none", id, evs, err)
		}
		if _, err := s.Events(ctx, scope, id, 0, 0); !errors.Is(err, taskstore.ErrPruned) {
			t.Errorf("Events(%s, after 0) = %v; want ErrPruned (no event was logged before version 4)", id, err)
		}
	}
	res, err := s.ListTasks(ctx, scope, taskstore.ListQuery{Limit: 10})
	if err != nil || res.Total != 3 || len(res.Tasks) != 3 {
		t.Fatalf("ListTasks after upgrade: %d tasks, Total %d, %v", len(res.Tasks), res.Total, err)
	}
	for _, got := range res.Tasks {
		if !proto.Equal(got, want[got.Id]) {
			t.Errorf("listed %s after upgrade:\n got  %v\n want %v", got.Id, got, want[got.Id])
		}
	}

	// The upgraded task takes appends, and its configuration gets them.
	rich := want["rich-1"]
	chunk := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: "rich-1", Append: true, Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "three"}}}}}}}
	if err := s.Append(ctx, scope, "rich-1", taskstore.Event{Seq: 8, Response: chunk, Push: true}); err != nil {
		t.Fatalf("Append to an upgraded task: %v", err)
	}
	taskstore.Apply(rich, proto.Clone(chunk).(*a2a.StreamResponse))
	if got, err := s.GetTask(ctx, scope, "rich-1"); err != nil || !proto.Equal(got, rich) {
		t.Errorf("upgraded task after an append:\n got  %v, %v\n want %v", got, err, rich)
	}
	ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: scope, TaskID: "rich-1", ConfigID: "p"}, 10)
	if err != nil || len(ns) != 1 || ns[0].Seq != 8 {
		t.Errorf("outbox of the upgraded task's configuration: %v, %v; want the appended event", ns, err)
	}
}

// TestUpgradeToV6: schema version 6 gives a task written at version 5,
// which kept no generation, its last sequence number (spec §3.2.7: one
// generation per logged event, from 1), and the task goes on from it.
func TestUpgradeToV6(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v5.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tk := &a2a.Task{Id: "old", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := s.CreateTask(ctx, scope, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	working := func(seq uint64) taskstore.Event {
		return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "old", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}}
	}
	for seq := uint64(2); seq <= 3; seq++ {
		if err := s.Append(ctx, scope, "old", working(seq)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE tasks DROP COLUMN generation`, `PRAGMA user_version = 5`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatalf("Open of a version 5 file: %v", err)
	}
	defer s.Close()
	if got, err := s.GetTask(ctx, scope, "old"); err != nil || got.GetGeneration() != 3 {
		t.Fatalf("generation after the upgrade: %d, %v; want 3 (the last sequence number)", got.GetGeneration(), err)
	}
	ev := working(4)
	taskstore.Stamp(3, ev.Response)
	if err := s.Append(ctx, scope, "old", ev); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetTask(ctx, scope, "old"); err != nil || got.GetGeneration() != 4 {
		t.Errorf("generation after an append: %d, %v; want 4", got.GetGeneration(), err)
	}
}
