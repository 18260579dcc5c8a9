package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// The statements the two SQL stores share (package sqlstore): sqlQueueEvent
// queues an event for every active configuration of a task in the scope,
// sqlQueueOne for one.
var (
	sqlQueueEvent    = dialect.QueueEventSQL()
	sqlQueueOne      = dialect.QueueOneSQL()
	sqlPushTargetsOf = dialect.PushTargetsOfSQL()
	sqlSuspend       = dialect.SuspendSQL()
)

const (
	sqlPushTargets = `SELECT DISTINCT ON (task_id, config_id) task_id, config_id, tenant, owner FROM push_outbox
		ORDER BY task_id, config_id`
	// A target's rows with its configuration, in one statement (one
	// snapshot): no row when the configuration is not stored as the
	// target names it, scope included.
	sqlPending = `SELECT c.data, c.secret, c.version, o.id, o.seq, o.event FROM push_configs c
		JOIN push_outbox o ON o.task_id = c.task_id AND o.config_id = c.id
		WHERE c.task_id = $1 AND c.id = $2 AND c.tenant = $3 AND c.owner = $4
		ORDER BY o.id LIMIT $5`
	sqlDeletePush = `DELETE FROM push_outbox WHERE id = ANY($1)`
	// Claims (ClaimPush): the configuration row is the claimers' mutex
	// (FOR NO KEY UPDATE, which the outbox's foreign key checks do not
	// wait for); a live claim of another holder bars the target; the
	// claim covers the oldest rows.
	sqlLockTarget = `SELECT 1 FROM push_configs WHERE task_id = $1 AND id = $2 AND tenant = $3 AND owner = $4
		FOR NO KEY UPDATE SKIP LOCKED`
	sqlOtherClaim = `SELECT EXISTS (SELECT 1 FROM push_outbox WHERE task_id = $1 AND config_id = $2
		AND claimed_until > now() AND claimed_by <> $3)`
	sqlClaim = `UPDATE push_outbox SET claimed_by = $3, claimed_until = now() + $4 * interval '1 millisecond'
		WHERE id IN (SELECT id FROM push_outbox WHERE task_id = $1 AND config_id = $2 ORDER BY id LIMIT $5)`
	sqlRenewClaim = `UPDATE push_outbox SET claimed_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND claimed_by = $2`
)

// queueForTask adds to a batch the outbox rows of an encoded event, one
// for every active configuration of the task.
func queueForTask(b *pgx.Batch, sc taskstore.Scope, taskID string, seq uint64, evData []byte) {
	b.Queue(sqlQueueEvent, int64(seq), evData, time.Now().UnixMilli(), taskID, sc.Tenant, sc.Owner)
}

// PushTargets returns the configurations with queued notifications, of one
// task or of all.
func (s *Store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	if taskID != "" {
		return dialect.TargetsOf(taskID, func() (sqlstore.Cursor, error) { return s.pool.Query(ctx, sqlPushTargetsOf, taskID) })
	}
	rows, err := s.pool.Query(ctx, sqlPushTargets)
	if err != nil {
		return nil, wrap("push targets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskstore.PushTarget, error) {
		var t taskstore.PushTarget
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
// Rows are not claimed: with several processes on the database, push
// senders use ClaimPush instead.
func (s *Store) PendingPush(ctx context.Context, t taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	rows, err := s.pool.Query(ctx, sqlPending, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner, max(limit, 1))
	if err != nil {
		return nil, wrap("pending push", err)
	}
	return s.readPending(t, rows)
}

var _ taskstore.OutboxClaims = (*Store)(nil)

// ClaimPush claims the target's oldest rows for holder, in one
// transaction (see taskstore.OutboxClaims).
func (s *Store) ClaimPush(ctx context.Context, holder string, t taskstore.PushTarget, limit int, lease time.Duration) ([]*taskstore.Notification, error) {
	var out []*taskstore.Notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, sqlLockTarget, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner).Scan(&one)
		if isNoRows(err) {
			return nil // no such configuration, or another claimer is at it
		}
		if err != nil {
			return err
		}
		var other bool
		if err := tx.QueryRow(ctx, sqlOtherClaim, t.TaskID, t.ConfigID, holder).Scan(&other); err != nil || other {
			return err
		}
		if _, err := tx.Exec(ctx, sqlClaim, t.TaskID, t.ConfigID, holder, lease.Milliseconds(), max(limit, 1)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sqlPending, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner, max(limit, 1))
		if err != nil {
			return err
		}
		out, err = s.readPending(t, rows)
		return err
	})
	if err != nil {
		return nil, wrap("claim push", err)
	}
	return out, nil
}

// RenewPush extends holder's claim on one row.
func (s *Store) RenewPush(ctx context.Context, holder string, id int64, lease time.Duration) (bool, error) {
	n, err := affected(s.pool.Exec(ctx, sqlRenewClaim, id, holder, lease.Milliseconds()))
	if err != nil {
		return false, wrap("renew push claim", err)
	}
	return n == 1, nil
}

// readPending reads rows of sqlPending, closing them.
func (s *Store) readPending(t taskstore.PushTarget, rows pgx.Rows) ([]*taskstore.Notification, error) {
	defer rows.Close()
	var out []*taskstore.Notification
	var cfg *taskstore.PushConfig
	var data, secret, ev []byte
	var version string
	var id, seq int64
	for rows.Next() {
		if err := rows.Scan(&data, &secret, &version, &id, &seq, &ev); err != nil {
			return nil, wrap("pending push", err)
		}
		if cfg == nil {
			var err error
			if cfg, err = s.sealer.Config(t.Scope, t.TaskID, t.ConfigID, data, secret, version); err != nil {
				return nil, err
			}
		}
		n, err := dialect.Notification(t, id, seq, ev)
		if err != nil {
			return nil, err
		}
		n.Config = cfg
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
