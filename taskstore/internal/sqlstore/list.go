package sqlstore

import (
	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
)

// ListTasks pages with keyset conditions on (status_ms, id): each
// combination of filters matches the leading columns of one of the tasks
// indexes (a context and a state: the context's), followed by (status_ms
// DESC, id DESC), so that the condition and the ORDER BY walk that index.

// ListWhere returns the WHERE clause of a ListTasks query with the
// filters f; ListArgs gives its arguments, in order.
func (d *Dialect) ListWhere(f layout.ListFilter) string {
	n := 0
	p := func() string { n++; return d.Param(n) }
	w := "tenant = " + p() + " AND owner = " + p()
	if f&layout.WithContext != 0 {
		w += " AND context_id = " + p()
	}
	switch {
	case f&layout.WithState != 0 && f&layout.WithContext != 0:
		// A context's tasks in one state are found in the context's
		// index (schema version 8 dropped the index by context and
		// state: a context holds a conversation's tasks, a few); the
		// unary plus keeps the planner from the index by state.
		w += " AND +state = " + p()
	case f&layout.WithState != 0:
		w += " AND state = " + p()
	}
	if f&layout.WithSince != 0 {
		w += " AND status_ms >= " + p()
	}
	if f&layout.WithAfter != 0 {
		w += " AND (status_ms, id) < (" + p() + ", " + p() + ")"
	}
	return w
}

// ListArgs returns the arguments of ListWhere(f) for the scope and query.
func ListArgs(f layout.ListFilter, sc taskstore.Scope, q taskstore.ListQuery) []any {
	a := make([]any, 2, 8)
	a[0], a[1] = sc.Tenant, sc.Owner
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

// listParams is the number of arguments ListWhere(f) takes.
func listParams(f layout.ListFilter) int {
	n := 2
	for _, bit := range []layout.ListFilter{layout.WithContext, layout.WithState, layout.WithSince} {
		if f&bit != 0 {
			n++
		}
	}
	if f&layout.WithAfter != 0 {
		n += 2
	}
	return n
}

// ListSQL returns the page query for f, whose rows readPage reads; its
// last argument, after ListArgs, is the row limit.
func (d *Dialect) ListSQL(f layout.ListFilter) string {
	return "SELECT id, data, status, status IS NOT NULL, seq FROM tasks WHERE " + d.ListWhere(f) +
		" ORDER BY status_ms DESC, id DESC LIMIT " + d.Param(listParams(f)+1)
}

// CountSQL returns the range count for f, which must not have
// layout.WithAfter.
func (d *Dialect) CountSQL(f layout.ListFilter) string {
	return "SELECT count(*) FROM tasks WHERE " + d.ListWhere(f)
}

// RangeCounted reports whether a ListTasks total for f is a range count
// (CountSQL) rather than a trigger-kept counter: with Since, or a context.
// A context holds a conversation's tasks, so counting its range is cheap,
// and counters per context would cost every new task two more rows
// (schema version 7 of both SQL stores dropped them).
func RangeCounted(f layout.ListFilter) bool { return f&(layout.WithSince|layout.WithContext) != 0 }

// CounterKey returns the key of the trigger-kept counter of q's filters
// when they are not RangeCounted: which filters (kind: none, or the
// state), and the context and state, or the values that stand for none.
func CounterKey(f layout.ListFilter, q taskstore.ListQuery) (kind int32, contextID string, state int32) {
	k := f & (layout.WithContext | layout.WithState)
	if k&layout.WithContext != 0 {
		contextID = q.ContextID
	}
	if k&layout.WithState != 0 {
		state = int32(q.State)
	}
	return int32(k), contextID, state
}

// ListQueries runs the statements of one ListTasks call inside the
// store's read transaction, so that the total, the page and its pieces
// agree with each other.
type ListQueries struct {
	// Count runs CountSQL(f) with its arguments: one row, the count.
	Count func(f layout.ListFilter, args []any) Row
	// Counter reads the trigger-kept counter of (tenant, owner, kind,
	// context_id, state), CounterKey's; no row is a count of 0.
	Counter func(args ...any) Row
	// Page runs ListSQL(f) with its arguments, the row limit last.
	Page func(f layout.ListFilter, args []any) (Cursor, error)
	// Pieces reads the history and artifact rows of the tasks with the
	// ids (the pieces shape, each row led by its task id).
	Pieces func(ids []string) (Cursor, error)
}

// ListIn answers ListTasks with r: the total of q's filters, ignoring its
// cursor (a range count when RangeCounted, otherwise the counter), and a
// page of up to q.Limit tasks put together from their header rows and
// pieces, noting whether there is more.
func ListIn[B ~[]byte](d *Dialect, r ListQueries, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	limit := max(q.Limit, 1)
	f := layout.FilterOf(q)
	var res taskstore.ListResult
	var n int64
	if cf := f &^ layout.WithAfter; RangeCounted(cf) {
		if err := r.Count(cf, ListArgs(cf, sc, q)).Scan(&n); err != nil {
			return res, err
		}
	} else {
		kind, ctxKey, stateKey := CounterKey(f, q)
		if err := r.Counter(sc.Tenant, sc.Owner, kind, ctxKey, stateKey).Scan(&n); err != nil && !d.IsNoRows(err) {
			return res, err
		}
	}
	res.Total = int(n)
	rows, err := r.Page(f, append(ListArgs(f, sc, q), limit+1))
	if err != nil {
		return res, err
	}
	pg, err := readPage[B](rows, limit)
	rows.Close()
	if err != nil || len(pg.IDs) == 0 {
		return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, err
	}
	prows, err := r.Pieces(pg.IDs)
	if err != nil {
		return res, err
	}
	defer prows.Close()
	if err := assemble[B](d, pg, prows); err != nil {
		return res, err
	}
	return taskstore.ListResult{Total: res.Total, Tasks: pg.Tasks, More: pg.More}, nil
}

// page is a ListTasks page as its header rows give it, before its history
// and artifacts are read.
type page struct {
	Tasks []*a2a.Task
	IDs   []string
	More  bool // a row beyond the limit was there
}

// readPage reads up to limit rows of ListSQL, noting whether there was
// one more.
func readPage[B ~[]byte](rows Rows, limit int) (page, error) {
	pg := page{Tasks: make([]*a2a.Task, 0, min(limit, 64)), IDs: make([]string, 0, min(limit, 64))}
	var id string
	var data, status B
	var hasStatus bool
	var seq int64
	for rows.Next() {
		if len(pg.Tasks) == limit {
			pg.More = true
			break
		}
		if err := rows.Scan(&id, &data, &status, &hasStatus, &seq); err != nil {
			return page{}, err
		}
		t, err := layout.DecodeHeader(data, status, hasStatus)
		if err != nil {
			return page{}, err
		}
		t.Generation = taskstore.Generation(uint64(seq))
		pg.Tasks = append(pg.Tasks, t)
		pg.IDs = append(pg.IDs, id)
	}
	return pg, rows.Err()
}

// assemble reads the history and artifact rows of the page's tasks (the
// pieces shape, each row led by its task id) and puts each task together.
func assemble[B ~[]byte](d *Dialect, pg page, rows Rows) error {
	byID := make(map[string]*layout.Pieces, len(pg.IDs))
	for _, id := range pg.IDs {
		byID[id] = new(layout.Pieces)
	}
	if err := ReadPieces[B](d, rows, nil, byID); err != nil {
		return err
	}
	for i, id := range pg.IDs {
		if err := byID[id].Assemble(pg.Tasks[i]); err != nil {
			return err
		}
	}
	return nil
}
