package sqlitestore

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/marktest"
	"parley.dev/parley/taskstore/internal/timelinetest"
	"parley.dev/parley/taskstore/seal"
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
	for id, tk := range want {
		got, err := s.GetTask(ctx, scope, id)
		if seq, _ := s.LastSeq(ctx, scope, id); err == nil && got.Generation != taskstore.Generation(seq) {
			t.Errorf("GetTask(%s) after upgrade: generation %d, want %d (its last sequence number)", id, got.Generation, seq)
		}
		if got != nil {
			got.Generation = 0
		}
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
		if got.Generation != 7 { // the seq every upgraded task has
			t.Errorf("listed %s after upgrade: generation %d, want 7", got.Id, got.Generation)
		}
		got.Generation = 0
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
	rich.Generation = 8
	if got, err := s.GetTask(ctx, scope, "rich-1"); err != nil || !proto.Equal(got, rich) {
		t.Errorf("upgraded task after an append:\n got  %v, %v\n want %v", got, err, rich)
	}
	ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: scope, TaskID: "rich-1", ConfigID: "p"}, 10)
	if err != nil || len(ns) != 1 || ns[0].Seq != 8 {
		t.Errorf("outbox of the upgraded task's configuration: %v, %v; want the appended event", ns, err)
	}
}

// TestUpgradeToV6 stores push configurations as a version 5 program did
// (package marktest: the v0.3 mark on the URLs' fragments), in a file
// without push keys and in one with a key, where the URLs are sealed, then
// takes the version column away and records version 5. Open upgrades the
// file: the marks leave the URLs for the version column, and sealed URLs
// stay sealed. A file with sealed URLs is not upgraded without its key: it
// stays at version 5, untouched.
func TestUpgradeToV6(t *testing.T) {
	for name, keys := range map[string]*seal.Keys{"plain": nil, "sealed": testKeys(t, 6)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v5.db")
			s := openKeyed(t, path, keys)
			marktest.Put(t, s, scope, "t")
			s.Close()
			rawExec(t, path, append(backToV6(), `ALTER TABLE push_configs DROP COLUMN version`, `PRAGMA user_version = 5`)...)
			if keys != nil {
				if _, err := Open(path); !errors.Is(err, ErrNoPushKey) {
					t.Fatalf("Open of a version 5 file with sealed URLs, without its key: %v, want ErrNoPushKey", err)
				}
				if v := rawVersion(t, path); v != 5 {
					t.Fatalf("user_version after a failed upgrade = %d, want 5", v)
				}
			}
			s = openKeyed(t, path, keys)
			defer s.Close()
			if v := rawVersion(t, path); v != SchemaVersion {
				t.Fatalf("user_version = %d, want %d", v, SchemaVersion)
			}
			marktest.Check(t, s, scope, "t")
			var plain int
			if err := s.reader.QueryRowContext(t.Context(), `SELECT count(*) FROM push_configs WHERE secret IS NULL`).Scan(&plain); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: len(marktest.Configs), false: 0}[keys == nil]; plain != want {
				t.Errorf("%d configurations in plain text after the upgrade, want %d", plain, want)
			}
		})
	}
}

