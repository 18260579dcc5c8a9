package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// prepareOutbox prepares the statements of the push outbox: those the task
// and configuration writes use to queue and drop rows, and those of the
// Outbox role itself.
func (s *Store) prepareOutbox(p *preparer) {
	// queueEvent queues an event for every active configuration of a task
	// in the scope, queueOne for one.
	const queueSelect = `INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
		SELECT tenant, owner, task_id, id, ?, ?, ? FROM push_configs
		WHERE task_id = ? AND tenant = ? AND owner = ? AND suspended IS NULL`
	s.queueEvent = p.writer(queueSelect)
	s.queueOne = p.writer(queueSelect + ` AND id = ?`)
	s.dropQueued = p.writer(`DELETE FROM push_outbox WHERE task_id = ? AND config_id = ?`)
	s.suspend = p.writer(`UPDATE push_configs SET suspended = ? WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	s.unsuspend = p.writer(`UPDATE push_configs SET suspended = NULL WHERE task_id = ? AND id = ?`)
	s.deletePush = p.writer(`DELETE FROM push_outbox WHERE id = ?`)
	s.pushTargetsOf = p.reader(`SELECT config_id, min(tenant), min(owner) FROM push_outbox WHERE task_id = ?
		GROUP BY config_id ORDER BY config_id`)
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

// queuedEvent returns the encoded event that ev queues in the outbox, or
// nil when it queues nothing.
func queuedEvent(ev taskstore.Event) ([]byte, error) {
	if !ev.Push || ev.Response == nil {
		return nil, nil
	}
	return marshal(ev.Response)
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
		return s.pushTargetsOfTask(ctx, taskID)
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

// pushTargetsOfTask returns the configurations of one task with queued
// notifications.
func (s *Store) pushTargetsOfTask(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	rows, err := s.pushTargetsOf.QueryContext(ctx, taskID)
	if err != nil {
		return nil, wrap("push targets", err)
	}
	defer rows.Close()
	var out []taskstore.PushTarget
	for rows.Next() {
		t := taskstore.PushTarget{TaskID: taskID}
		if err := rows.Scan(&t.ConfigID, &t.Scope.Tenant, &t.Scope.Owner); err != nil {
			return nil, wrap("push targets", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("push targets", err)
	}
	return out, nil
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
	err = tx.StmtContext(ctx, s.getConfig).QueryRowContext(ctx, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner).Scan(&data, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("pending push", err)
	}
	cfg, err := s.openConfig(t.Scope, t.TaskID, t.ConfigID, data, secret)
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
	for rows.Next() {
		n := &taskstore.Notification{Target: t, Event: new(a2a.StreamResponse)}
		var seq int64
		var ev sql.RawBytes
		if err := rows.Scan(&n.ID, &seq, &ev); err != nil {
			rowErr = wrap("pending push", err)
			break
		}
		n.Seq = uint64(seq)
		if err := proto.Unmarshal(ev, n.Event); err != nil {
			rowErr = wrap("decode queued event", err)
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
