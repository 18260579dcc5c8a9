package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// listFilter is the conditions of a ListTasks query (package layout).
type listFilter = layout.ListFilter

// prepareList prepares a page query for every filter combination, a range
// count for those sqlstore.RangeCounted, and the counter lookup for the others.
func (s *Store) prepareList(p *preparer) {
	for f := range listFilter(len(s.list)) {
		s.list[f] = p.reader(dialect.ListSQL(f))
	}
	for f := range listFilter(len(s.countRange)) {
		if sqlstore.RangeCounted(f) {
			s.countRange[f] = p.reader(dialect.CountSQL(f))
		}
	}
	s.counter = p.reader(`SELECT n FROM task_counts
		WHERE tenant = ? AND owner = ? AND kind = ? AND context_id = ? AND state = ?`)
	// The history and artifacts of a whole page at once, in one
	// statement, its task ids given as a JSON array.
	const page = ` WHERE task_id IN (SELECT value FROM json_each(?1))`
	s.pagePieces = p.reader(`SELECT task_id, ` + dialect.HistoryColumns() + ` FROM ` + historyByN + page +
		` UNION ALL SELECT task_id, ` + dialect.ChunkColumns() + ` FROM ` + chunksByN + page)
}

// ListTasks returns one page of the scope's tasks. The page and the total
// are read in one read transaction, so they agree with each other.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	defer tx.Rollback()
	res, err := s.listIn(ctx, tx, sc, q)
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	return res, nil
}

// listIn runs ListTasks inside its read transaction.
func (s *Store) listIn(ctx context.Context, tx *sql.Tx, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	return sqlstore.ListIn[sql.RawBytes](dialect, sqlstore.ListQueries{
		// A range count when q has Since or a context (over the index of
		// its filters, so its cost grows with the tasks at or after Since,
		// or in the context), otherwise the trigger-kept counter of the
		// scope, or of the scope and state.
		Count: func(f listFilter, args []any) sqlstore.Row {
			return tx.StmtContext(ctx, s.countRange[f]).QueryRowContext(ctx, args...)
		},
		Counter: func(args ...any) sqlstore.Row { return tx.StmtContext(ctx, s.counter).QueryRowContext(ctx, args...) },
		Page: func(f listFilter, args []any) (sqlstore.Cursor, error) {
			return query(tx.StmtContext(ctx, s.list[f]).QueryContext(ctx, args...))
		},
		Pieces: func(ids []string) (sqlstore.Cursor, error) {
			list, err := json.Marshal(ids)
			if err != nil {
				return nil, err
			}
			return query(tx.StmtContext(ctx, s.pagePieces).QueryContext(ctx, string(list)))
		},
	}, sc, q)
}
