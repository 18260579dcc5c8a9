package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// deleteBatch bounds how many rows one cleanup transaction removes, so that
// a large cleanup does not hold the writer for long.
const deleteBatch = 500

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

// affected returns the row count of an Exec result.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deleteInBatches runs a batched DELETE until it removes nothing and
// returns the number of rows removed.
func deleteInBatches(ctx context.Context, st *sql.Stmt, arg any) (int, error) {
	total := 0
	for {
		res, err := st.ExecContext(ctx, arg)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
	}
}
