package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

const (
	// The configuration takes its tenant and owner from the task row,
	// and is written only if that row is in the caller's scope. Writing
	// it lifts a suspension. The task is found by id as taskByID does.
	sqlPutConfig = `INSERT INTO push_configs (tenant, owner, task_id, id, data, secret, version)
		SELECT tenant, owner, id, $1, $2, $3, $7 FROM tasks WHERE id = $4 AND tenant IS NOT DISTINCT FROM $5 AND owner IS NOT DISTINCT FROM $6
		ON CONFLICT (task_id, id) DO UPDATE SET data = excluded.data, secret = excluded.secret, version = excluded.version, suspended = NULL`
	// has_push stays set once a task had a configuration: a stale mark
	// only costs the outbox statement that finds no active one.
	sqlMarkPush = `UPDATE tasks SET has_push = true WHERE id = $1 AND NOT has_push`
)

// The statements the two SQL stores share (package sqlstore).
var (
	sqlGetConfig    = dialect.GetConfigSQL()
	sqlListConfigs  = dialect.ListConfigsSQL()
	sqlDeleteConfig = dialect.DeleteConfigSQL()
	sqlDropQueued   = dialect.DropQueuedSQL()
)

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
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		n, err := affected(tx.Exec(ctx, sqlPutConfig, c.GetId(), data, secret, c.GetTaskId(), sc.Tenant, sc.Owner, c.Version))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrNotFound
		}
		b := &pgx.Batch{}
		b.Queue(sqlMarkPush, c.GetTaskId())
		b.Queue(sqlDropQueued, c.GetTaskId(), c.GetId())
		if evData != nil {
			b.Queue(sqlQueueOne, int64(ev.Seq), evData, time.Now().UnixMilli(), c.GetTaskId(), sc.Tenant, sc.Owner, c.GetId())
		}
		return runBatch(ctx, tx, b)
	})
	return dialect.Refused("put push config", err)
}

// GetPushConfig returns one configuration of a task in the scope, with its
// secrets opened.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	return s.sealer.ScanConfig(s.pool.QueryRow(ctx, sqlGetConfig, taskID, id, sc.Tenant, sc.Owner), sc, taskID, id)
}

// ListPushConfigs returns a task's configurations ordered by id, or
// ErrNotFound when the task is not in the scope.
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	rows, err := s.pool.Query(ctx, sqlListConfigs, taskID, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("list push configs", err)
	}
	defer rows.Close()
	return sqlstore.ReadConfigs[[]byte](s.sealer, rows, sc, taskID)
}

// DeletePushConfig removes one configuration of a task in the scope, with
// its queued notifications (ON DELETE CASCADE). A missing configuration is
// not an error; a task outside the scope is ErrNotFound.
func (s *Store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	n, err := affected(s.pool.Exec(ctx, sqlDeleteConfig, taskID, id, sc.Tenant, sc.Owner))
	if err != nil {
		return wrap("delete push config", err)
	}
	if n > 0 {
		return nil
	}
	return dialect.Refused("delete push config", dialect.InScope(s.pool.QueryRow(ctx, sqlTaskInScope, taskID, sc.Tenant, sc.Owner)))
}
