package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/marktest"
	"parley.dev/parley/taskstore/internal/timelinetest"
	"parley.dev/parley/taskstore/seal"
)

// schemaVersion reads the version recorded in the database at u.
func schemaVersion(t *testing.T, u string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(t.Context(), `SELECT version FROM parley_schema`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// migratedSchema makes a new schema, has Open migrate it, and returns its
// URL and a connection to it of the test's own.
func migratedSchema(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	return u, conn
}

// TestMigrateFreshAndReopen opens an empty schema (which migrates it),
// writes a task, and opens it again: the version is recorded once, the
// second open migrates nothing and the task is still there.
func TestMigrateFreshAndReopen(t *testing.T) {
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk := newTask("t-1", 1)
	if err := s.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
	s, err = Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if _, err := s.GetTask(t.Context(), scope, "t-1"); err != nil {
		t.Fatalf("task after reopen: %v", err)
	}
}

// TestRefuseNewerSchema records a version beyond SchemaVersion: Open
// fails with ErrNewerSchema and a message naming both versions.
func TestRefuseNewerSchema(t *testing.T) {
	u, conn := migratedSchema(t)
	if _, err := conn.Exec(t.Context(), `UPDATE parley_schema SET version = $1`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())
	_, err := Open(t.Context(), u, nil)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer schema: %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{fmt.Sprintf("schema version %d", SchemaVersion+1), fmt.Sprintf("up to %d", SchemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestConcurrentOpeners opens one empty schema from eight stores at once:
// the advisory lock lets one migrate while the others wait and then find
// the schema done; every open succeeds and every store works.
func TestConcurrentOpeners(t *testing.T) {
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	const n = 8
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = Open(context.Background(), u, &Options{MaxConns: 2})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("opener %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	tk := newTask("shared", 1)
	if err := stores[0].CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if _, err := s.GetTask(t.Context(), scope, "shared"); err != nil {
			t.Errorf("store %d: %v", i, err)
		}
	}
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
}

// TestExclusive opens a schema with Options.Exclusive twice: the second
// is refused with ErrInUse while the first is open, a store without the
// option is not, another schema is not, and once the first closes the
// schema can be opened exclusively again.
func TestExclusive(t *testing.T) {
	db := pgtest.NewDatabase(t)
	u := pgtest.NewSchema(t, db)
	ctx := t.Context()
	first, err := Open(ctx, u, &Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u, &Options{Exclusive: true}); !errors.Is(err, ErrInUse) {
		t.Fatalf("second exclusive Open: %v, want ErrInUse", err)
	}
	shared, err := Open(ctx, u, nil)
	if err != nil {
		t.Fatalf("Open without Exclusive: %v", err)
	}
	shared.Close()
	other, err := Open(ctx, pgtest.NewSchema(t, db), &Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open of another schema: %v", err)
	}
	other.Close()
	first.Close()
	again, err := Open(ctx, u, &Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open after Close: %v", err)
	}
	again.Close()
}

// TestMigrateFromVersion2 opens a database recorded at schema version 2
// whose counters' trigger counts nothing (a stand-in for version 2's):
// Open upgrades it to the current version, replacing the trigger's
// function, and the tasks written after are counted.
func TestMigrateFromVersion2(t *testing.T) {
	u, conn := migratedSchema(t)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `CREATE OR REPLACE FUNCTION parley_count_tasks() RETURNS trigger
		LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `UPDATE parley_schema SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("open a version 2 database: %v", err)
	}
	defer s.Close()
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
	for i := range 3 {
		tk := newTask(fmt.Sprint("t-", i), i)
		if err := s.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(t.Context(), scope, "t-0", status("t-0", 2, a2a.TaskState_TASK_STATE_COMPLETED)); err != nil {
		t.Fatal(err)
	}
	for state, want := range map[a2a.TaskState]int{
		a2a.TaskState_TASK_STATE_UNSPECIFIED: 3, a2a.TaskState_TASK_STATE_WORKING: 2, a2a.TaskState_TASK_STATE_COMPLETED: 1,
	} {
		page, err := s.ListTasks(t.Context(), scope, taskstore.ListQuery{State: state, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != want {
			t.Errorf("%d tasks counted in state %s, want %d", page.Total, state, want)
		}
	}
}

// TestCountersMatchTasks makes tasks in two scopes and three contexts,
// changes their states, moves some to another context with a Task event
// and deletes the finished ones, checking after each step that the
// trigger's counters (per scope, per scope and state) are the counts of
// the tasks table, that no counter is negative and none is per context,
// and that ListTasks' totals by context, counted in the index, are right.
func TestCountersMatchTasks(t *testing.T) {
	s := openFresh(t, pgtest.NewDatabase(t), nil)
	defer s.Close()
	ctx := t.Context()
	scopes := []taskstore.Scope{scope, {Tenant: "t", Owner: "bob"}}
	seq := map[string]uint64{}
	sc := func(i int) taskstore.Scope { return scopes[i%2] }
	check := func(step string) {
		t.Helper()
		var wrong, negative, perContext int
		err := s.pool.QueryRow(ctx, `WITH want AS (
				SELECT tenant, owner, k AS kind, '' AS ctx,
					CASE WHEN k = 2 THEN state ELSE 0 END AS st, count(*) AS n
				FROM tasks, (VALUES (0), (2)) AS g(k) GROUP BY 1, 2, 3, 4, 5),
			have AS (SELECT tenant, owner, kind, context_id AS ctx, state AS st, sum(n) AS n
				FROM task_counts GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
			SELECT (SELECT count(*) FROM ((SELECT * FROM want EXCEPT SELECT * FROM have)
					UNION ALL (SELECT * FROM have EXCEPT SELECT * FROM want)) AS x),
				(SELECT count(*) FROM task_counts WHERE n < 0),
				(SELECT count(*) FROM task_counts WHERE kind IN (1, 3))`).Scan(&wrong, &negative, &perContext)
		if err != nil {
			t.Fatal(err)
		}
		if wrong != 0 || negative != 0 || perContext != 0 {
			t.Fatalf("after %s: %d keys miscounted, %d counters negative, %d per-context counters", step, wrong, negative, perContext)
		}
		for _, owner := range scopes {
			for _, c := range []string{"ctx-0", "ctx-1", "ctx-2", "moved"} {
				for _, st := range []a2a.TaskState{a2a.TaskState_TASK_STATE_UNSPECIFIED, a2a.TaskState_TASK_STATE_COMPLETED} {
					var want int
					if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE tenant = $1 AND owner = $2
						AND context_id = $3 AND ($4 = 0 OR state = $4)`, owner.Tenant, owner.Owner, c, int32(st)).Scan(&want); err != nil {
						t.Fatal(err)
					}
					page, err := s.ListTasks(ctx, owner, taskstore.ListQuery{ContextID: c, State: st, Limit: 1})
					if err != nil || page.Total != want {
						t.Fatalf("after %s: %s's total in %s, state %v: %d (%v), want %d", step, owner.Owner, c, st, page.Total, err, want)
					}
				}
			}
		}
	}
	for i := range 30 {
		id := fmt.Sprint("t-", i)
		tk := newTask(id, i)
		tk.ContextId = fmt.Sprint("ctx-", i%3)
		text := []*a2a.Part{{Content: &a2a.Part_Text{Text: id}}}
		tk.History = []*a2a.Message{{MessageId: id, Role: a2a.Role_ROLE_USER, Parts: text}}
		tk.Artifacts = []*a2a.Artifact{{ArtifactId: "a", Parts: text}}
		if err := s.CreateTask(ctx, sc(i), tk, snapshot(tk)); err != nil {
			t.Fatal(err)
		}
		seq[id] = 1
	}
	check("creating")
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_COMPLETED,
		a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_FAILED}
	for i := range 30 {
		id := fmt.Sprint("t-", i)
		for _, st := range states[:i%4+1] {
			seq[id]++
			if err := s.Append(ctx, sc(i), id, status(id, seq[id], st)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("state changes")
	for i := 0; i < 30; i += 4 {
		id := fmt.Sprint("t-", i)
		tk := newTask(id, 100+i)
		tk.ContextId = "moved"
		seq[id]++
		ev := snapshot(tk)
		ev.Seq = seq[id]
		if err := s.Append(ctx, sc(i), id, ev); err != nil {
			t.Fatal(err)
		}
	}
	check("Task events to another context")
	n, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour))
	if err != nil || n == 0 {
		t.Fatalf("DeleteFinished: %d, %v", n, err)
	}
	check("deleting the finished tasks")
	// The pieces have no foreign key since schema version 4:
	// DeleteFinished deletes them itself.
	var left, orphans int
	err = s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM task_history h JOIN tasks t ON t.id = h.task_id)
			+ (SELECT count(*) FROM task_artifacts a JOIN tasks t ON t.id = a.task_id)
			+ (SELECT count(*) FROM task_events e JOIN tasks t ON t.id = e.task_id),
		(SELECT count(*) FROM task_history WHERE task_id NOT IN (SELECT id FROM tasks))
			+ (SELECT count(*) FROM task_artifacts WHERE task_id NOT IN (SELECT id FROM tasks))
			+ (SELECT count(*) FROM task_events WHERE task_id NOT IN (SELECT id FROM tasks))`).Scan(&left, &orphans)
	if err != nil {
		t.Fatal(err)
	}
	if left == 0 || orphans != 0 {
		t.Fatalf("after DeleteFinished: %d pieces of the tasks left (want some), %d pieces of deleted tasks (want 0)", left, orphans)
	}
}

// TestMigrateFromVersion3 upgrades a database made by version 3's
// migrations, holding a task counted by version 3's trigger: the
// pieces lose their foreign keys, and the trigger stops counting new tasks,
// which CreateTask's statement counts, so that each task is counted once.
func TestMigrateFromVersion3(t *testing.T) {
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	stmts := []string{`CREATE TABLE parley_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)`,
		`INSERT INTO parley_schema (version) VALUES (3)`}
	for _, m := range migrations[:3] {
		stmts = append(stmts, m...)
	}
	stmts = append(stmts, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data)
		VALUES ('old', '`+scope.Tenant+`', '`+scope.Owner+`', 'ctx', 2, 1, 1, '')`)
	for _, stmt := range stmts {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	foreignKeys := func() int {
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_constraint WHERE contype = 'f'
			AND conrelid::regclass::text IN ('task_history', 'task_artifacts', 'task_events')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := foreignKeys(); n != 3 {
		t.Fatalf("version 3 has %d foreign keys on the pieces, want 3", n)
	}
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("open a version 3 database: %v", err)
	}
	defer s.Close()
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
	if n := foreignKeys(); n != 0 {
		t.Fatalf("%d foreign keys on the pieces left, want 0", n)
	}
	tk := newTask("new", 5)
	if err := s.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListTasks(t.Context(), scope, taskstore.ListQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 || len(page.Tasks) != 2 {
		t.Fatalf("%d tasks counted, %d listed, want 2 and 2", page.Total, len(page.Tasks))
	}
}

// TestMigrateToVersion6 stores push configurations as a version 5 program
// did (package marktest: the v0.3 mark on the URLs' fragments), without
// push keys and with a key, which seals the URLs, then takes the version
// column away and records version 5. Open migrates the schema: the marks
// leave the URLs for the version column, and sealed URLs stay sealed. A
// schema with sealed URLs is not migrated without its key: it stays at
// version 5.
func TestMigrateToVersion6(t *testing.T) {
	db := pgtest.NewDatabase(t)
	for name, keys := range map[string]*seal.Keys{"plain": nil, "sealed": testKeys(t, 6)} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			u := pgtest.NewSchema(t, db)
			s, err := Open(ctx, u, &Options{PushKeys: keys})
			if err != nil {
				t.Fatal(err)
			}
			marktest.Put(t, s, scope, "t")
			s.Close()
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			for _, stmt := range []string{`ALTER TABLE push_configs DROP COLUMN version`, `UPDATE parley_schema SET version = 5`} {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			if keys != nil {
				if _, err := Open(ctx, u, nil); !errors.Is(err, ErrNoPushKey) {
					t.Fatalf("Open of a version 5 schema with sealed URLs, without its key: %v, want ErrNoPushKey", err)
				}
				if v := schemaVersion(t, u); v != 5 {
					t.Fatalf("schema version after a failed migration %d, want 5", v)
				}
			}
			s, err = Open(ctx, u, &Options{PushKeys: keys})
			if err != nil {
				t.Fatalf("open a version 5 schema: %v", err)
			}
			defer s.Close()
			if v := schemaVersion(t, u); v != SchemaVersion {
				t.Fatalf("schema version %d, want %d", v, SchemaVersion)
			}
			marktest.Check(t, s, scope, "t")
			var plain int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM push_configs WHERE secret IS NULL`).Scan(&plain); err != nil {
				t.Fatal(err)
			}
			if keys != nil && plain != 0 {
				t.Errorf("%d configurations in plain text after the migration, want none", plain)
			}
		})
	}
}

// TestMigrateToVersion7: a version 6 schema's counters per context (kinds
// 1 and 3) go, and totals by context, counted in the index, and by state
// stay right after the migration and after more writes.
func TestMigrateToVersion7(t *testing.T) {
	u, conn, s := migratedStore(t)
	ctx := t.Context()
	for i := range 6 {
		tk := newTask(fmt.Sprint("t-", i), i)
		tk.ContextId = fmt.Sprint("ctx-", i%2)
		if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = reopenAt(t, u, conn, 6,
		`INSERT INTO task_counts (tenant, owner, kind, context_id, state, slot, n)
			SELECT tenant, owner, 1, context_id, 0, 0, count(*) FROM tasks GROUP BY 1, 2, 4`,
		`INSERT INTO task_counts (tenant, owner, kind, context_id, state, slot, n)
			SELECT tenant, owner, 3, context_id, state, 0, count(*) FROM tasks GROUP BY 1, 2, 4, 5`)
	defer s.Close()
	if err := s.Append(ctx, scope, "t-0", status("t-0", 2, a2a.TaskState_TASK_STATE_COMPLETED)); err != nil {
		t.Fatal(err)
	}
	var perContext int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM task_counts WHERE kind IN (1, 3)`).Scan(&perContext); err != nil || perContext != 0 {
		t.Fatalf("%d per-context counters after the migration (%v), want none", perContext, err)
	}
	for _, q := range []struct {
		c    string
		st   a2a.TaskState
		want int
	}{{"", 0, 6}, {"ctx-0", 0, 3}, {"ctx-1", 0, 3}, {"ctx-0", a2a.TaskState_TASK_STATE_COMPLETED, 1},
		{"", a2a.TaskState_TASK_STATE_COMPLETED, 1}, {"", a2a.TaskState_TASK_STATE_WORKING, 5}, {"none", 0, 0}} {
		page, err := s.ListTasks(ctx, scope, taskstore.ListQuery{ContextID: q.c, State: q.st, Limit: 1})
		if err != nil || page.Total != q.want {
			t.Errorf("total in context %q, state %v: %d (%v), want %d", q.c, q.st, page.Total, err, q.want)
		}
	}
}

// TestMigrateToVersion8: a version 7 schema, one event per row of its log,
// gains first_seq; its events read as before, and the log goes on in rows
// of several events, pruned exactly, the last row trimmed to its last
// event.
func TestMigrateToVersion8(t *testing.T) {
	u, conn, s := migratedStore(t)
	ctx := t.Context()
	tk := newTask("t-v7", 1)
	working := a2a.TaskState_TASK_STATE_WORKING
	if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 3; seq++ {
		if err := s.Append(ctx, scope, tk.Id, status(tk.Id, seq, working)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	v7 := []string{`ALTER TABLE task_events DROP COLUMN first_seq`}
	for _, q := range migrations[0] {
		if strings.HasPrefix(q, "CREATE INDEX tasks_by_context_state ") {
			v7 = append(v7, q) // as version 7 had it
		}
	}
	if len(v7) != 2 {
		t.Fatal("migration 0 makes no tasks_by_context_state")
	}
	s = reopenAt(t, u, conn, 7, v7...)
	defer s.Close()
	if evs, err := s.Events(ctx, scope, tk.Id, 1, 0); err != nil || len(evs) != 2 || evs[0].Seq != 2 {
		t.Fatalf("Events after the migration: %d events, %v; want 2 from seq 2", len(evs), err)
	}
	batch := []taskstore.Event{status(tk.Id, 4, working), status(tk.Id, 5, working), status(tk.Id, 6, a2a.TaskState_TASK_STATE_COMPLETED)}
	if err := s.AppendBatch(ctx, scope, tk.Id, batch); err != nil {
		t.Fatal(err)
	}
	rows := func() (n, multi int) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT count(*), count(first_seq) FROM task_events`).Scan(&n, &multi); err != nil {
			t.Fatal(err)
		}
		return n, multi
	}
	var indexes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'tasks_by_context_state'`).Scan(&indexes); err != nil || indexes != 0 {
		t.Fatalf("%d indexes by context and state after the migration (%v), want none", indexes, err)
	}
	if n, multi := rows(); n != 4 || multi != 1 {
		t.Fatalf("%d log rows, %d of several events; want 4, 1", n, multi)
	}
	if evs, err := s.Events(ctx, scope, tk.Id, 2, 3); err != nil || len(evs) != 3 || evs[0].Seq != 3 || evs[2].Seq != 5 {
		t.Fatalf("Events after 2, limit 3: %v, %v; want seq 3 to 5", evs, err)
	}
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 5 {
		t.Fatalf("PruneEvents = %d, %v; want 5", n, err)
	}
	if n, multi := rows(); n != 1 || multi != 0 {
		t.Fatalf("after pruning, %d log rows, %d of several events; want 1, 0", n, multi)
	}
}

// TestMigrateToVersion9: a version 8 schema, without timeline bases,
// whose task's log is whole (a server of the 1.1 preview did not prune
// it), gets their table: a prune then keeps the task's timeline in its
// base, the base and the event kept read as the timeline of the whole
// log, and the base goes with its task.
func TestMigrateToVersion9(t *testing.T) {
	u, conn, s := migratedStore(t)
	ctx := t.Context()
	all := timelinetest.Write(t, s, scope, "t-v8", 300)
	s.Close()
	s = reopenAt(t, u, conn, 8, `DROP TABLE task_timelines`)
	defer s.Close()
	timelinetest.PruneAndCheck(t, s, scope, "after the migration and a prune", "t-v8", all)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM task_timelines`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d timeline bases left after the task went (%v), want none", n, err)
	}
}

// TestMigrateToVersion9PrunedLog: a version 8 schema whose task's log
// lost its start to a prune of a Parley before timeline bases (while 1.1
// was not served) keeps, once pruned again, a base that says the
// timeline is lost, not a timeline without its start.
func TestMigrateToVersion9PrunedLog(t *testing.T) {
	u, conn, s := migratedStore(t)
	all := timelinetest.Write(t, s, scope, "t-v8", 300)
	s.Close()
	s = reopenAt(t, u, conn, 8, `DROP TABLE task_timelines`, `DELETE FROM task_events WHERE task_id = 't-v8' AND seq = 1`)
	defer s.Close()
	timelinetest.PruneLost(t, s, scope, "after the migration and a prune", "t-v8", all)
}

// reopenAt runs stmts on the schema at u, records it as at version, and
// opens it, which migrates it: the store at SchemaVersion.
func reopenAt(t *testing.T, u string, conn *pgx.Conn, version int, stmts ...string) *Store {
	t.Helper()
	for _, stmt := range append(stmts, fmt.Sprintf(`UPDATE parley_schema SET version = %d`, version)) {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("open a version %d schema: %v", version, err)
	}
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
	return s
}

// migratedStore is migratedSchema with the store open on it; the
// connection closes with the test.
func migratedStore(t *testing.T) (string, *pgx.Conn, *Store) {
	t.Helper()
	u, conn := migratedSchema(t)
	t.Cleanup(func() { conn.Close(context.Background()) })
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u, conn, s
}
