package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// listFilter is the conditions of a ListTasks query (package layout).
type listFilter = layout.ListFilter

// listSQL returns the page query for f; its last argument is the row
// limit.
func listSQL(f listFilter) string { return dialect.ListSQL(f) }

// countSQL returns the range count for f, which must not have
// layout.WithAfter.
func countSQL(f listFilter) string { return dialect.CountSQL(f) }

// listArgs returns the arguments of the WHERE clause for f.
func listArgs(f listFilter, sc taskstore.Scope, q taskstore.ListQuery) []any {
	return sqlstore.ListArgs(f, sc, q)
}

// prepareList prepares a page query for every filter combination, a range
// count for those sqlstore.RangeCounted, and the counter lookup for the others.
func (s *Store) prepareList(p *preparer) {
	for f := range listFilter(len(s.list)) {
		s.list[f] = p.reader(listSQL(f))
	}
	for f := range listFilter(len(s.countRange)) {
		if sqlstore.RangeCounted(f) {
			s.countRange[f] = p.reader(countSQL(f))
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
	limit := max(q.Limit, 1)
	f := layout.FilterOf(q)
	var res taskstore.ListResult
	var err error
	if res.Total, err = s.countTasks(ctx, tx, f, sc, q); err != nil {
		return res, err
	}
	rows, err := tx.StmtContext(ctx, s.list[f]).QueryContext(ctx, append(listArgs(f, sc, q), limit+1)...)
	if err != nil {
		return res, err
	}
	pg, err := sqlstore.ReadPage[sql.RawBytes](rows, limit)
	rows.Close()
	if err != nil || len(pg.IDs) == 0 {
		return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, err
	}
	list, err := json.Marshal(pg.IDs)
	if err != nil {
		return res, err
	}
	prows, err := tx.StmtContext(ctx, s.pagePieces).QueryContext(ctx, string(list))
	if err != nil {
		return res, err
	}
	defer prows.Close()
	if err := sqlstore.Assemble[sql.RawBytes](dialect, pg, prows); err != nil {
		return res, err
	}
	return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, nil
}

// countTasks returns how many tasks match q's filters, ignoring its cursor:
// a range count when q has Since or a context (over the index of its
// filters, so its cost grows with the tasks at or after Since, or in the
// context), otherwise the trigger-kept counter of the scope, or of the
// scope and state (no row means none).
func (s *Store) countTasks(ctx context.Context, tx *sql.Tx, f listFilter, sc taskstore.Scope, q taskstore.ListQuery) (int, error) {
	var n int
	if cf := f &^ layout.WithAfter; sqlstore.RangeCounted(cf) {
		err := tx.StmtContext(ctx, s.countRange[cf]).QueryRowContext(ctx, listArgs(cf, sc, q)...).Scan(&n)
		return n, err
	}
	kind, ctxKey, stateKey := sqlstore.CounterKey(f, q)
	err := tx.StmtContext(ctx, s.counter).QueryRowContext(ctx, sc.Tenant, sc.Owner, kind, ctxKey, stateKey).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
