package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"parley.dev/parley/taskstore/internal/sqlstore"
)

// deleteBatch bounds how many rows one cleanup transaction removes, so that
// a large cleanup does not hold the writer for long.
const deleteBatch = sqlstore.DeleteBatch

// prepare prepares every statement the store runs, each on the pool that
// runs it. The statements are listed by role, next to the methods that
// use them.
func (s *Store) prepare() error {
	p := &preparer{s: s}
	s.prepareTasks(p)
	s.prepareEvents(p)
	s.prepareList(p)
	s.preparePushConfigs(p)
	s.prepareOutbox(p)
	s.prepareSecrets(p)
	s.prepareMessages(p)
	s.probeWrite = p.writer(`INSERT INTO write_probe (id, at_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms`)
	s.prepareGroupCommit(p)
	return p.err
}

// preparer prepares statements for a Store and keeps the first error:
// once one statement fails, the others are skipped and return nil.
type preparer struct {
	s   *Store
	err error
}

// writer prepares a query that runs on the writer connection.
func (p *preparer) writer(query string) *sql.Stmt { return p.prepare(p.s.writer, query, true) }

// reader prepares a query that runs on the reader pool.
func (p *preparer) reader(query string) *sql.Stmt { return p.prepare(p.s.reader, query, true) }

// command prepares a writer statement that is not a query (a savepoint),
// which the query plan test leaves out.
func (p *preparer) command(query string) *sql.Stmt { return p.prepare(p.s.writer, query, false) }

func (p *preparer) prepare(db *sql.DB, query string, isQuery bool) *sql.Stmt {
	if p.err != nil {
		return nil
	}
	st, err := db.Prepare(query)
	if err != nil {
		if isQuery {
			p.err = fmt.Errorf("prepare %q: %w", query, err)
		} else {
			p.err = err
		}
		return nil
	}
	p.s.stmts = append(p.s.stmts, st)
	if isQuery {
		p.s.queries = append(p.s.queries, query)
	}
	return st
}

// rowCounts are the sizes of a multiInsert's statements, largest first.
var rowCounts = [...]int{16, 8, 4, 2, 1}

// multiInsert inserts many rows of one table with few statements: one
// INSERT prepared for each of rowCounts. Each statement run costs the
// store's caller about as much again as the row it inserts (database/sql,
// the driver's bindings, SQLite's opening and closing of the table's
// cursors), so a new task's 22 history rows go in three statements (16,
// 4 and 2 rows) rather than 22.
type multiInsert struct {
	width int // the values of one row
	stmts [len(rowCounts)]*sql.Stmt
}

// multiInsert prepares the writer statements of a multiInsert; head is
// the statement up to VALUES, width the number of columns it names.
func (p *preparer) multiInsert(head string, width int) *multiInsert {
	m := &multiInsert{width: width}
	row := "(?" + strings.Repeat(", ?", width-1) + ")"
	for i, n := range rowCounts {
		m.stmts[i] = p.writer(head + " VALUES " + row + strings.Repeat(", "+row, n-1))
	}
	return m
}

// exec inserts the rows whose values args holds, one row after the other,
// in the write.
func (m *multiInsert) exec(w *wtx, args []any) error {
	for len(args) > 0 {
		rows := len(args) / m.width
		i := 0
		for rowCounts[i] > rows {
			i++
		}
		n := rowCounts[i] * m.width
		if _, err := w.exec(context.Background(), m.stmts[i], args[:n]...); err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}

// affected returns the row count of an Exec result.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deleteBefore runs a batched DELETE of what was stored before a time,
// each batch its own transaction, until it removes fewer than a batch,
// and returns the number of rows removed; a failure is wrapped with op.
func (s *Store) deleteBefore(ctx context.Context, op string, st *sql.Stmt, before time.Time) (int, error) {
	return dialect.Cleanup(op, before, func(cut int64) (int, error) {
		n, err := affected(st.ExecContext(ctx, cut))
		return int(n), err
	})
}

// cursor is database/sql's result set as sqlstore.Query closes it.
type cursor struct{ *sql.Rows }

func (c cursor) Close() { c.Rows.Close() }

// query adapts the outcome of a query to sqlstore.Query.
func query(rows *sql.Rows, err error) (sqlstore.Cursor, error) {
	if err != nil {
		return nil, err
	}
	return cursor{rows}, nil
}
