package pgstore

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
)

// TestConfigure: the store's timeout becomes connect_timeout and
// statement_timeout unless the URL sets them, and the dialer keeps
// connections alive with probes.
func TestConfigure(t *testing.T) {
	for _, c := range []struct {
		url           string
		connect       time.Duration
		statementTime string
	}{
		{"postgres://u@h/db", 1500 * time.Millisecond, "1500"},
		{"postgres://u@h/db?connect_timeout=7", 7 * time.Second, "1500"},
		{"postgres://u@h/db?statement_timeout=9000", 1500 * time.Millisecond, "9000"},
	} {
		cfg, err := pgxpool.ParseConfig(c.url)
		if err != nil {
			t.Fatal(err)
		}
		configure(cfg, 1500*time.Millisecond)
		if got := cfg.ConnConfig.ConnectTimeout; got != c.connect {
			t.Errorf("%s: connect timeout %v, want %v", c.url, got, c.connect)
		}
		if got := cfg.ConnConfig.RuntimeParams["statement_timeout"]; got != c.statementTime {
			t.Errorf("%s: statement_timeout %q, want %q", c.url, got, c.statementTime)
		}
		if cfg.ConnConfig.DialFunc == nil {
			t.Errorf("%s: no dialer of the store's", c.url)
		}
	}
}

// TestTimeoutBoundsEveryCall: with the tables locked by another
// session, a call of each kind the store makes (a query, a query of one
// row, a group commit, a transaction, a read transaction) fails within the
// store's timeout with an error that passes, while the caller's own
// context is still live; once the lock is gone, the same calls succeed.
func TestTimeoutBoundsEveryCall(t *testing.T) {
	url := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	s, err := Open(t.Context(), url, &Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	tk := newTask("t1", 0)
	if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	task := func(id string, seq uint64) taskstore.Event {
		return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: newTask(id, 1)}}}
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"GetTask (a query)", func() error { _, err := s.GetTask(ctx, scope, "t1"); return err }},
		{"GetPushConfig (a query of one row)", func() error {
			_, err := s.GetPushConfig(ctx, scope, "t1", "none")
			if errors.Is(err, taskstore.ErrNotFound) {
				return nil
			}
			return err
		}},
		// The appends that fail while the table is locked write nothing:
		// they are the task's events 2 and 3 once it is not.
		{"Append of a status (a group commit)", func() error {
			return s.Append(ctx, scope, "t1", status("t1", 2, a2a.TaskState_TASK_STATE_WORKING))
		}},
		{"Append of a task (a transaction)", func() error { return s.Append(ctx, scope, "t1", task("t1", 3)) }},
		{"ListTasks (a read transaction)", func() error {
			_, err := s.ListTasks(ctx, scope, taskstore.ListQuery{Limit: 10})
			return err
		}},
	}

	lock, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(context.Background())
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE tasks, push_configs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		err := c.call()
		if !errors.Is(err, taskstore.ErrUnavailable) || ctx.Err() != nil {
			t.Errorf("%s, with the table locked: %v, want ErrUnavailable before the caller's deadline", c.name, err)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Errorf("%s, once the lock is gone: %v", c.name, err)
		}
	}
}

// TestUserTimeout: the store's dialer sets TCP_USER_TIMEOUT on TCP
// connections (on Linux) and leaves other sockets alone.
func TestUserTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, err := pgxpool.ParseConfig("postgres://u@" + ln.Addr().String() + "/db")
	if err != nil {
		t.Fatal(err)
	}
	configure(cfg, 1500*time.Millisecond)
	c, err := cfg.ConnConfig.DialFunc(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the store's dialer: %v", err)
	}
	defer c.Close()
	if got, ok := userTimeoutOf(t, c); ok && got != 1500 {
		t.Errorf("TCP_USER_TIMEOUT = %d ms, want 1500", got)
	}
}
