package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

const (
	// sqlQueueEvent queues an event for every active configuration of a
	// task in the scope, sqlQueueOne for one.
	sqlQueueEvent = `INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
		SELECT tenant, owner, task_id, id, $1, $2, $3 FROM push_configs
		WHERE task_id = $4 AND tenant = $5 AND owner = $6 AND suspended IS NULL`
	sqlQueueOne = sqlQueueEvent + ` AND id = $7`

	sqlPushTargetsOf = `SELECT config_id, min(tenant), min(owner) FROM push_outbox WHERE task_id = $1
		GROUP BY config_id ORDER BY config_id`
	sqlPushTargets = `SELECT DISTINCT ON (task_id, config_id) task_id, config_id, tenant, owner FROM push_outbox
		ORDER BY task_id, config_id`
	// A target's rows with its configuration, in one statement (one
	// snapshot): no row when the configuration is not stored as the
	// target names it, scope included.
	sqlPending = `SELECT c.data, c.secret, o.id, o.seq, o.event FROM push_configs c
		JOIN push_outbox o ON o.task_id = c.task_id AND o.config_id = c.id
		WHERE c.task_id = $1 AND c.id = $2 AND c.tenant = $3 AND c.owner = $4
		ORDER BY o.id LIMIT $5`
	sqlDeletePush = `DELETE FROM push_outbox WHERE id = ANY($1)`
	sqlSuspend    = `UPDATE push_configs SET suspended = $1 WHERE task_id = $2 AND id = $3 AND tenant = $4 AND owner = $5`
)

// queueForTask adds to a batch the outbox rows of an encoded event, one
// for every active configuration of the task.
func queueForTask(b *pgx.Batch, sc taskstore.Scope, taskID string, seq uint64, evData []byte) {
	b.Queue(sqlQueueEvent, int64(seq), evData, time.Now().UnixMilli(), taskID, sc.Tenant, sc.Owner)
}

// PushTargets returns the configurations with queued notifications, of one
// task or of all.
func (s *Store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	var rows pgx.Rows
	var err error
	if taskID != "" {
		rows, err = s.pool.Query(ctx, sqlPushTargetsOf, taskID)
	} else {
		rows, err = s.pool.Query(ctx, sqlPushTargets)
	}
	if err != nil {
		return nil, wrap("push targets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskstore.PushTarget, error) {
		t := taskstore.PushTarget{TaskID: taskID}
		if taskID != "" {
			return t, r.Scan(&t.ConfigID, &t.Scope.Tenant, &t.Scope.Owner)
		}
		return t, r.Scan(&t.TaskID, &t.ConfigID, &t.Scope.Tenant, &t.Scope.Owner)
	})
	if err != nil {
		return nil, wrap("push targets", err)
	}
	return out, nil
}

// PendingPush returns up to limit of a configuration's queued
// notifications, oldest first, read in one statement with the
// configuration, which they all share (opened once). A target with no
// stored configuration (scope included) has none.
//
// Rows are not claimed: the push sender of one process reads, posts and
// deletes them (see the package documentation).
func (s *Store) PendingPush(ctx context.Context, t taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	rows, err := s.pool.Query(ctx, sqlPending, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner, max(limit, 1))
	if err != nil {
		return nil, wrap("pending push", err)
	}
	defer rows.Close()
	var out []*taskstore.Notification
	var cfg *a2a.TaskPushNotificationConfig
	for rows.Next() {
		var data, secret, ev []byte
		var seq int64
		n := &taskstore.Notification{Target: t, Event: new(a2a.StreamResponse)}
		if err := rows.Scan(&data, &secret, &n.ID, &seq, &ev); err != nil {
			return nil, wrap("pending push", err)
		}
		if cfg == nil {
			if cfg, err = s.openConfig(t.Scope, t.TaskID, t.ConfigID, data, secret); err != nil {
				return nil, err
			}
		}
		n.Seq, n.Config = uint64(seq), cfg
		if err := proto.Unmarshal(ev, n.Event); err != nil {
			return nil, wrap("decode queued event", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("pending push", err)
	}
	return out, nil
}

// DeletePush removes notifications by id, in one statement.
func (s *Store) DeletePush(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, sqlDeletePush, ids); err != nil {
		return wrap("delete push", err)
	}
	return nil
}

// SuspendPush marks a configuration suspended and drops its queued
// notifications, in one transaction.
func (s *Store) SuspendPush(ctx context.Context, t taskstore.PushTarget, reason string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n, err := affected(tx.Exec(ctx, sqlSuspend, reason, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner))
		if err != nil || n == 0 {
			return err
		}
		_, err = tx.Exec(ctx, sqlDropQueued, t.TaskID, t.ConfigID)
		return err
	})
	if err != nil {
		return wrap("suspend push", err)
	}
	return nil
}
