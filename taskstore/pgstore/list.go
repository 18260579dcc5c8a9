package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// listFilter is the conditions of a ListTasks query (package layout).
type listFilter = layout.ListFilter

// The page query and the range count of every combination of filters,
// rendered once (sqlstore.Dialect.ListSQL, CountSQL). Each combination
// matches the leading columns of one of the tasks indexes, followed by
// (status_ms DESC, id DESC), so the keyset condition and the ORDER BY
// walk that index.
var sqlList, sqlCount = func() (list, count [16]string) {
	for f := range listFilter(len(list)) {
		list[f], count[f] = dialect.ListSQL(f), dialect.CountSQL(f)
	}
	return list, count
}()

// sqlCounter sums the slots of one counter.
const sqlCounter = `SELECT coalesce(sum(n), 0)::bigint FROM task_counts
	WHERE tenant = $1 AND owner = $2 AND kind = $3 AND context_id = $4 AND state = $5`

// sqlPagePieces reads the history and artifacts of a page of tasks.
var sqlPagePieces = `SELECT task_id, ` + dialect.HistoryColumns() + ` FROM task_history WHERE task_id = ANY($1)
	UNION ALL SELECT task_id, ` + dialect.ChunkColumns() + ` FROM task_artifacts WHERE task_id = ANY($1)
	ORDER BY 1, 2, 3`

// ListTasks returns one page of the scope's tasks. The total, the page
// and the page's pieces are read in one repeatable-read transaction, so
// they agree with each other.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	var res taskstore.ListResult
	err := s.pool.inTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		res, err = listIn(ctx, tx, sc, q)
		return err
	})
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	return res, nil
}

// listIn runs ListTasks inside a read transaction.
func listIn(ctx context.Context, tx pgx.Tx, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	limit := max(q.Limit, 1)
	f := layout.FilterOf(q)
	var res taskstore.ListResult
	var err error
	if res.Total, err = countTasks(ctx, tx, f, sc, q); err != nil {
		return res, err
	}
	rows, err := tx.Query(ctx, sqlList[f], append(sqlstore.ListArgs(f, sc, q), limit+1)...)
	if err != nil {
		return res, err
	}
	pg, err := sqlstore.ReadPage[[]byte](rows, limit)
	rows.Close()
	if err != nil || len(pg.IDs) == 0 {
		return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, err
	}
	prows, err := tx.Query(ctx, sqlPagePieces, pg.IDs)
	if err != nil {
		return res, err
	}
	defer prows.Close()
	if err := sqlstore.Assemble[[]byte](dialect, pg, prows); err != nil {
		return res, err
	}
	return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, nil
}

// countTasks returns how many tasks match q's filters, ignoring its
// cursor: a range count when q has Since or a context
// (sqlstore.RangeCounted), otherwise the sum of the trigger-kept counter's
// slots.
func countTasks(ctx context.Context, tx pgx.Tx, f listFilter, sc taskstore.Scope, q taskstore.ListQuery) (int, error) {
	var n int64
	if cf := f &^ layout.WithAfter; sqlstore.RangeCounted(cf) {
		err := tx.QueryRow(ctx, sqlCount[cf], sqlstore.ListArgs(cf, sc, q)...).Scan(&n)
		return int(n), err
	}
	kind, ctxKey, stateKey := sqlstore.CounterKey(f, q)
	err := tx.QueryRow(ctx, sqlCounter, sc.Tenant, sc.Owner, kind, ctxKey, stateKey).Scan(&n)
	return int(n), err
}
