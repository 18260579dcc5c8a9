package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// prepareTasks prepares the statements of the tasks role, apart from
// ListTasks (see prepareList) and the event log (see prepareEvents).
func (s *Store) prepareTasks(p *preparer) {
	s.createTask = p.writer(`INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data, status, has_push)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	s.putHistory = p.writer(`INSERT INTO task_history (task_id, n, message) VALUES (?, ?, ?)`)
	s.putChunk = p.writer(`INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) VALUES (?, ?, ?, ?, ?)`)
	s.getHeader = p.reader(`SELECT data, status, status IS NOT NULL FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.getHistory = p.reader(`SELECT message FROM task_history WHERE task_id = ? ORDER BY n`)
	s.getChunks = p.reader(`SELECT artifact_id, append, chunk FROM task_artifacts WHERE task_id = ? ORDER BY n`)
	s.lastSeq = p.reader(`SELECT seq FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.listActive = p.reader(`SELECT tenant, owner, id, data, status, status IS NOT NULL FROM tasks
		WHERE state IN (` + stateList(order.Active) + `)`)
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
	if t.GetId() == "" {
		return errors.New("sqlitestore: task has no id")
	}
	if c := ev.PushConfig; c != nil && c.GetTaskId() != t.Id {
		return errors.New("sqlitestore: the push config is not the new task's")
	}
	h, err := encodeHeader(t)
	if err != nil {
		return err
	}
	parts, err := encodeParts(t)
	if err != nil {
		return err
	}
	var cfg, secret []byte
	if ev.PushConfig != nil {
		if cfg, secret, err = s.sealConfig(sc, ev.PushConfig); err != nil {
			return err
		}
	}
	var evData []byte
	if ev.Response != nil {
		if evData, err = marshal(ev.Response); err != nil {
			return err
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.createTask, t.Id, sc.Tenant, sc.Owner, h.contextID,
			h.state, h.statusMS, int64(ev.Seq), h.data, h.status, cfg != nil))
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
		if evData == nil {
			return nil
		}
		if err := s.logEvent(w, t.Id, ev.Seq, evData); err != nil {
			return err
		}
		if ev.Push && cfg != nil {
			return s.queueForTask(ctx, w, sc, t.Id, ev.Seq, evData)
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
// header, history and artifact rows in one read transaction.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("get task", err)
	}
	defer tx.Rollback()
	var data, status []byte
	var hasStatus bool
	err = tx.StmtContext(ctx, s.getHeader).QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&data, &status, &hasStatus)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get task", err)
	}
	t, err := decodeHeader(data, status, hasStatus)
	if err != nil {
		return nil, err
	}
	r := partReader{ctx: ctx, history: tx.StmtContext(ctx, s.getHistory), chunks: tx.StmtContext(ctx, s.getChunks)}
	if err := r.fill(map[string]*a2a.Task{id: t}, []string{id}); err != nil {
		return nil, wrap("get task", err)
	}
	return t, nil
}

// ListActive returns every SUBMITTED or WORKING task with its scope. It
// runs at start-up only, and assembles the tasks one by one.
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("list active tasks", err)
	}
	defer tx.Rollback()
	rows, err := tx.StmtContext(ctx, s.listActive).QueryContext(ctx)
	if err != nil {
		return nil, wrap("list active tasks", err)
	}
	var out []taskstore.ScopedTask
	var ids []string
	for rows.Next() {
		var st taskstore.ScopedTask
		var id string
		var data, status sql.RawBytes
		var hasStatus bool
		if err := rows.Scan(&st.Scope.Tenant, &st.Scope.Owner, &id, &data, &status, &hasStatus); err != nil {
			rows.Close()
			return nil, wrap("list active tasks", err)
		}
		if st.Task, err = decodeHeader(data, status, hasStatus); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, st)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("list active tasks", err)
	}
	r := partReader{ctx: ctx, history: tx.StmtContext(ctx, s.getHistory), chunks: tx.StmtContext(ctx, s.getChunks)}
	for i, id := range ids {
		if err := r.fill(map[string]*a2a.Task{id: out[i].Task}, ids[i:i+1]); err != nil {
			return nil, wrap("list active tasks", err)
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
	if err != nil {
		return n, wrap("delete finished tasks", err)
	}
	return n, nil
}
