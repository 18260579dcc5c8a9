package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
)

// TestTransient: the PostgreSQL errors of failures that pass (server
// shutting down or starting, too many connections, a full disk,
// serialization failures and deadlocks, connection exceptions), lost or
// refused connections, a lapsed lease and a closed store are marked
// unavailable; errors in the statement or the data, and bad credentials,
// are not.
func TestTransient(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "m"} }
	for _, c := range []struct {
		err  error
		want bool
	}{
		{pg("57P01"), true}, // admin_shutdown
		{pg("57P02"), true}, // crash_shutdown
		{pg("57P03"), true}, // cannot_connect_now
		{pg("40001"), true}, // serialization_failure
		{pg("40P01"), true}, // deadlock_detected
		{pg("53300"), true}, // too_many_connections
		{pg("53100"), true}, // disk_full
		{pg("58030"), true}, // io_error
		{pg("08006"), true}, // connection_failure
		{pg("08001"), true}, // sqlclient_unable_to_establish_sqlconnection
		{pg("25006"), true}, // read_only_sql_transaction (a standby)
		{fmt.Errorf("batch: %w", pg("40001")), true},
		{pg("23505"), false}, // unique_violation
		{pg("42P01"), false}, // undefined_table
		{pg("22P02"), false}, // invalid_text_representation
		{pg("28P01"), false}, // invalid_password
		{pg("3D000"), false}, // invalid_catalog_name
		{pgconn.ErrConnClosed, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{taskstore.ErrFenced, true},
		{errClosed, true},
		{taskstore.ErrNotFound, false},
		{context.Canceled, false},
		{errors.New("something else"), false},
		{nil, false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
		if c.err == nil {
			continue
		}
		err := wrap("op", c.err)
		if got := errors.Is(err, taskstore.ErrUnavailable); got != c.want {
			t.Errorf("wrap(%v) is ErrUnavailable: %v, want %v", c.err, got, c.want)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("wrap(%v) lost the cause", c.err)
		}
		if code := a2a.Internal(err).Code; (code == a2a.CodeUnavailable) != c.want {
			t.Errorf("a2a.Internal(wrap(%v)) = %s", c.err, code.Name())
		}
	}
}

// TestConnectionRefused: a real connection refused. Opening a store at a
// closed port fails with an error marked unavailable; and a store whose
// database went away (a proxy in front of PostgreSQL is closed: open
// connections reset, new ones refused) fails its reads and writes with
// errors marked unavailable, each keeping PostgreSQL's driver error.
func TestConnectionRefused(t *testing.T) {
	server := pgtest.ServerURL(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := Open(ctx, u.String(), nil); !transient(err) {
		t.Fatalf("Open at a closed port = %v, want an error that passes", err)
	}

	db, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, db.Host)
	db.Host = p.addr
	s, err := Open(ctx, db.String(), nil)
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	defer s.Close()
	tk := newTask("t1", 0)
	if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	p.close()
	if _, err := s.GetTask(ctx, scope, "t1"); !errors.Is(err, taskstore.ErrUnavailable) {
		t.Errorf("GetTask with the database gone = %v, want ErrUnavailable", err)
	}
	tk2 := newTask("t2", 1)
	if err := s.CreateTask(ctx, scope, tk2, snapshot(tk2)); !errors.Is(err, taskstore.ErrUnavailable) {
		t.Errorf("CreateTask with the database gone = %v, want ErrUnavailable", err)
	} else if e := a2a.AsError(err); e.Code != a2a.CodeUnavailable {
		t.Errorf("a2a.AsError(CreateTask's error) = %s, want UnavailableError", e.Code.Name())
	}
	if _, err := s.ListTasks(ctx, scope, taskstore.ListQuery{Limit: 10}); !errors.Is(err, taskstore.ErrUnavailable) {
		t.Errorf("ListTasks with the database gone = %v, want ErrUnavailable", err)
	}
}

// proxy forwards TCP connections to a PostgreSQL server until closed.
type proxy struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(p.close)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

// close stops accepting and cuts every connection.
func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