// rawExec runs statements on the file at path, outside any store.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rawVersion reads the user_version of the file at path, outside any
// store.
func rawVersion(t *testing.T, path string) int {
	t.Helper()
	var v int
	if err := rawQuery(t, path, "PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// rawQuery runs a query of one row on the file at path, outside any
// store; the connection closes with the test.
func rawQuery(t *testing.T, path, q string) *sql.Row {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.QueryRowContext(t.Context(), q)
}

// backToV8 returns the statements that make a version 9 file what
// version 8 had: the tables of a task's pieces as WITHOUT ROWID tables, as
// migration 3 made them (and migration 7 added first_seq, after the
// response), with their rows.
func backToV8() []string {
	var v8 []string
	for _, q := range migrations[3] {
		name, kind := createdName(q)
		if kind != "TABLE" {
			continue
		}
		cols := map[string]string{"task_history": "task_id, n, message",
			"task_artifacts": "task_id, n, artifact_id, append, chunk", "task_events": "task_id, seq, created_ms, response"}[name]
		if cols == "" {
			continue
		}
		v8 = append(v8, `ALTER TABLE `+name+` RENAME TO `+name+`_v9`, q)
		if name == "task_events" {
			v8 = append(v8, migrations[7][0])
			cols += ", first_seq"
		}
		v8 = append(v8, `INSERT INTO `+name+` (`+cols+`) SELECT `+cols+` FROM `+name+`_v9`, `DROP TABLE `+name+`_v9`)
	}
	return append(v8, `CREATE INDEX task_artifacts_by_id ON task_artifacts (task_id, artifact_id, n)`)
}

// backToV7 returns the statements that make a version 9 file what
// version 7 had, when its event log holds one event per row, as every row
// of version 7 did: no first_seq, and the index by context and state as
// migration 0 made it.
func backToV7() []string {
	v7 := append(backToV8(), `ALTER TABLE task_events DROP COLUMN first_seq`)
	for _, q := range migrations[0] {
		if name, _ := createdName(q); name == "tasks_by_context_state" {
			v7 = append(v7, q)
		}
	}
	return v7
}

// backToV6 returns the statements that make a version 9 file what version
// 6 had: the triggers as migrations 0 and 3 made them, the counters they
// kept, the events' time index and no pruning marks.
func backToV6() []string {
	v6 := append(backToV7(), `DROP TRIGGER tasks_count_insert`, `DROP TRIGGER tasks_count_delete`,
		`DROP TRIGGER tasks_count_state`, `DROP TRIGGER tasks_count_move`)
	for _, q := range append(migrations[0], migrations[3]...) {
		if name, kind := createdName(q); kind == "TRIGGER" && name != "tasks_count_update" {
			v6 = append(v6, q)
		}
	}
	return append(v6,
		fmt.Sprintf(`INSERT INTO task_counts SELECT tenant, owner, %d, context_id, 0, count(*) FROM tasks GROUP BY 1, 2, 4`, layout.WithContext),
		fmt.Sprintf(`INSERT INTO task_counts SELECT tenant, owner, %d, context_id, state, count(*) FROM tasks GROUP BY 1, 2, 4, 5`, layout.WithContext|layout.WithState),
		`DROP INDEX tasks_by_prune`, `ALTER TABLE tasks DROP COLUMN prune_ms`, `ALTER TABLE tasks DROP COLUMN last_ms`,
		`CREATE INDEX task_events_by_time ON task_events (created_ms)`)
}

// TestUpgradeToV7: a version 6 file, with its counters per context and its
// triggers that keep them, loses both; totals by context and state stay
// exact through the upgrade and after.
func TestUpgradeToV7(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v6.db")
	s := openKeyed(t, path, nil)
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED}
	for i := range 12 {
		if err := s.CreateTask(ctx, scope, newTask(fmt.Sprintf("task-%d%d", i/10, i%10), states[i%2], i), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	s = reopenAt(t, s, path, 6, backToV6()...)
	defer s.Close()
	check := func(when string) {
		t.Helper()
		var perContext int
		if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM task_counts WHERE context_id <> ''`).Scan(&perContext); err != nil || perContext != 0 {
			t.Errorf("%s: %d counters per context (%v), want none", when, perContext, err)
		}
		for _, c := range []string{"", "ctx-0", "ctx-1", "ctx-9", "none"} {
			for _, st := range append(states, a2a.TaskState_TASK_STATE_UNSPECIFIED, a2a.TaskState_TASK_STATE_FAILED) {
				res, err := s.ListTasks(ctx, scope, taskstore.ListQuery{ContextID: c, State: st, Limit: 1})
				var want int
				q, args := "SELECT count(*) FROM tasks WHERE (?1 = '' OR context_id = ?1) AND (?2 = 0 OR state = ?2)", []any{c, int32(st)}
				if qerr := s.reader.QueryRowContext(ctx, q, args...).Scan(&want); err != nil || qerr != nil || res.Total != want {
					t.Errorf("%s: context %q state %v: Total %d (%v), COUNT %d (%v)", when, c, st, res.Total, err, want, qerr)
				}
			}
		}
	}
	check("after the upgrade")
	for i := 12; i < 16; i++ {
		if err := s.CreateTask(ctx, scope, newTask(fmt.Sprintf("task-%d%d", i/10, i%10), states[i%2], i), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := replace(ctx, s, scope, newTask("task-00", a2a.TaskState_TASK_STATE_FAILED, 20)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteFinished(ctx, epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("after writes and deletes")
}

// TestUpgradeToV8: a version 7 file, one event per row of its log, gains
// first_seq; its events read as before, and the log goes on in rows of
// several events, pruned exactly.
func TestUpgradeToV8(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v7.db")
	s := openKeyed(t, path, nil)
	tk := newTask("task-v7", a2a.TaskState_TASK_STATE_WORKING, 1)
	status := func(seq uint64, st a2a.TaskState) taskstore.Event {
		return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
			StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: tk.Id, ContextId: tk.ContextId, Status: &a2a.TaskStatus{State: st}}}}}
	}
	working := a2a.TaskState_TASK_STATE_WORKING
	if err := s.CreateTask(ctx, scope, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 3; seq++ {
		if err := s.Append(ctx, scope, tk.Id, status(seq, working)); err != nil {
			t.Fatal(err)
		}
	}
	s = reopenAt(t, s, path, 7, backToV7()...)
	defer s.Close()
	if evs, err := s.Events(ctx, scope, tk.Id, 1, 0); err != nil || len(evs) != 2 || evs[0].Seq != 2 {
		t.Fatalf("Events after the upgrade: %d events, %v; want 2 from seq 2", len(evs), err)
	}
	batch := []taskstore.Event{status(4, working), status(5, working), status(6, a2a.TaskState_TASK_STATE_COMPLETED)}
	if err := s.AppendBatch(ctx, scope, tk.Id, batch); err != nil {
		t.Fatal(err)
	}
	var indexes int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'tasks_by_context_state'`).Scan(&indexes); err != nil || indexes != 0 {
		t.Fatalf("%d indexes by context and state after the upgrade (%v), want none", indexes, err)
	}
	var rows, multi int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*), count(first_seq) FROM task_events`).Scan(&rows, &multi); err != nil || rows != 4 || multi != 1 {
		t.Fatalf("%d log rows, %d of several events (%v); want 4, 1", rows, multi, err)
	}
	if evs, err := s.Events(ctx, scope, tk.Id, 2, 3); err != nil || len(evs) != 3 || evs[0].Seq != 3 || evs[2].Seq != 5 {
		t.Fatalf("Events after 2, limit 3: %v, %v; want seq 3 to 5", evs, err)
	}
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 5 {
		t.Fatalf("PruneEvents = %d, %v; want 5", n, err)
	}
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*), count(first_seq) FROM task_events`).Scan(&rows, &multi); err != nil || rows != 1 || multi != 0 {
		t.Fatalf("after pruning, %d log rows, %d of several events (%v); want 1, 0", rows, multi, err)
	}
}

// rowidTables reads which of the tables of a task's pieces are rowid
// tables (not WITHOUT ROWID), and the columns of each, in order.
func rowidTables(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, name := range []string{"task_history", "task_artifacts", "task_events"} {
		var q string
		if err := s.reader.QueryRowContext(t.Context(), `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&q); err != nil {
			t.Fatalf("the schema of %s: %v", name, err)
		}
		if strings.Contains(strings.ToUpper(q), "WITHOUT ROWID") {
			continue
		}
		out[name] = queryStrings(t, s.reader, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, name)
	}
	return out
}

// queryStrings returns the one text column of every row of a query.
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantRowidTables: every table of a task's pieces is a rowid table whose
// payload is its last column (schema version 9), so that a seek never
// reads a payload.
func wantRowidTables(t *testing.T, s *Store) {
	t.Helper()
	got := rowidTables(t, s)
	for name, last := range map[string]string{"task_history": "message", "task_artifacts": "chunk", "task_events": "response"} {
		if cols := got[name]; len(cols) == 0 || cols[len(cols)-1] != last {
			t.Errorf("%s: columns %v of a rowid table, want one whose last column is %s", name, cols, last)
		}
	}
}

// TestUpgradeToV9: a version 8 file, whose tables of a task's pieces are
// WITHOUT ROWID, gets them as rowid tables with every row: the tasks and
// their logs read as before, a large message included, and the tables
// work on (appends, a replaced artifact, pruning, deletion by cascade).
func TestUpgradeToV9(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v8.db")
	s := openKeyed(t, path, nil)
	wantRowidTables(t, s)
	tk := newTask("task-v8", a2a.TaskState_TASK_STATE_WORKING, 1)
	evs := []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}
	for seq := uint64(2); seq <= 5; seq++ {
		evs = append(evs, taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{
			ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: tk.Id, ContextId: tk.ContextId, Append: seq > 2,
				Artifact: a2a.TextArtifact("a", fmt.Sprint("chunk ", seq))}}}})
	}
	if err := s.CreateTaskBatch(ctx, scope, tk, evs[:2]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendBatch(ctx, scope, tk.Id, evs[2:]); err != nil {
		t.Fatal(err)
	}
	long := a2a.AgentMessage(strings.Repeat("long ", 40000)) // overflow pages
	long.MessageId = "m-long"
	if err := s.Append(ctx, scope, tk.Id, taskstore.Event{Seq: 6, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
		StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: tk.Id, ContextId: tk.ContextId,
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, Message: long}}}}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetTask(ctx, scope, tk.Id)
	if err != nil {
		t.Fatal(err)
	}
	logged, err := s.Events(ctx, scope, tk.Id, 0, 0)
	if err != nil || len(logged) != 6 {
		t.Fatalf("Events: %d, %v", len(logged), err)
	}
	s.Close()
	rawExec(t, path, backToV8()...)
	var withoutRowid int
	if err := rawQuery(t, path, `SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('task_history', 'task_artifacts', 'task_events') AND sql LIKE '%WITHOUT ROWID%'`).Scan(&withoutRowid); err != nil || withoutRowid != 3 {
		t.Fatalf("%d WITHOUT ROWID tables in the version 8 file (%v), want 3", withoutRowid, err)
	}
	s = reopenAt(t, s, path, 8)
	defer s.Close()
	wantRowidTables(t, s)
	s.cache.clear()
	if got, err := s.GetTask(ctx, scope, tk.Id); err != nil || !proto.Equal(got, before) {
		t.Fatalf("GetTask after the upgrade: %v, %v", got, err)
	}
	if got, err := s.Events(ctx, scope, tk.Id, 0, 0); err != nil || len(got) != len(logged) {
		t.Fatalf("Events after the upgrade: %d, %v", len(got), err)
	} else {
		for i := range got {
			if got[i].Seq != logged[i].Seq || !proto.Equal(got[i].Response, logged[i].Response) {
				t.Fatalf("event %d after the upgrade: %v, want %v", i, got[i], logged[i])
			}
		}
	}
	// The tables work on: a replaced artifact, a follow-up, the end.
	more := []taskstore.Event{
		{Seq: 7, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: tk.Id, ContextId: tk.ContextId, Artifact: a2a.TextArtifact("a", "replaced")}}}},
		{Seq: 8, Response: statusEvent(tk.Id, a2a.TaskState_TASK_STATE_COMPLETED)},
	}
	want := proto.Clone(before).(*a2a.Task)
	for _, ev := range more {
		if err := s.Append(ctx, scope, tk.Id, ev); err != nil {
			t.Fatal(err)
		}
		taskstore.Apply(want, ev.Response)
	}
	want.Generation = taskstore.Generation(8)
	if got, err := s.GetTask(ctx, scope, tk.Id); err != nil || !proto.Equal(got, want) {
		t.Fatalf("GetTask after more events: %v, %v; want %v", got, err, want)
	}
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 7 {
		t.Fatalf("PruneEvents = %d, %v; want 7", n, err)
	}
	if n, err := s.DeleteFinished(ctx, epoch.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("DeleteFinished = %d, %v; want 1", n, err)
	}
	for _, table := range []string{"task_history", "task_artifacts", "task_events"} {
		var n int
		if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows left after the task went (%v), want none", table, n, err)
		}
	}
}

// TestUpgradeToV10: a version 9 file, without timeline bases, whose
// task's log is whole (a server of the 1.1 preview did not prune it),
// gets their table: a prune then keeps the task's timeline in its base,
// the base and the event kept read as the timeline of the whole log, and
// the base goes with its task.
func TestUpgradeToV10(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v9.db")
	s := openKeyed(t, path, nil)
	all := timelinetest.Write(t, s, scope, "task-v9", 300)
	s = reopenAt(t, s, path, 9, `DROP TABLE task_timelines`)
	defer s.Close()
	timelinetest.PruneAndCheck(t, s, scope, "after the upgrade and a prune", "task-v9", all)
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM task_timelines`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d timeline bases left after the task went (%v), want none", n, err)
	}
}

// TestUpgradeToV10PrunedLog: a version 9 file whose task's log lost its
// start to a prune of a Parley before timeline bases (while 1.1 was not
// served) keeps, once pruned again, a base that says the timeline is
// lost, not a timeline without its start.
func TestUpgradeToV10PrunedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v9.db")
	s := openKeyed(t, path, nil)
	all := timelinetest.Write(t, s, scope, "task-v9", 300)
	s = reopenAt(t, s, path, 9, `DROP TABLE task_timelines`, `DELETE FROM task_events WHERE task_id = 'task-v9' AND seq = 1`)
	defer s.Close()
	timelinetest.PruneLost(t, s, scope, "after the upgrade and a prune", "task-v9", all)
}

// TestMalformedEventRow: a row of several events whose bytes do not split
// is reported by Events, and does not stop PruneEvents, which prunes the
// other tasks and leaves that row as it is.
func TestMalformedEventRow(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bad.db")
	s := openKeyed(t, path, nil)
	defer s.Close()
	for _, id := range []string{"task-bad", "task-good"} {
		tk := newTask(id, a2a.TaskState_TASK_STATE_WORKING, 1)
		evs := []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}
		for seq := uint64(2); seq <= 4; seq++ {
			evs = append(evs, taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
				StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: tk.ContextId, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}})
		}
		if err := s.CreateTaskBatch(ctx, scope, tk, evs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE task_events SET response = x'ff' WHERE task_id = 'task-bad'`); err != nil {
		t.Fatal(err)
	}
	if evs, err := s.Events(ctx, scope, "task-bad", 0, 0); err == nil {
		t.Fatalf("Events of a malformed row: %d events, no error", len(evs))
	}
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("PruneEvents = %d, %v; want 3 (the good task's), no error", n, err)
	}
	if evs, err := s.Events(ctx, scope, "task-good", 3, 0); err != nil || len(evs) != 1 || evs[0].Seq != 4 {
		t.Fatalf("the good task after pruning: %v, %v; want its last event", evs, err)
	}
}

// reopenAt closes s, runs stmts on its file, records it as at version and
// opens it again, which upgrades it: the store at SchemaVersion.
func reopenAt(t *testing.T, s *Store, path string, version int, stmts ...string) *Store {
	t.Helper()
	s.Close()
	rawExec(t, path, append(stmts, fmt.Sprintf("PRAGMA user_version = %d", version))...)
	s = openKeyed(t, path, nil)
	if v := rawVersion(t, path); v != SchemaVersion {
		s.Close()
		t.Fatalf("user_version = %d, want %d", v, SchemaVersion)
	}
	return s
}
