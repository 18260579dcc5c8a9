package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// prepareEvents prepares the statements of the event log.
func (s *Store) prepareEvents(p *preparer) {
	s.insertEvent = p.writer(`INSERT INTO task_events (task_id, seq, created_ms, response) VALUES (?, ?, ?, ?)`)
	s.getTaskW = p.writer(`SELECT data, seq FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.events = p.reader(`SELECT seq, response FROM task_events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
	// One step of PruneEvents: the next old events, in the order of the
	// time index, after a position in it.
	s.oldEvents = p.writer(`SELECT created_ms, task_id, seq FROM task_events
		WHERE created_ms < ? AND (created_ms, task_id, seq) > (?, ?, ?)
		ORDER BY created_ms, task_id, seq LIMIT ` + fmt.Sprint(deleteBatch))
	s.pruneEvent = p.writer(`DELETE FROM task_events WHERE task_id = ? AND seq = ?
		AND seq < (SELECT seq FROM tasks WHERE id = ?)`)
}

// logEvent inserts event seq of the task into its log, inside a write.
func (s *Store) logEvent(w *wtx, taskID string, seq uint64, data []byte) error {
	_, err := w.exec(context.Background(), s.insertEvent, taskID, int64(seq), s.now().UnixMilli(), data)
	return err
}

// Append records one change of the task in the scope in one transaction:
// ev.Message added to its history, ev.Response added to its log, applied
// to the task (taskstore.Apply) and queued in the push outbox.
func (s *Store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	var evData []byte
	var applied *a2a.StreamResponse
	var err error
	if ev.Response != nil {
		if evData, err = marshal(ev.Response); err != nil {
			return err
		}
		applied = proto.Clone(ev.Response).(*a2a.StreamResponse)
	}
	var msg *a2a.Message
	if ev.Message != nil {
		msg = proto.Clone(ev.Message).(*a2a.Message)
	}
	err = s.write(ctx, func(w *wtx) error {
		var data []byte
		var last int64
		err := w.queryRow(s.getTaskW, id, sc.Tenant, sc.Owner).Scan(&data, &last)
		if errors.Is(err, sql.ErrNoRows) {
			return taskstore.ErrNotFound
		}
		if err != nil {
			return err
		}
		if (applied != nil && ev.Seq != uint64(last)+1) || (applied == nil && ev.Seq != 0) {
			return taskstore.ErrSeq
		}
		if msg == nil && applied == nil {
			return nil
		}
		t, err := unmarshalTask(data)
		if err != nil {
			return err
		}
		if msg != nil {
			t.History = append(t.History, msg)
		}
		seq := uint64(last)
		if applied != nil {
			taskstore.Apply(t, applied)
			seq = ev.Seq
			if err := s.logEvent(w, id, seq, evData); err != nil {
				return err
			}
		}
		if data, err = marshal(t); err != nil {
			return err
		}
		if _, err := w.exec(ctx, s.updateTask, t.GetContextId(), int32(t.GetStatus().GetState()),
			order.StatusMillis(t), data, int64(seq), id, sc.Tenant, sc.Owner); err != nil {
			return err
		}
		if ev.Push && applied != nil {
			return s.queueForTask(ctx, w, sc, id, seq, evData)
		}
		return nil
	})
	if err != nil && !errors.Is(err, taskstore.ErrNotFound) && !errors.Is(err, taskstore.ErrSeq) {
		return wrap("append", err)
	}
	return err
}

// Events returns up to limit of the task's logged events after the
// sequence number after (every one when limit is not positive), oldest
// first, read in one read transaction with the task's last sequence
// number.
func (s *Store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("events", err)
	}
	defer tx.Rollback()
	var last int64
	err = tx.StmtContext(ctx, s.lastSeq).QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("events", err)
	}
	if after >= uint64(last) {
		return nil, nil
	}
	n := int64(limit)
	if n <= 0 {
		n = -1 // no limit
	}
	rows, err := tx.StmtContext(ctx, s.events).QueryContext(ctx, id, int64(after), n)
	if err != nil {
		return nil, wrap("events", err)
	}
	defer rows.Close()
	var out []a2a.StreamEvent
	for rows.Next() {
		var seq int64
		var data sql.RawBytes
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, wrap("events", err)
		}
		if len(out) == 0 && uint64(seq) != after+1 {
			return nil, taskstore.ErrPruned
		}
		r := new(a2a.StreamResponse)
		if err := proto.Unmarshal(data, r); err != nil {
			return nil, wrap("decode event", err)
		}
		out = append(out, a2a.StreamEvent{Seq: uint64(seq), Response: r})
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("events", err)
	}
	if len(out) == 0 {
		return nil, taskstore.ErrPruned
	}
	return out, nil
}

// PruneEvents removes the events logged before the given time, except
// each task's last, in batches of their own transactions. It walks the
// time index with a cursor, so the last events it keeps are read once
// per call, not once per batch.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	cut := order.CeilMillis(before)
	type key struct {
		ms  int64
		id  string
		seq int64
	}
	cur := key{ms: -1 << 62}
	total := 0
	for {
		var n, seen int
		err := s.write(ctx, func(w *wtx) error {
			rows, err := w.stmt(s.oldEvents).QueryContext(context.Background(), cut, cur.ms, cur.id, cur.seq)
			if err != nil {
				return err
			}
			var batch []key
			for rows.Next() {
				var k key
				if err := rows.Scan(&k.ms, &k.id, &k.seq); err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, k)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			seen = len(batch)
			for _, k := range batch {
				d, err := affected(w.exec(context.Background(), s.pruneEvent, k.id, k.seq, k.id))
				if err != nil {
					return err
				}
				n += int(d)
			}
			if seen > 0 {
				cur = batch[seen-1]
			}
			return nil
		})
		if err != nil {
			return total, wrap("prune events", err)
		}
		total += n
		if seen < deleteBatch {
			return total, nil
		}
	}
}
