package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
)

// listFilter is the conditions of a ListTasks query (package layout).
type listFilter = layout.ListFilter

// listWhere returns the WHERE clause for f and its arguments. Each
// combination of filters matches the leading columns of one of the tasks
// indexes, followed by (status_ms DESC, id DESC), so the keyset
// condition and the ORDER BY walk that index.
func listWhere(f listFilter, sc taskstore.Scope, q taskstore.ListQuery) (string, []any) {
	args := []any{sc.Tenant, sc.Owner}
	w := "tenant = $1 AND owner = $2"
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = fmt.Sprintf(cond, len(args))
		}
		w += " AND " + cond
	}
	if f&layout.WithContext != 0 {
		add("context_id = $%d", q.ContextID)
	}
	if f&layout.WithState != 0 {
		add("state = $%d", int32(q.State))
	}
	if f&layout.WithSince != 0 {
		add("status_ms >= $%d", order.CeilMillis(q.Since))
	}
	if f&layout.WithAfter != 0 {
		args = append(args, q.After.Time.UnixMilli(), q.After.ID)
		w += fmt.Sprintf(" AND (status_ms, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	return w, args
}

// sqlCounter sums the slots of one counter.
const sqlCounter = `SELECT coalesce(sum(n), 0)::bigint FROM task_counts
	WHERE tenant = $1 AND owner = $2 AND kind = $3 AND context_id = $4 AND state = $5`

// sqlPagePieces reads the history and artifacts of a page of tasks.
const sqlPagePieces = `SELECT task_id, ` + historyColumns + ` FROM task_history WHERE task_id = ANY($1)
	UNION ALL SELECT task_id, ` + chunkColumns + ` FROM task_artifacts WHERE task_id = ANY($1)
	ORDER BY 1, 2, 3`

// ListTasks returns one page of the scope's tasks. The total, the page
// and the page's pieces are read in one repeatable-read transaction, so
// they agree with each other.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	var res taskstore.ListResult
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
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
	where, args := listWhere(f, sc, q)
	rows, err := tx.Query(ctx, fmt.Sprintf("SELECT id, data, status FROM tasks WHERE %s ORDER BY status_ms DESC, id DESC LIMIT $%d",
		where, len(args)+1), append(args, limit+1)...)
	if err != nil {
		return res, err
	}
	res.Tasks = make([]*a2a.Task, 0, min(limit, 64))
	ids := make([]string, 0, min(limit, 64))
	for rows.Next() {
		if len(res.Tasks) == limit {
			res.More = true
			break
		}
		var id string
		var data, status []byte
		if err := rows.Scan(&id, &data, &status); err != nil {
			rows.Close()
			return res, err
		}
		t, err := layout.DecodeHeader(data, status, status != nil)
		if err != nil {
			rows.Close()
			return res, err
		}
		res.Tasks = append(res.Tasks, t)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	if len(ids) == 0 {
		return res, nil
	}
	prows, err := tx.Query(ctx, sqlPagePieces, ids)
	if err != nil {
		return res, err
	}
	byID := make(map[string]*layout.Pieces, len(ids))
	for _, id := range ids {
		byID[id] = new(layout.Pieces)
	}
	if err := readPieces(prows, func(id string) *layout.Pieces { return byID[id] }, true); err != nil {
		return res, err
	}
	for i, id := range ids {
		if err := byID[id].Assemble(res.Tasks[i]); err != nil {
			return res, err
		}
	}
	return res, nil
}

// countTasks returns how many tasks match q's filters, ignoring its
// cursor: a range count when q has Since, otherwise the sum of the
// trigger-kept counter's slots.
func countTasks(ctx context.Context, tx pgx.Tx, f listFilter, sc taskstore.Scope, q taskstore.ListQuery) (int, error) {
	var n int64
	if f&layout.WithSince != 0 {
		cf := f &^ layout.WithAfter
		where, args := listWhere(cf, sc, q)
		err := tx.QueryRow(ctx, "SELECT count(*) FROM tasks WHERE "+where, args...).Scan(&n)
		return int(n), err
	}
	kind := f & (layout.WithContext | layout.WithState)
	var ctxKey string
	if kind&layout.WithContext != 0 {
		ctxKey = q.ContextID
	}
	var stateKey int32
	if kind&layout.WithState != 0 {
		stateKey = int32(q.State)
	}
	err := tx.QueryRow(ctx, sqlCounter, sc.Tenant, sc.Owner, int32(kind), ctxKey, stateKey).Scan(&n)
	return int(n), err
}
