package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
)

// listFilter is the conditions of a ListTasks query (package layout).
type listFilter = layout.ListFilter

// listWhere returns the WHERE clause for f. listArgs must produce the arguments in
// the same order.
func listWhere(f listFilter) string {
	w := "tenant = ? AND owner = ?"
	if f&layout.WithContext != 0 {
		w += " AND context_id = ?"
	}
	if f&layout.WithState != 0 {
		w += " AND state = ?"
	}
	if f&layout.WithSince != 0 {
		w += " AND status_ms >= ?"
	}
	if f&layout.WithAfter != 0 {
		w += " AND (status_ms, id) < (?, ?)"
	}
	return w
}

// listArgs returns the arguments of the WHERE clause for f.
func listArgs(f listFilter, sc taskstore.Scope, q taskstore.ListQuery) []any {
	a := []any{sc.Tenant, sc.Owner}
	if f&layout.WithContext != 0 {
		a = append(a, q.ContextID)
	}
	if f&layout.WithState != 0 {
		a = append(a, int32(q.State))
	}
	if f&layout.WithSince != 0 {
		a = append(a, order.CeilMillis(q.Since))
	}
	if f&layout.WithAfter != 0 {
		a = append(a, q.After.Time.UnixMilli(), q.After.ID)
	}
	return a
}

// listSQL returns the page query for f; its last argument is the row limit.
func listSQL(f listFilter) string {
	return "SELECT id, data, status, status IS NOT NULL FROM tasks WHERE " + listWhere(f) + " ORDER BY status_ms DESC, id DESC LIMIT ?"
}

// countSQL returns the range count for f, which must have layout.WithSince and
// not layout.WithAfter.
func countSQL(f listFilter) string {
	return "SELECT count(*) FROM tasks WHERE " + listWhere(f)
}

// prepareList prepares a page query for every filter combination, a range
// count for those with Since, and the counter lookup for the others.
func (s *Store) prepareList(p *preparer) {
	for f := range listFilter(len(s.list)) {
		s.list[f] = p.reader(listSQL(f))
	}
	for f := range listFilter(len(s.countSince)) {
		if f&layout.WithSince != 0 {
			s.countSince[f] = p.reader(countSQL(f))
		}
	}
	s.counter = p.reader(`SELECT n FROM task_counts
		WHERE tenant = ? AND owner = ? AND kind = ? AND context_id = ? AND state = ?`)
	// The history and artifacts of a whole page at once, in one
	// statement (see readPieces), its task ids given as a JSON array.
	const page = ` WHERE task_id IN (SELECT value FROM json_each(?1))`
	s.pagePieces = p.reader(`SELECT task_id, ` + historyColumns + ` FROM task_history` + page +
		` UNION ALL SELECT task_id, ` + chunkColumns + ` FROM task_artifacts` + page)
}

// ListTasks returns one page of the scope's tasks. The page and the total
// are read in one read transaction, so they agree with each other.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	limit := max(q.Limit, 1)
	f := layout.FilterOf(q)

	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	defer tx.Rollback()

	var res taskstore.ListResult
	if res.Total, err = s.countTasks(ctx, tx, f, sc, q); err != nil {
		return taskstore.ListResult{}, wrap("count tasks", err)
	}
	rows, err := tx.StmtContext(ctx, s.list[f]).QueryContext(ctx, append(listArgs(f, sc, q), limit+1)...)
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	defer rows.Close()
	res.Tasks = make([]*a2a.Task, 0, min(limit, 64))
	ids := make([]string, 0, min(limit, 64))
	for rows.Next() {
		if len(res.Tasks) == limit {
			res.More = true
			break
		}
		var id string
		var data, status sql.RawBytes
		var hasStatus int64
		if err := rows.Scan(&id, &data, &status, &hasStatus); err != nil {
			return taskstore.ListResult{}, wrap("list tasks", err)
		}
		t, err := layout.DecodeHeader(data, status, hasStatus != 0)
		if err != nil {
			return taskstore.ListResult{}, wrap("list tasks", err)
		}
		res.Tasks = append(res.Tasks, t)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	rows.Close()
	if len(ids) == 0 {
		return res, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return taskstore.ListResult{}, err
	}
	prows, err := tx.StmtContext(ctx, s.pagePieces).QueryContext(ctx, string(list))
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	byID := make(map[string]*layout.Pieces, len(ids))
	for _, id := range ids {
		byID[id] = new(layout.Pieces)
	}
	if err := readPieces(prows, nil, byID); err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	for i, id := range ids {
		if err := byID[id].Assemble(res.Tasks[i]); err != nil {
			return taskstore.ListResult{}, wrap("list tasks", err)
		}
	}
	return res, nil
}

// countTasks returns how many tasks match q's filters, ignoring its cursor:
// a range count when q has Since, otherwise the trigger-kept counter of
// the scope and filters (no row means none).
func (s *Store) countTasks(ctx context.Context, tx *sql.Tx, f listFilter, sc taskstore.Scope, q taskstore.ListQuery) (int, error) {
	var n int
	if f&layout.WithSince != 0 {
		cf := f &^ layout.WithAfter
		err := tx.StmtContext(ctx, s.countSince[cf]).QueryRowContext(ctx, listArgs(cf, sc, q)...).Scan(&n)
		return n, err
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
	err := tx.StmtContext(ctx, s.counter).QueryRowContext(ctx, sc.Tenant, sc.Owner, int(kind), ctxKey, stateKey).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
