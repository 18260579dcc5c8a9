package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
)

// prepareTasks prepares the statements of the tasks role, apart from
// ListTasks (see prepareList) and the event log (see prepareEvents).
func (s *Store) prepareTasks(p *preparer) {
	s.createTask = p.writer(`INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data, status, has_push)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	s.putHistory = p.multiInsert(`INSERT INTO task_history (task_id, n, message)`, 3)
	s.putChunks = p.multiInsert(`INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk)`, 5)
	s.putEvents = p.multiInsert(`INSERT INTO task_events (task_id, seq, created_ms, response)`, 4)
	// A task whole, in one statement (see readPieces): no read
	// transaction to open, and one query however the task is split.
	s.getTask = p.reader(`SELECT ` + headerColumns + ` FROM tasks WHERE id = ?1 AND tenant = ?2 AND owner = ?3
		UNION ALL SELECT ` + historyColumns + ` FROM task_history WHERE task_id = ?1
		UNION ALL SELECT ` + chunkColumns + ` FROM task_artifacts WHERE task_id = ?1`)
	s.lastSeq = p.reader(`SELECT seq FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.listActive = p.reader(`SELECT tenant, owner, id FROM tasks WHERE state IN (` + stateList(order.Active) + `)`)
	s.deleteFinished = p.writer(`DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks
		WHERE state IN (` + stateList(order.Terminal) + `) AND status_ms < ? LIMIT ` + fmt.Sprint(deleteBatch) + `)`)
}

// stateList returns the states as a comma-separated list of SQL integers.
func stateList(states []a2a.TaskState) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprint(int32(st))
	}
	return strings.Join(parts, ", ")
}

// CreateTask inserts t (its header, history and artifact rows), with
// ev.PushConfig, ev.Response as the first event of its log, and the
// outbox rows of ev, in one transaction; the id must be new in the whole
// store.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	return s.CreateTaskBatch(ctx, sc, t, []taskstore.Event{ev})
}

// CreateTaskBatch is CreateTask of t with evs[0] followed by an
// AppendBatch of the other events, all or none
// (taskstore.BatchAppender), in one operation of the group commit: the
// task is inserted as the events leave it (layout.EncodeCreate), with
// every event logged.
func (s *Store) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	enc, err := layout.EncodeCreate(t, evs)
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	h, parts, ev := enc.Header, enc.Parts, evs[0]
	var cfg, secret []byte
	if ev.PushConfig != nil {
		if cfg, secret, err = s.sealConfig(sc, ev.PushConfig); err != nil {
			return err
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.createTask, t.Id, sc.Tenant, sc.Owner, h.ContextID,
			h.State, h.StatusMS, int64(enc.Seq), h.Data, h.Status, cfg != nil))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrExists
		}
		if err := s.writeParts(w, t.Id, parts); err != nil {
			return err
		}
		if cfg != nil {
			if _, err := w.exec(ctx, s.putConfig, ev.PushConfig.GetId(), cfg, secret, t.Id, sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		id, ms := any(t.Id), s.now().UnixMilli()
		args := make([]any, 0, 4*len(enc.Events))
		for _, e := range enc.Events {
			args = append(args, id, int64(e.Seq), ms, e.Data)
		}
		if err := s.putEvents.exec(w, args); err != nil {
			return err
		}
		for _, e := range enc.Events {
			if e.Push && cfg != nil {
				if err := s.queueForTask(ctx, w, sc, t.Id, e.Seq, e.Data); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, taskstore.ErrExists) {
		return wrap("create task", err)
	}
	return err
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	var seq int64
	err := s.lastSeq.QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, taskstore.ErrNotFound
	}
	if err != nil {
		return 0, wrap("last seq", err)
	}
	return uint64(seq), nil
}

// GetTask returns the task with the id in the scope, assembled from its
// header, history and artifact rows read by one statement, or a copy of
// it from the tasks GetTask read last (taskCache).
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	k := cacheKey{sc, id}
	t, gen := s.cache.get(k)
	if t != nil {
		return t, nil
	}
	rows, err := s.getTask.QueryContext(ctx, id, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("get task", err)
	}
	var p layout.Pieces
	if err := readPieces(rows, &p, nil); err != nil {
		return nil, wrap("get task", err)
	}
	if p.Task == nil {
		return nil, taskstore.ErrNotFound
	}
	if err := p.Assemble(p.Task); err != nil {
		return nil, wrap("get task", err)
	}
	s.cache.put(k, p.Task, gen)
	return p.Task, nil
}

// ListActive returns every SUBMITTED or WORKING task with its scope. It
// runs at start-up only: it finds the tasks, then reads each with GetTask
// (one that finished in between is left out).
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	rows, err := s.listActive.QueryContext(ctx)
	if err != nil {
		return nil, wrap("list active tasks", err)
	}
	type found struct {
		sc taskstore.Scope
		id string
	}
	var ids []found
	for rows.Next() {
		var f found
		if err := rows.Scan(&f.sc.Tenant, &f.sc.Owner, &f.id); err != nil {
			rows.Close()
			return nil, wrap("list active tasks", err)
		}
		ids = append(ids, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("list active tasks", err)
	}
	var out []taskstore.ScopedTask
	for _, f := range ids {
		t, err := s.GetTask(ctx, f.sc, f.id)
		if errors.Is(err, taskstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if st := t.GetStatus().GetState(); slices.Contains(order.Active, st) {
			out = append(out, taskstore.ScopedTask{Scope: f.sc, Task: t})
		}
	}
	return out, nil
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time; their history, artifacts, events, push configurations
// and queued notifications go with them (ON DELETE CASCADE). It works in
// batches, each its own transaction.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	n, err := deleteInBatches(ctx, s.deleteFinished, order.CeilMillis(before))
	s.cache.clear()
	if err != nil {
		return n, wrap("delete finished tasks", err)
	}
	return n, nil
}
