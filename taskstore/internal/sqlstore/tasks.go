package sqlstore

import (
	"context"
	"errors"
	"slices"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
)

// HeaderColumns, HistoryColumns and ChunkColumns are the SELECT lists of
// the three kinds of rows that read a task's pieces, in the shape
// layout.Pieces reads (preceded by the task id when they read several
// tasks).
func (d *Dialect) HeaderColumns() string { return `0, seq, data, status IS NOT NULL, status` }

// HistoryColumns: see HeaderColumns.
func (d *Dialect) HistoryColumns() string { return `1, n, message, ` + d.False + `, ` + d.NullBytes }

// ChunkColumns: see HeaderColumns.
func (d *Dialect) ChunkColumns() string { return `2, n, chunk, append, ` + d.NullBytes }

// ReadPieces reads rows of the pieces shape, decoding each at once. With
// byID the rows start with the task id and go to the pieces byID holds
// for it (rows of other ids are skipped); otherwise they all go to one.
// B is the byte slice type the driver scans into without a copy, when it
// can.
func ReadPieces[B ~[]byte](d *Dialect, rows Rows, one *layout.Pieces, byID map[string]*layout.Pieces) error {
	var kind, n int64
	var flag bool
	var id, payload, extra B
	for rows.Next() {
		var err error
		p := one
		if byID != nil {
			err = rows.Scan(&id, &kind, &n, &payload, &flag, &extra)
			p = byID[string(id)]
		} else {
			err = rows.Scan(&kind, &n, &payload, &flag, &extra)
		}
		if err != nil {
			return err
		}
		if p != nil {
			if err := p.Add(kind, n, payload, flag, extra); err != nil {
				return d.Err(err)
			}
		}
	}
	return rows.Err()
}

// ReadTask puts a task back together from rows of the pieces shape (its
// header first): taskstore.ErrNotFound when there is no header row.
func ReadTask[B ~[]byte](d *Dialect, rows Rows) (*a2a.Task, error) {
	var p layout.Pieces
	if err := ReadPieces[B](d, rows, &p, nil); err != nil {
		return nil, err
	}
	if p.Task == nil {
		return nil, taskstore.ErrNotFound
	}
	if err := p.Assemble(p.Task); err != nil {
		return nil, err
	}
	return p.Task, nil
}

// ScopedID is a task found by a query of (tenant, owner, id) rows.
type ScopedID struct {
	Scope taskstore.Scope
	ID    string
}

// ReadScopedIDs reads rows of (tenant, owner, id).
func ReadScopedIDs(rows Rows) ([]ScopedID, error) {
	var out []ScopedID
	for rows.Next() {
		var f ScopedID
		if err := rows.Scan(&f.Scope.Tenant, &f.Scope.Owner, &f.ID); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// ActiveTasks reads each task found with get, leaving out those gone or
// no longer SUBMITTED or WORKING since they were found.
func ActiveTasks(ctx context.Context, found []ScopedID, get func(context.Context, taskstore.Scope, string) (*a2a.Task, error)) ([]taskstore.ScopedTask, error) {
	var out []taskstore.ScopedTask
	for _, f := range found {
		t, err := get(ctx, f.Scope, f.ID)
		if errors.Is(err, taskstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if slices.Contains(order.Active, t.GetStatus().GetState()) {
			// GetTask's task may be shared; ListActive's are the caller's.
			out = append(out, taskstore.ScopedTask{Scope: f.Scope, Task: a2a.CloneTask(t)})
		}
	}
	return out, nil
}

// ListActiveSQL finds the SUBMITTED and WORKING tasks as (tenant, owner,
// id) rows.
func ListActiveSQL() string {
	return `SELECT tenant, owner, id FROM tasks WHERE state IN (` + StateList(order.Active) + `)`
}

// InScope turns the outcome of a query of one row that finds a task in
// the caller's scope into nil, taskstore.ErrNotFound, or the query's
// failure (not wrapped).
func (d *Dialect) InScope(row Row) error {
	var one int
	err := row.Scan(&one)
	if d.IsNoRows(err) {
		return taskstore.ErrNotFound
	}
	return err
}

// TaskInScopeSQL is the query InScope reads: a task by id, in a scope.
func (d *Dialect) TaskInScopeSQL() string { return `SELECT 1 FROM tasks WHERE ` + d.TaskByID("", 1) }

// LastSeqSQL is the last sequence number of a task by id, in a scope.
func (d *Dialect) LastSeqSQL() string { return `SELECT seq FROM tasks WHERE ` + d.TaskByID("", 1) }

// ScanLastSeq reads a row of LastSeqSQL: taskstore.ErrNotFound without
// one.
func (d *Dialect) ScanLastSeq(row Row) (uint64, error) {
	var seq int64
	err := row.Scan(&seq)
	if d.IsNoRows(err) {
		return 0, taskstore.ErrNotFound
	}
	return uint64(seq), err
}

// The statements of a task's timeline base (taskstore.Fold), kept in
// task_timelines, a row per task whose log was pruned: its base with the
// task's scope checked (NULL for none; no row when the task is not in the
// scope), and a base written.
func (d *Dialect) TimelineBaseSQL() string {
	return `SELECT b.base FROM tasks t LEFT JOIN task_timelines b ON b.task_id = t.id WHERE ` + d.TaskByID("t", 1)
}

// PutTimelineBaseSQL writes a task's base, $1 its id and $2 the base.
func (d *Dialect) PutTimelineBaseSQL() string {
	return `INSERT INTO task_timelines (task_id, base) VALUES (` + d.Param(1) + `, ` + d.Param(2) + `)
		ON CONFLICT (task_id) DO UPDATE SET base = excluded.base`
}

// ScanTimelineBase reads a row of TimelineBaseSQL: taskstore.ErrNotFound
// without one.
func (d *Dialect) ScanTimelineBase(row Row) ([]byte, error) {
	var base []byte
	err := row.Scan(&base)
	if d.IsNoRows(err) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, d.Wrap("timeline base", err)
	}
	return base, nil
}
