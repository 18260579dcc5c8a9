package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore/pgtest"
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
	if _, err := conn.Exec(t.Context(), `UPDATE parley_schema SET version = $1`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())
	_, err = Open(t.Context(), u, nil)
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
// with the counters' trigger of that version: Open upgrades it to the
// current version, replacing the trigger's function, and the counts
// stay right.
func TestMigrateFromVersion2(t *testing.T) {
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	s, err := Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		tk := newTask(fmt.Sprint("t-", i), i)
		if err := s.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Version 2's function: one DELETE for both kinds of per-context
	// counters.
	old := strings.Replace(countFunction, `kind = 1
			AND context_id = OLD.context_id AND state = 0 AND`, `kind IN (1, 3)
			AND context_id = OLD.context_id AND`, 1)
	if old == countFunction {
		t.Fatal("the test's version 2 function is the current one")
	}
	if _, err := conn.Exec(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `UPDATE parley_schema SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), u, nil)
	if err != nil {
		t.Fatalf("open a version 2 database: %v", err)
	}
	defer s.Close()
	if v := schemaVersion(t, u); v != SchemaVersion {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion)
	}
	var src string
	if err := conn.QueryRow(t.Context(), `SELECT prosrc FROM pg_proc WHERE proname = 'parley_count_tasks'
		AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`).Scan(&src); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(src, "IN (1, 3)") || !strings.Contains(src, "kind = 3") {
		t.Fatalf("the trigger's function was not replaced:\n%s", src)
	}
	if err := s.Append(t.Context(), scope, "t-0", status("t-0", 2, a2a.TaskState_TASK_STATE_COMPLETED)); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListTasks(t.Context(), scope, taskstore.ListQuery{State: a2a.TaskState_TASK_STATE_WORKING, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 {
		t.Fatalf("%d WORKING tasks counted, want 2", page.Total)
	}
}
