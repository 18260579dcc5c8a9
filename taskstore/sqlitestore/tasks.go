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
// ListTasks (see prepareList).
func (s *Store) prepareTasks(p *preparer) {
	s.createTask = p.writer(`INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	s.updateTask = p.writer(`UPDATE tasks SET context_id = ?, state = ?, status_ms = ?, data = ?,
		seq = MAX(seq, ?)
		WHERE id = ? AND tenant = ? AND owner = ?`)
	s.getTask = p.reader(`SELECT data FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.lastSeq = p.reader(`SELECT seq FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.listActive = p.reader(`SELECT tenant, owner, data FROM tasks WHERE state IN (` + stateList(order.Active) + `)`)
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

// CreateTask inserts t, with ev.PushConfig and the outbox rows of ev, in
// one transaction; the id must be new in the whole store.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	if t.GetId() == "" {
		return errors.New("sqlitestore: task has no id")
	}
	if c := ev.PushConfig; c != nil && c.GetTaskId() != t.Id {
		return errors.New("sqlitestore: the push config is not the new task's")
	}
	data, err := marshal(t)
	if err != nil {
		return err
	}
	var cfg, secret []byte
	if ev.PushConfig != nil {
		if cfg, secret, err = s.sealConfig(sc, ev.PushConfig); err != nil {
			return err
		}
	}
	var logData, evData []byte
	if ev.Response != nil {
		if logData, err = marshal(ev.Response); err != nil {
			return err
		}
		if ev.Push {
			evData = logData
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.createTask, t.Id, sc.Tenant, sc.Owner, t.ContextId,
			int32(t.GetStatus().GetState()), order.StatusMillis(t), int64(ev.Seq), data))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrExists
		}
		if cfg != nil {
			if _, err := w.exec(ctx, s.putConfig, ev.PushConfig.GetId(), cfg, secret, t.Id, sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		if ev.Response != nil {
			if err := s.logEvent(w, t.Id, ev.Seq, logData); err != nil {
				return err
			}
		}
		return s.queueForTask(ctx, w, sc, t.Id, ev.Seq, evData)
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

// GetTask returns the task with the id in the scope.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	var data []byte
	err := s.getTask.QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get task", err)
	}
	return unmarshalTask(data)
}

// ListActive returns every SUBMITTED or WORKING task with its scope.
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	rows, err := s.listActive.QueryContext(ctx)
	if err != nil {
		return nil, wrap("list active tasks", err)
	}
	defer rows.Close()
	var out []taskstore.ScopedTask
	for rows.Next() {
		var st taskstore.ScopedTask
		var data sql.RawBytes
		if err := rows.Scan(&st.Scope.Tenant, &st.Scope.Owner, &data); err != nil {
			return nil, wrap("list active tasks", err)
		}
		if st.Task, err = unmarshalTask(data); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list active tasks", err)
	}
	return out, nil
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time; their push configurations and queued notifications go
// with them (ON DELETE CASCADE). It works in batches, each its own
// transaction.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	n, err := deleteInBatches(ctx, s.deleteFinished, order.CeilMillis(before))
	if err != nil {
		return n, wrap("delete finished tasks", err)
	}
	return n, nil
}
