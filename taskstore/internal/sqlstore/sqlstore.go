// Package sqlstore is what the two SQL task stores, sqlitestore and
// pgstore, have in common beyond the task layout: the text of the
// statements that differ only in placeholders and literals, the decoding
// of their rows into a2a types (a task from its pieces, a ListTasks page,
// logged events, message records, push configurations and queued
// notifications), the ListTasks filters and counter keys, the encoding of
// an Append, the sealing of push secrets and the scope checks that follow
// a write that matched nothing.
//
// A Dialect carries the little that sets the two apart in that common
// part: how a placeholder is written, the boolean and NULL literals, how
// a task lookup compares its scope, what "no rows" is and which failures
// pass. How a store runs and commits its writes (prepared statements and
// a writer goroutine for SQLite, batches and one-statement CTE writes for
// PostgreSQL), its upserts, locks, leases and notifications, and its
// schema stay in the store.
//
// The shared readers take a driver's result set through Rows, which
// *sql.Rows and pgx.Rows both satisfy, and the hot ones are generic over
// the byte slice type they scan into: sql.RawBytes lets SQLite decode
// rows without copying them, pgx scans into []byte. A reader given Rows
// never closes them, the caller does; the few calls off the hot paths
// that run a query themselves (Query, Sealer.CheckRows,
// Sealer.ResealAll) take a Cursor and close it.
package sqlstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// DeleteBatch bounds how many rows one step of a cleanup (DeleteFinished,
// DeleteMessagesBefore, PruneEvents) removes, so that a large cleanup holds
// the writer, or its locks, only briefly.
const DeleteBatch = 500

// LimitBatch is the LIMIT clause of one step of a cleanup.
var LimitBatch = " LIMIT " + strconv.Itoa(DeleteBatch)

// ResealBatch bounds how many configurations one step of
// ResealPushConfigs reads and rewrites.
const ResealBatch = 100

// Dialect is what one SQL store's shared statements and errors depend on.
// Its values are built once, at package initialization; the statement
// texts its methods render are meant to be computed then too, never on a
// hot path.
type Dialect struct {
	// Name prefixes the store's errors ("sqlitestore").
	Name string
	// Numbered placeholders are $1, $2, …; otherwise each is a ?.
	Numbered bool
	// False is the boolean literal false ("0" where booleans are
	// integers).
	False string
	// NullBytes is a NULL of the byte string type, as a UNION of rows
	// needs it.
	NullBytes string
	// ScopeIs compares a task's tenant and owner with the caller's when a
	// statement finds the task by its id (see TaskByID).
	ScopeIs string
	// NoRows is the driver's error for a query of one row that found
	// none.
	NoRows error
	// Transient reports whether err is a failure that passes (a full
	// disk, a lost connection, a lock timeout), which Unavailable marks.
	Transient func(error) bool
}

// Unavailable marks err with taskstore.ErrUnavailable when it is a
// failure that passes (Transient), so that the server answers it with
// UnavailableError rather than an internal error; other errors are
// returned as they are. Every error a store's method returns goes through
// it: Wrap calls it, and so do the stores' group commits for their
// outcomes (a COMMIT that found the disk full, say).
func (d *Dialect) Unavailable(err error) error {
	if d.Transient(err) {
		return taskstore.Unavailable(err)
	}
	return err
}

