package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
)

// insertWrite is a write that inserts n into the table commit_test and
// reads back the row count of its INSERT.
func insertWrite(n int, rows *int64) *write {
	return &write{
		scope: scopeKey(scope),
		queue: func(b *pgx.Batch) { b.Queue(`INSERT INTO commit_test (n) VALUES ($1)`, n) },
		read: func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			*rows = tag.RowsAffected()
			return err
		},
		done: make(chan struct{}),
	}
}

// committed returns the numbers in commit_test, in order.
func committed(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.pool.Query(t.Context(), `SELECT n FROM commit_test ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func newCommitTest(t *testing.T) *Store {
	s := openFresh(t, pgtest.NewDatabase(t), nil)
	t.Cleanup(func() { s.Close() })
	if _, err := s.pool.Exec(t.Context(), `CREATE TABLE commit_test (n integer PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGroupOneFails runs a group of three inserts whose second breaks the
// primary key: the group is rolled back and run again write by write, so
// the other two are committed and only the second fails, with
// PostgreSQL's error.
func TestGroupOneFails(t *testing.T) {
	s := newCommitTest(t)
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO commit_test (n) VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	rows := make([]int64, 3)
	group := []*write{insertWrite(1, &rows[0]), insertWrite(2, &rows[1]), insertWrite(3, &rows[2])}
	s.commit.flush(group)
	for i, w := range group {
		select {
		case <-w.done:
		default:
			t.Fatalf("write %d not done", i)
		}
	}
	var pgErr *pgconn.PgError
	if !errors.As(group[1].err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("write of a taken key: %v, want a unique violation", group[1].err)
	}
	if group[0].err != nil || group[2].err != nil || rows[0] != 1 || rows[2] != 1 {
		t.Fatalf("the other writes: %v (%d rows), %v (%d rows)", group[0].err, rows[0], group[2].err, rows[2])
	}
	if got := fmt.Sprint(committed(t, s)); got != "[1 2 3]" {
		t.Fatalf("table holds %s, want [1 2 3]", got)
	}
}

// TestGroupCommitConcurrent has 64 goroutines write at once through the
// committer, every tenth a duplicate: each gets its own outcome, and the
// table holds exactly the writes that succeeded.
func TestGroupCommitConcurrent(t *testing.T) {
	s := newCommitTest(t)
	const n = 640
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := g; i < n; i += 64 {
				key := i
				if i%10 == 9 {
					key = i - 1 // taken by the write before it, or about to be
				}
				var rows int64
				errs[i] = s.commit.do(context.Background(), insertWrite(key, &rows))
				if errs[i] == nil && rows != 1 {
					errs[i] = fmt.Errorf("%d rows", rows)
				}
			}
		})
	}
	wg.Wait()
	want := map[int]bool{}
	for i, err := range errs {
		switch {
		case i%10 == 8 || i%10 == 9:
			// One of the two writes of key i-i%10+8 wins.
			if err == nil {
				want[i-i%10+8] = true
			}
		case err != nil:
			t.Errorf("write %d: %v", i, err)
		default:
			want[i] = true
		}
	}
	for i := 8; i < n; i += 10 {
		if (errs[i] == nil) == (errs[i+1] == nil) {
			t.Errorf("key %d: errors %v and %v, want exactly one", i, errs[i], errs[i+1])
		}
	}
	got := committed(t, s)
	if len(got) != len(want) {
		t.Fatalf("%d rows committed, want %d", len(got), len(want))
	}
	for _, k := range got {
		if !want[k] {
			t.Errorf("row %d committed, but no write of it succeeded", k)
		}
	}
}

// TestGroupCommitAfterClose: a write after Close fails at once.
func TestGroupCommitAfterClose(t *testing.T) {
	s := newCommitTest(t)
	s.Close()
	var rows int64
	if err := s.commit.do(t.Context(), insertWrite(1, &rows)); !errors.Is(err, errClosed) {
		t.Fatalf("write after Close: %v, want errClosed", err)
	}
}

// TestGroupsOfTwoStores has two stores on one database, as two replicas,
// write tasks of one scope from 32 goroutines each: every write
// succeeds, and no group is rolled back, as one would be when the two
// stores' groups deadlocked on the scope's ListTasks counters (without
// the scope locks, several per run).
func TestGroupsOfTwoStores(t *testing.T) {
	db := pgtest.NewDatabase(t)
	u := pgtest.NewSchema(t, db)
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Open(t.Context(), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	var wg sync.WaitGroup
	for g := range 64 {
		s := stores[g%2]
		wg.Go(func() {
			for i := range 15 {
				id := fmt.Sprintf("t-%d-%d", g, i)
				tk := newTask(id, i)
				if err := s.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
					t.Error(err)
					return
				}
				for n, st := range []a2a.TaskState{a2a.TaskState_TASK_STATE_INPUT_REQUIRED,
					a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED} {
					if err := s.Append(t.Context(), scope, id, status(id, uint64(n+2), st)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for i, s := range stores {
		if n := s.commit.rollbacks.Load(); n != 0 {
			t.Errorf("store %d: %d groups rolled back", i, n)
		}
	}
	page, err := stores[0].ListTasks(t.Context(), scope, taskstore.ListQuery{State: a2a.TaskState_TASK_STATE_COMPLETED, Limit: 1})
	if err != nil || page.Total != 64*15 {
		t.Fatalf("%d COMPLETED tasks counted (%v), want %d", page.Total, err, 64*15)
	}
}
