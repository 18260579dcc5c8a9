package sqlitestore

import (
	"errors"
	"fmt"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// codedError stands for the driver's *sqlite.Error, whose fields tests
// cannot set: an error with a SQLite result code.
type codedError int

func (c codedError) Error() string { return fmt.Sprintf("sqlite error (%d)", int(c)) }
func (c codedError) Code() int     { return int(c) }

// TestTransient: the SQLite result codes of failures that pass (a full
// disk, I/O errors, locks held past the busy timeout, a file that cannot
// be opened or became read-only), extended codes included, and a closed
// store are marked unavailable; damage, constraint violations and other
// errors are not.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{codedError(sqlite3.SQLITE_FULL), true},
		{codedError(sqlite3.SQLITE_IOERR), true},
		{codedError(sqlite3.SQLITE_IOERR_WRITE), true},
		{codedError(sqlite3.SQLITE_IOERR_FSYNC), true},
		{codedError(sqlite3.SQLITE_BUSY), true},
		{codedError(sqlite3.SQLITE_BUSY_SNAPSHOT), true},
		{codedError(sqlite3.SQLITE_LOCKED), true},
		{codedError(sqlite3.SQLITE_PROTOCOL), true},
		{codedError(sqlite3.SQLITE_CANTOPEN), true},
		{codedError(sqlite3.SQLITE_READONLY), true},
		{codedError(sqlite3.SQLITE_READONLY_DBMOVED), true},
		{fmt.Errorf("commit: %w", codedError(sqlite3.SQLITE_FULL)), true},
		{errClosed, true},
		{codedError(sqlite3.SQLITE_CORRUPT), false},
		{codedError(sqlite3.SQLITE_NOTADB), false},
		{codedError(sqlite3.SQLITE_CONSTRAINT_UNIQUE), false},
		{codedError(sqlite3.SQLITE_ERROR), false},
		{codedError(sqlite3.SQLITE_INTERRUPT), false},
		{taskstore.ErrNotFound, false},
		{errors.New("something else"), false},
		{nil, false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := errors.Is(wrap("op", c.err), taskstore.ErrUnavailable); c.err != nil && got != c.want {
			t.Errorf("wrap(%v) is ErrUnavailable: %v, want %v", c.err, got, c.want)
		}
	}
}

// TestUnavailableKeepsTheCause: a marked error keeps the driver's error
// and text (for logs), and the server's conversion makes it
// UnavailableError with the store's message only.
func TestUnavailableKeepsTheCause(t *testing.T) {
	driver := codedError(sqlite3.SQLITE_FULL)
	err := wrap("append", driver)
	if !errors.Is(err, driver) || err.Error() != "sqlitestore: append: "+driver.Error() {
		t.Fatalf("wrap = %q, lost the driver's error", err)
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) || coded.Code() != sqlite3.SQLITE_FULL {
		t.Fatalf("errors.As(wrap, coded) lost the code")
	}
	e := a2a.Internal(err)
	if e.Code != a2a.CodeUnavailable || e.WireMessage() != "the task store is unavailable; retry later" || !errors.Is(e, driver) {
		t.Fatalf("a2a.Internal(wrap) = %s %q (cause kept: %v)", e.Code.Name(), e.WireMessage(), errors.Is(e, driver))
	}
}

// TestClosedStoreIsUnavailable: a write that meets a closed store, the
// real one, is marked unavailable.
func TestClosedStoreIsUnavailable(t *testing.T) {
	s := openTemp(t)
	s.Close()
	task := &a2a.Task{Id: "t1", ContextId: "c1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	err := s.CreateTask(t.Context(), taskstore.Scope{}, task, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: task}}})
	if !errors.Is(err, taskstore.ErrUnavailable) {
		t.Fatalf("CreateTask on a closed store = %v, want ErrUnavailable", err)
	}
}
