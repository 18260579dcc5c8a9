package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// preparePushConfigs prepares the statements of the push configurations
// role.
func (s *Store) preparePushConfigs(p *preparer) {
	// The configuration takes its tenant and owner from the task row, and
	// is written only if that row is in the caller's scope.
	s.putConfig = p.writer(`INSERT INTO push_configs (tenant, owner, task_id, id, data, secret)
		SELECT tenant, owner, id, ?, ?, ? FROM tasks WHERE id = ? AND tenant = ? AND owner = ?
		ON CONFLICT (task_id, id) DO UPDATE SET data = excluded.data, secret = excluded.secret`)
	s.getConfig = p.reader(`SELECT data, secret FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	// One row with a NULL config when the task has none; no row when the
	// task is not in the scope.
	s.listConfigs = p.reader(`SELECT p.id IS NOT NULL, p.id, p.data, p.secret FROM tasks t LEFT JOIN push_configs p ON p.task_id = t.id
		WHERE t.id = ? AND t.tenant = ? AND t.owner = ? ORDER BY p.id`)
	s.deleteConfig = p.writer(`DELETE FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	// has_push stays set once a task had a configuration: a stale mark
	// only costs the outbox query that finds no active configuration.
	s.markPush = p.writer(`UPDATE tasks SET has_push = 1 WHERE id = ? AND has_push = 0`)
	s.taskInScope = p.reader(`SELECT 1 FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
}

// PutPushConfig creates or replaces a configuration of a task in the
// scope, its secrets sealed under the first push key when keys are given.
// In the same transaction it drops the configuration's queued
// notifications, lifts its suspension and, with ev.Push, queues
// ev.Response for it.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig, ev taskstore.Event) error {
	data, secret, err := s.sealConfig(sc, c)
	if err != nil {
		return err
	}
	evData, err := queuedEvent(ev)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.putConfig, c.GetId(), data, secret, c.GetTaskId(), sc.Tenant, sc.Owner))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrNotFound
		}
		// Appends queue push notifications only for tasks marked so.
		if _, err := w.exec(ctx, s.markPush, c.GetTaskId()); err != nil {
			return err
		}
		if _, err := w.exec(ctx, s.dropQueued, c.GetTaskId(), c.GetId()); err != nil {
			return err
		}
		if _, err := w.exec(ctx, s.unsuspend, c.GetTaskId(), c.GetId()); err != nil {
			return err
		}
		if evData != nil {
			_, err = w.exec(ctx, s.queueOne, int64(ev.Seq), evData, time.Now().UnixMilli(), c.GetTaskId(), sc.Tenant, sc.Owner, c.GetId())
		}
		return err
	})
	if err != nil && !errors.Is(err, taskstore.ErrNotFound) {
		return wrap("put push config", err)
	}
	return err
}

// GetPushConfig returns one configuration of a task in the scope, with its
// secrets opened.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var data, secret []byte
	err := s.getConfig.QueryRowContext(ctx, taskID, id, sc.Tenant, sc.Owner).Scan(&data, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get push config", err)
	}
	return s.openConfig(sc, taskID, id, data, secret)
}

// ListPushConfigs returns a task's configurations ordered by id, or
// ErrNotFound when the task is not in the scope.
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error) {
	rows, err := s.listConfigs.QueryContext(ctx, taskID, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("list push configs", err)
	}
	defer rows.Close()
	found := false
	out := []*a2a.TaskPushNotificationConfig{}
	for rows.Next() {
		found = true
		var has bool
		var id sql.NullString
		var data, secret sql.RawBytes
		if err := rows.Scan(&has, &id, &data, &secret); err != nil {
			return nil, wrap("list push configs", err)
		}
		if !has {
			continue // the task has no configuration
		}
		c, err := s.openConfig(sc, taskID, id.String, data, secret)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list push configs", err)
	}
	if !found {
		return nil, taskstore.ErrNotFound
	}
	return out, nil
}

// DeletePushConfig removes one configuration of a task in the scope, with
// its queued notifications (ON DELETE CASCADE). A missing configuration is
// not an error; a task outside the scope is ErrNotFound.
func (s *Store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	var n int64
	err := s.write(ctx, func(w *wtx) (err error) {
		n, err = affected(w.exec(ctx, s.deleteConfig, taskID, id, sc.Tenant, sc.Owner))
		return err
	})
	if err != nil {
		return wrap("delete push config", err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = s.taskInScope.QueryRowContext(ctx, taskID, sc.Tenant, sc.Owner).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return taskstore.ErrNotFound
	}
	if err != nil {
		return wrap("delete push config", err)
	}
	return nil
}
