package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// prepareOutbox prepares the statements of the push outbox: those the task
// and configuration writes use to queue and drop rows, and those of the
// Outbox role itself.
func (s *Store) prepareOutbox(p *preparer) {
	s.queueEvent = p.writer(dialect.QueueEventSQL())
	s.queueOne = p.writer(dialect.QueueOneSQL())
	s.dropQueued = p.writer(dialect.DropQueuedSQL())
	s.suspend = p.writer(dialect.SuspendSQL())
	s.unsuspend = p.writer(`UPDATE push_configs SET suspended = NULL WHERE task_id = ? AND id = ?`)
	s.deletePush = p.writer(`DELETE FROM push_outbox WHERE id = ?`)
	s.pushTargetsOf = p.reader(dialect.PushTargetsOfSQL())
	// One step of a skip scan over the index: the next configuration with
	// queued rows after a (task, config) position.
	s.nextPushTarget = p.reader(`SELECT task_id, config_id, tenant, owner FROM push_outbox
		WHERE (task_id, config_id) > (?, ?) ORDER BY task_id, config_id LIMIT 1`)
	// The rows only: their configuration is read, and opened, once per
	// batch (PendingPush), not joined into every row.
	s.pending = p.reader(`SELECT id, seq, event FROM push_outbox
		WHERE task_id = ? AND config_id = ? AND tenant = ? AND owner = ?
		ORDER BY id LIMIT ?`)
}

// queueForTask queues an encoded event for every active configuration of
// the task, inside a write; nothing when evData is nil.
func (s *Store) queueForTask(ctx context.Context, w *wtx, sc taskstore.Scope, taskID string, seq uint64, evData []byte) error {
	if evData == nil {
		return nil
	}
	_, err := w.exec(ctx, s.queueEvent, int64(seq), evData, time.Now().UnixMilli(), taskID, sc.Tenant, sc.Owner)
	return err
}

// PushTargets returns the configurations with queued notifications, of one
// task or, walking the outbox index one configuration at a time, of all.
func (s *Store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	if taskID != "" {
		return dialect.TargetsOf(taskID, func() (sqlstore.Cursor, error) { return query(s.pushTargetsOf.QueryContext(ctx, taskID)) })
	}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("push targets", err)
	}
	defer tx.Rollback()
	next := tx.StmtContext(ctx, s.nextPushTarget)
	var out []taskstore.PushTarget
	var t taskstore.PushTarget
	for {
		err := next.QueryRowContext(ctx, t.TaskID, t.ConfigID).Scan(&t.TaskID, &t.ConfigID, &t.Scope.Tenant, &t.Scope.Owner)
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, wrap("push targets", err)
		}
		out = append(out, t)
	}
}

// PendingPush returns up to limit of a configuration's queued
// notifications, oldest first. They all share one copy of the
// configuration, read and opened once, in the same read transaction as
// the rows: a target with no stored configuration (scope included) has
// none. Errors come out as if the configuration were opened with the
// first row: a row that cannot be read before it fails the call, a
// configuration that cannot be opened before any later row's failure.
func (s *Store) PendingPush(ctx context.Context, t taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("pending push", err)
	}
	defer tx.Rollback()
	out, rowErr, err := pendingRows(ctx, tx.StmtContext(ctx, s.pending), t, limit)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	var data, secret []byte
	var version string
	err = tx.StmtContext(ctx, s.getConfig).QueryRowContext(ctx, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner).Scan(&data, &secret, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("pending push", err)
	}
	cfg, err := s.sealer.Config(t.Scope, t.TaskID, t.ConfigID, data, secret, version)
	if err != nil {
		return nil, err
	}
	if rowErr != nil {
		return nil, rowErr
	}
	for _, n := range out {
		n.Config = cfg
	}
	return out, nil
}

// pendingRows reads and decodes a target's queued rows. A failure after
// the first row is returned as rowErr, with the rows before it, so that
// PendingPush can order it after the configuration's; err is a failure
// with no row read.
func pendingRows(ctx context.Context, stmt *sql.Stmt, t taskstore.PushTarget, limit int) (out []*taskstore.Notification, rowErr, err error) {
	rows, err := stmt.QueryContext(ctx, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner, max(limit, 1))
	if err != nil {
		return nil, nil, wrap("pending push", err)
	}
	defer rows.Close()
	var id, seq int64
	var ev sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &seq, &ev); err != nil {
			rowErr = wrap("pending push", err)
			break
		}
		n, err := dialect.Notification(t, id, seq, ev)
		if err != nil {
			rowErr = err
			break
		}
		out = append(out, n)
	}
	if rowErr == nil {
		if err := rows.Err(); err != nil {
			rowErr = wrap("pending push", err)
		}
	}
	if len(out) == 0 {
		return nil, nil, rowErr
	}
	return out, rowErr, nil
}

// DeletePush removes notifications by id, in one transaction.
func (s *Store) DeletePush(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.write(ctx, func(w *wtx) error {
		for _, id := range ids {
			if _, err := w.exec(ctx, s.deletePush, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrap("delete push", err)
	}
	return nil
}

// SuspendPush marks a configuration suspended and drops its queued
// notifications, in one transaction.
func (s *Store) SuspendPush(ctx context.Context, t taskstore.PushTarget, reason string) error {
	err := s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.suspend, reason, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner))
		if err != nil || n == 0 {
			return err
		}
		_, err = w.exec(ctx, s.dropQueued, t.TaskID, t.ConfigID)
		return err
	})
	if err != nil {
		return wrap("suspend push", err)
	}
	return nil
}
