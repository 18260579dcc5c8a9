package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// preparePushConfigs prepares the statements of the push configurations
// role.
func (s *Store) preparePushConfigs(p *preparer) {
	// The configuration takes its tenant and owner from the task row, and
	// is written only if that row is in the caller's scope.
	s.putConfig = p.writer(`INSERT INTO push_configs (tenant, owner, task_id, id, data, secret, version)
		SELECT tenant, owner, id, ?, ?, ?, ? FROM tasks WHERE id = ? AND tenant = ? AND owner = ?
		ON CONFLICT (task_id, id) DO UPDATE SET data = excluded.data, secret = excluded.secret, version = excluded.version`)
	s.getConfig = p.reader(dialect.GetConfigSQL())
	s.listConfigs = p.reader(dialect.ListConfigsSQL())
	s.deleteConfig = p.writer(dialect.DeleteConfigSQL())
	// has_push stays set once a task had a configuration: a stale mark
	// only costs the outbox query that finds no active configuration.
	s.markPush = p.writer(`UPDATE tasks SET has_push = 1 WHERE id = ? AND has_push = 0`)
	s.taskInScope = p.reader(dialect.TaskInScopeSQL())
}

// PutPushConfig creates or replaces a configuration of a task in the
// scope, with its version, its secrets sealed under the first push key when keys are given.
// In the same transaction it drops the configuration's queued
// notifications, lifts its suspension and, with ev.Push, queues
// ev.Response for it.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *taskstore.PushConfig, ev taskstore.Event) error {
	data, secret, evData, err := s.sealer.ForPut(sc, c, ev)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.putConfig, c.GetId(), data, secret, c.Version, c.GetTaskId(), sc.Tenant, sc.Owner))
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
	return dialect.Refused("put push config", err)
}

// GetPushConfig returns one configuration of a task in the scope, with its
// secrets opened.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	return s.sealer.ScanConfig(s.getConfig.QueryRowContext(ctx, taskID, id, sc.Tenant, sc.Owner), sc, taskID, id)
}

// ListPushConfigs returns a task's configurations ordered by id, or
// ErrNotFound when the task is not in the scope.
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	rows, err := s.listConfigs.QueryContext(ctx, taskID, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("list push configs", err)
	}
	defer rows.Close()
	return sqlstore.ReadConfigs[sql.RawBytes](s.sealer, rows, sc, taskID)
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
	return dialect.Refused("delete push config", dialect.InScope(s.taskInScope.QueryRowContext(ctx, taskID, sc.Tenant, sc.Owner)))
}
