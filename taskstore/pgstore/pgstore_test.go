package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/storetest"
)

// openFresh opens a store on a new schema of db.
func openFresh(t testing.TB, db string, opts *Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), pgtest.NewSchema(t, db), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	db := pgtest.NewDatabase(t)
	storetest.Run(t, func(t *testing.T) taskstore.Store { return openFresh(t, db, nil) })
}

// TestLookupByIDPlan: in a scope of 5,000 tasks that no ANALYZE has seen
// yet, the generic plans of the statements that find one task by id and
// scope go through the primary key, not through a ListTasks index that
// would read the whole scope (see taskByID).
func TestLookupByIDPlan(t *testing.T) {
	s := openFresh(t, pgtest.NewDatabase(t), nil)
	defer s.Close()
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, data)
		SELECT 'fill-' || g, 't', 'alice', 'ctx-' || g, 3, g, ''::bytea FROM generate_series(1, 5000) AS g`); err != nil {
		t.Fatal(err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), `RESET plan_cache_mode`)
	// The group commit runs its statements with generic plans only
	// (committerConfig): every one that reads rows is here (the INSERT of a
	// message record, sqlInsertMessage, reads none).
	for name, sql := range map[string]string{
		"sqlTaskInScope": sqlTaskInScope, "sqlLastSeq": sqlLastSeq, "sqlGetTask": sqlGetTask,
		"sqlAppendStatus": sqlAppendStatus, "sqlAppendChunk": sqlAppendChunk, "sqlAppendArtifact": sqlAppendArtifact,
		"sqlHeadTask": sqlHeadTask, "sqlAddMessage": sqlAddMessage, "sqlEvents": sqlEvents,
		"sqlCreateTask": sqlCreateTask, "sqlSetReply": sqlSetReply,
	} {
		if _, err := conn.Exec(ctx, `PREPARE lookup AS `+sql); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan strings.Builder
		rows, err := conn.Query(ctx, `EXPLAIN EXECUTE lookup(`+explainArgs(sql)+`)`)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for rows.Next() {
			var line string
			rows.Scan(&line)
			plan.WriteString(line + "\n")
		}
		rows.Close()
		if _, err := conn.Exec(ctx, `DEALLOCATE lookup`); err != nil {
			t.Fatal(err)
		}
		key := "tasks_pkey"
		if strings.Contains(sql, "messages") {
			key = "messages_pkey"
		}
		if p := plan.String(); strings.Contains(p, "tasks_by_") || strings.Contains(p, "messages_by_") || !strings.Contains(p, key) {
			t.Errorf("%s does not find the task by its primary key:\n%s", name, p)
		}
	}
}

// explainArgs returns NULL for each parameter of sql, for EXPLAIN EXECUTE
// (the generic plan does not look at them).
func explainArgs(sql string) string {
	n := 0
	for i := 1; strings.Contains(sql, fmt.Sprint("$", i)); i++ {
		n = i
	}
	return strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
}
