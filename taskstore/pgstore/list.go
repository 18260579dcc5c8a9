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

// listIn runs ListTasks inside a read transaction: a range count when q
// has Since or a context (sqlstore.RangeCounted), otherwise the sum of the
// trigger-kept counter's slots.
func listIn(ctx context.Context, tx pgx.Tx, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	return sqlstore.ListIn[[]byte](dialect, sqlstore.ListQueries{
		Count:   func(f listFilter, args []any) sqlstore.Row { return tx.QueryRow(ctx, sqlCount[f], args...) },
		Counter: func(args ...any) sqlstore.Row { return tx.QueryRow(ctx, sqlCounter, args...) },
		Page: func(f listFilter, args []any) (sqlstore.Cursor, error) {
			return tx.Query(ctx, sqlList[f], args...)
		},
		Pieces: func(ids []string) (sqlstore.Cursor, error) { return tx.Query(ctx, sqlPagePieces, ids) },
	}, sc, q)
}
