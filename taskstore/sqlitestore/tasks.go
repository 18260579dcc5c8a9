package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// prepareTasks prepares the statements of the tasks role, apart from
// ListTasks (see prepareList) and the event log (see prepareEvents).
func (s *Store) prepareTasks(p *preparer) {
	s.createTask = p.writer(`INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data, status, has_push, last_ms, prune_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	s.putHistory = p.multiInsert(`INSERT INTO task_history (task_id, n, message)`, 3)
	s.putChunks = p.multiInsert(`INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk)`, 5)
	// A task whole, in one statement (see sqlstore.ReadTask): no read
	// transaction to open, and one query however the task is split.
	s.getTask = p.reader(`SELECT ` + dialect.HeaderColumns() + ` FROM tasks WHERE id = ?1 AND tenant = ?2 AND owner = ?3
		UNION ALL SELECT ` + dialect.HistoryColumns() + ` FROM ` + historyByN + ` WHERE task_id = ?1
		UNION ALL SELECT ` + dialect.ChunkColumns() + ` FROM ` + chunksByN + ` WHERE task_id = ?1`)
	s.lastSeq = p.reader(dialect.LastSeqSQL())
	s.listActive = p.reader(sqlstore.ListActiveSQL())
	s.deleteFinished = p.writer(`DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks
		WHERE state IN (` + sqlstore.StateList(order.Terminal) + `) AND status_ms < ?` + sqlstore.LimitBatch + `)`)
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
// its events logged in one row (layout.JoinEvents).
func (s *Store) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	enc, err := s.sealer.EncodeCreate(sc, t, evs)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(w *wtx) error {
		h, cfg := enc.Header, enc.Config
		ms := s.now().UnixMilli()
		var prune any // the events before the last are prunable (PruneEvents)
		if len(enc.Events) > 1 {
			prune = ms
		}
		n, err := affected(w.exec(ctx, s.createTask, t.Id, sc.Tenant, sc.Owner, h.ContextID,
			h.State, h.StatusMS, int64(enc.Seq), h.Data, h.Status, cfg != nil, ms, prune))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrExists
		}
		if err := s.writeParts(w, t.Id, enc.Parts); err != nil {
			return err
		}
		if cfg != nil {
			if _, err := w.exec(ctx, s.putConfig, enc.ConfigID, cfg, enc.Secret, enc.ConfigVersion, t.Id, sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		if len(enc.Events) > 0 {
			if err := s.logEvents(w, t.Id, enc.Events, ms); err != nil {
				return err
			}
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
	return dialect.Refused("create task", err)
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	seq, err := dialect.ScanLastSeq(s.lastSeq.QueryRowContext(ctx, id, sc.Tenant, sc.Owner))
	return seq, dialect.Refused("last seq", err)
}

// GetTask returns the task with the id in the scope, assembled from its
// header, history and artifact rows read by one statement, or shared from
// the tasks GetTask read last and the reads in progress (taskCache).
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	t, err := s.cache.get(ctx, cacheKey{sc, id}, func() (*a2a.Task, error) {
		rows, err := s.getTask.QueryContext(ctx, id, sc.Tenant, sc.Owner)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return sqlstore.ReadTask[sql.RawBytes](dialect, rows)
	})
	return t, dialect.Refused("get task", err)
}

// ListActive returns every SUBMITTED or WORKING task with its scope. It
// runs at start-up only: it finds the tasks, then reads each with GetTask
// (one that finished in between is left out).
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	found, err := sqlstore.Query(dialect, "list active tasks",
		func() (sqlstore.Cursor, error) { return query(s.listActive.QueryContext(ctx)) }, sqlstore.ReadScopedIDs)
	if err != nil {
		return nil, err
	}
	return sqlstore.ActiveTasks(ctx, found, s.GetTask)
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time; their history, artifacts, events, push configurations
// and queued notifications go with them (ON DELETE CASCADE). It works in
// batches, each its own transaction.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	n, err := s.deleteBefore(ctx, "delete finished tasks", s.deleteFinished, before)
	s.cache.clear()
	return n, err
}