// Param returns the placeholder of the nth argument, from 1.
func (d *Dialect) Param(n int) string {
	if d.Numbered {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Bind renders a statement written with a ? for each argument, in the
// order of the arguments, in the dialect's placeholders. The statements
// it is given hold no ? of their own (in a string literal, say).
func (d *Dialect) Bind(query string) string {
	if !d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteString(d.Param(n))
		query = query[i+1:]
	}
}

// TaskByID is the condition that finds a task's header row by its id and
// checks its scope, with placeholders from the nth; alias, when not
// empty, qualifies the columns.
func (d *Dialect) TaskByID(alias string, n int) string {
	if alias != "" {
		alias += "."
	}
	return alias + "id = " + d.Param(n) + " AND " + alias + "tenant " + d.ScopeIs + " " + d.Param(n+1) +
		" AND " + alias + "owner " + d.ScopeIs + " " + d.Param(n+2)
}

// Err prefixes err with the store's name.
func (d *Dialect) Err(err error) error { return fmt.Errorf("%s: %w", d.Name, err) }

// Wrap names the operation that failed with err and marks a failure that
// passes (Unavailable).
func (d *Dialect) Wrap(op string, err error) error {
	return d.Unavailable(fmt.Errorf("%s: %s: %w", d.Name, op, err))
}

// BatchError returns err as an error that does not read as one of a
// write that changed nothing (taskstore.ErrExists, ErrNotFound, ErrSeq): a
// batch that fails after its first write must be rolled back whole.
func (d *Dialect) BatchError(err error) error {
	if Clean(err) {
		return fmt.Errorf("%s: a batch failed after its first write: %s", d.Name, err)
	}
	return err
}

// Clean reports whether a write that failed with err changed nothing:
// the refusals every write makes before its first change
// (taskstore.ErrExists, ErrNotFound, ErrSeq).
func Clean(err error) bool {
	return errors.Is(err, taskstore.ErrExists) || errors.Is(err, taskstore.ErrNotFound) || errors.Is(err, taskstore.ErrSeq)
}

// Refused returns err as it is when it is nil or one of the refusals a
// caller acts on (Clean's, and taskstore.ErrFenced), and otherwise
// wrapped with op (Wrap).
func (d *Dialect) Refused(op string, err error) error {
	if err == nil || Clean(err) || errors.Is(err, taskstore.ErrFenced) {
		return err
	}
	return d.Wrap(op, err)
}

// IsNoRows reports whether err says a query of one row found none.
func (d *Dialect) IsNoRows(err error) bool { return errors.Is(err, d.NoRows) }

// Row is a query's one row as drivers return it (*sql.Row, pgx.Row).
type Row interface {
	Scan(dest ...any) error
}

// Rows is the part of a driver's result set the shared readers use
// (*sql.Rows, pgx.Rows).
type Rows interface {
	Row
	Next() bool
	Err() error
}

// Cursor is a result set that the shared code closes itself (Query):
// pgx.Rows as it is, *sql.Rows through a method Close without a result.
type Cursor interface {
	Rows
	Close()
}

// Query runs a query and reads its rows with read, closing them. A
// failure of either is wrapped with op, unless it is a refusal (Refused).
// It is for the calls off the hot paths: query and read are func values.
func Query[T any](d *Dialect, op string, query func() (Cursor, error), read func(Rows) (T, error)) (T, error) {
	var zero T
	rows, err := query()
	if err != nil {
		return zero, d.Wrap(op, err)
	}
	defer rows.Close()
	v, err := read(rows)
	if err != nil {
		return zero, d.Refused(op, err)
	}
	return v, nil
}

// Cleanup removes what was stored before a time, a batch at a time: it
// runs step, one batch, until it removes fewer than DeleteBatch rows, and
// returns the number removed; a failure is wrapped with op. step gets the
// time as a bound on the millisecond columns (status_ms, created_ms),
// rounded up, so that a value stored at a fraction of a millisecond
// before the time goes too.
func (d *Dialect) Cleanup(op string, before time.Time, step func(cut int64) (int, error)) (int, error) {
	cut, total := order.CeilMillis(before), 0
	for {
		n, err := step(cut)
		total += n
		if err != nil {
			return total, d.Wrap(op, err)
		}
		if n < DeleteBatch {
			return total, nil
		}
	}
}

// Updated is the outcome of a write of one row by its key that changed
// n rows: its failure wrapped with op, taskstore.ErrNotFound when it
// found no row, or nil.
func (d *Dialect) Updated(op string, n int64, err error) error {
	switch {
	case err != nil:
		return d.Wrap(op, err)
	case n == 0:
		return taskstore.ErrNotFound
	}
	return nil
}

// StateList returns the states as a comma-separated list of SQL integers.
func StateList(states []a2a.TaskState) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = strconv.Itoa(int(st))
	}
	return strings.Join(parts, ", ")
}

// Migrate brings a schema at version up to target: for each version v
// below target, it runs the statements of migrations[v] with exec, then
// convert[v+1], where there is one (a conversion of rows the statements
// alone cannot make). A failure names the version it was migrating to.
// The store runs it in one transaction, which it commits.
func Migrate(version, target int, migrations [][]string, exec func(stmt string) error, convert map[int]func() error) error {
	for v := version; v < target; v++ {
		for _, stmt := range migrations[v] {
			if err := exec(stmt); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
			}
		}
		if c := convert[v+1]; c != nil {
			if err := c(); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
			}
		}
	}
	return nil
}
