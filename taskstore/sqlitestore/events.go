package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// prepareEvents prepares the statements of Append and of the event log.
func (s *Store) prepareEvents(p *preparer) {
	// The header updates check the scope, the sequence number and the
	// push mark in their WHERE clause, so an event needs no read first and
	// no RETURNING (whose row costs about what the UPDATE does); see
	// updateHeader.
	//
	// The event that was last becomes prunable: the old last_ms is its
	// time (the right side of SET reads the row as it was), which is
	// prune_ms unless an older event already set it.
	const cond = ` WHERE id = ? AND tenant = ? AND owner = ? AND seq = ? AND has_push = ?`
	const head = `UPDATE tasks SET seq = ?, last_ms = ?, prune_ms = coalesce(prune_ms, last_ms)`
	s.headSeq = p.writer(head + cond)
	s.headStatus = p.writer(head + `, state = ?, status_ms = ?, status = ?` + cond)
	s.headTask = p.writer(head + `, state = ?, status_ms = ?, status = ?, context_id = ?, data = ?` + cond)
	s.seqW = p.writer(dialect.LastSeqSQL())
	const nextHistory = `(SELECT coalesce(max(n), -1) + 1 FROM task_history WHERE task_id = ?)`
	s.addHistory = p.writer(`INSERT INTO task_history (task_id, n, message) VALUES (?, ` + nextHistory + `, ?)`)
	s.addHistoryIn = p.writer(`INSERT INTO task_history (task_id, n, message)
		SELECT id, ` + nextHistory + `, ? FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.addChunk = p.writer(`INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk)
		VALUES (?, (SELECT coalesce(max(n), -1) + 1 FROM task_artifacts WHERE task_id = ?), ?, ?, ?)`)
	const firstChunk = `(SELECT min(n) FROM task_artifacts WHERE task_id = ? AND artifact_id = ?)`
	s.replaceChunk = p.writer(`UPDATE task_artifacts SET append = 0, chunk = ? WHERE task_id = ? AND n = ` + firstChunk)
	s.dropChunks = p.writer(`DELETE FROM task_artifacts WHERE task_id = ? AND artifact_id = ? AND n > ` + firstChunk)
	s.clearHistory = p.writer(`DELETE FROM task_history WHERE task_id = ?`)
	s.clearChunks = p.writer(`DELETE FROM task_artifacts WHERE task_id = ?`)

	// The task's last sequence number and the events after ?4, in one
	// statement (one snapshot): a row with no event when there is none, no
	// row when the task is not in the scope.
	s.events = p.reader(`SELECT t.seq, coalesce(e.seq, 0), e.first_seq, e.response FROM tasks t
		LEFT JOIN task_events e ON e.task_id = t.id AND e.seq > ?4
		WHERE t.id = ?1 AND t.tenant = ?2 AND t.owner = ?3 ORDER BY e.seq LIMIT ?5`)
	s.logRow = p.writer(`INSERT INTO task_events (task_id, seq, created_ms, first_seq, response) VALUES (?, ?, ?, ?, ?)`)
	s.timelineBase = p.reader(dialect.TimelineBaseSQL())
	// The steps of PruneEvents: the next tasks with an event to prune,
	// by the index of their mark; the removal of a task's rows before the
	// cut, but its last, each returned; the last row when it holds more
	// events than the last and was logged before the cut, and its rewrite
	// to hold the last alone; the task's timeline base read and written
	// with the removed events folded in; the task's mark set again from
	// what is left.
	s.pruneTasks = p.writer(`SELECT id, seq FROM tasks WHERE prune_ms < ? ORDER BY prune_ms` + sqlstore.LimitBatch)
	// A log is pruned from its start, so that its timeline base folds its
	// events in order: a row logged before the cut (or a last row to trim)
	// goes with every row before it, sooner than asked when a wall clock
	// set back stamped it older than the one before it; every row left
	// but the last is then logged at or after the cut, so the mark is too.
	s.pruneEvents = p.writer(`DELETE FROM task_events WHERE task_id = ?1 AND seq < ?2 AND seq <= (SELECT max(seq) FROM task_events
		WHERE task_id = ?1 AND created_ms < ?3 AND (seq < ?2 OR first_seq IS NOT NULL))
		RETURNING seq, first_seq, response`)
	s.getBase = p.writer(`SELECT base FROM task_timelines WHERE task_id = ?`)
	s.putBase = p.writer(dialect.PutTimelineBaseSQL())
	s.pruneLast = p.writer(`SELECT first_seq, response FROM task_events
		WHERE task_id = ? AND seq = ? AND first_seq IS NOT NULL AND created_ms < ?`)
	s.trimLast = p.writer(`UPDATE task_events SET first_seq = NULL, response = ? WHERE task_id = ? AND seq = ?`)
	s.pruneMark = p.writer(`UPDATE tasks SET prune_ms = (SELECT min(created_ms) FROM task_events
		WHERE task_id = ?1 AND (seq < tasks.seq OR first_seq IS NOT NULL)) WHERE id = ?1`)
}

// logEvents inserts the row of the task's log that holds evs
// (layout.JoinEvents), inside a write, as logged at ms.
func (s *Store) logEvents(w *wtx, taskID string, evs []layout.Logged, ms int64) error {
	seq, first, data := layout.JoinEvents(evs)
	_, err := w.exec(context.Background(), s.logRow, taskID, seq, ms, first, data)
	return err
}

// appendOp is one Append, encoded before it joins the group commit.
type appendOp = sqlstore.Op

// Append records one change of the task in the scope in one transaction:
// ev.Message added to its history; ev.Response added to its log, applied
// to the task's rows and queued in the push outbox. An event is one small
// header UPDATE (which also checks the scope and sequence) and one or two
// small INSERTs; only a Task event, which replaces everything, rewrites
// the task's rows.
func (s *Store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	op, err := dialect.EncodeOp(sc, id, ev)
	if err != nil {
		return err
	}
	return s.writeTask(ctx, sc, id, "append", func(w *wtx) error { return s.runAppend(w, op) })
}

// writeTask runs fn, a write of the task with the id, in the group
// commit, then drops the task from GetTask's cache (taskCache) before it
// returns. An error other than ErrNotFound and ErrSeq is wrapped with
// what.
func (s *Store) writeTask(ctx context.Context, sc taskstore.Scope, id, what string, fn func(w *wtx) error) error {
	err := s.write(ctx, fn)
	s.cache.drop(cacheKey{sc, id})
	return dialect.Refused(what, err)
}

// AppendBatch records consecutive events of the task in one write, all or
// none (taskstore.BatchAppender): each is an Append inside the one
// operation of the group commit.
func (s *Store) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	ops, err := dialect.EncodeBatch(sc, id, evs)
	if err != nil || len(ops) == 0 {
		return err
	}
	return s.writeTask(ctx, sc, id, "append batch", func(w *wtx) error { return s.runBatch(w, ops) })
}

// runBatch is an AppendBatch inside the writer's transaction. A batch of
// status updates and artifact chunks (what the server pipelines) moves
// the task's header once, to its last event and its last status, then
// writes each event's rows (a row per artifact for its chunks, joined by
// layout.EncodeRun), and logs the events in one row; any other batch is
// its Appends one after the other.
func (s *Store) runBatch(w *wtx, ops []*appendOp) error {
	for _, op := range ops {
		if op.Event == nil || op.Task != nil || op.Msg != nil {
			return s.runEach(w, ops)
		}
	}
	head := &appendOp{Scope: ops[0].Scope, ID: ops[0].ID, Seq: ops[len(ops)-1].Seq}
	for _, op := range ops {
		if op.Status != nil {
			head.Status = op.Status
		}
	}
	ms := s.now().UnixMilli()
	hasPush, err := s.updateHeader(w, head, ops[0].Seq-1, ms)
	if errors.Is(err, sql.ErrNoRows) {
		return s.seqError(w, ops[0])
	}
	if err != nil {
		return err
	}
	logged := make([]layout.Logged, len(ops))
	for i, op := range ops {
		if err := s.applyEvent(w, op, hasPush); err != nil {
			return dialect.BatchError(err)
		}
		logged[i] = layout.Logged{Seq: op.Seq, Data: op.Event}
	}
	if err := s.logEvents(w, head.ID, logged, ms); err != nil {
		return dialect.BatchError(err)
	}
	return nil
}

// runEach runs the batch's Appends one after the other.
func (s *Store) runEach(w *wtx, ops []*appendOp) error {
	for i, op := range ops {
		err := s.runAppend(w, op)
		if err != nil && i > 0 {
			return dialect.BatchError(err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runAppend is an Append inside the writer's transaction.
func (s *Store) runAppend(w *wtx, op *appendOp) error {
	bg := context.Background()
	if op.Event == nil {
		if op.Seq != 0 {
			return s.seqError(w, op)
		}
		if op.Msg == nil {
			return s.seqError(w, op) // nil when the task is in the scope
		}
		n, err := affected(w.exec(bg, s.addHistoryIn, op.ID, op.Msg, op.ID, op.Scope.Tenant, op.Scope.Owner))
		if err == nil && n == 0 {
			return taskstore.ErrNotFound
		}
		return err
	}
	ms := s.now().UnixMilli()
	hasPush, err := s.updateHeader(w, op, op.Seq-1, ms)
	if errors.Is(err, sql.ErrNoRows) {
		return s.seqError(w, op)
	}
	if err != nil {
		return err
	}
	if op.Msg != nil {
		if _, err := w.exec(bg, s.addHistory, op.ID, op.ID, op.Msg); err != nil {
			return err
		}
	}
	if err := s.applyEvent(w, op, hasPush); err != nil {
		return err
	}
	return s.logEvents(w, op.ID, []layout.Logged{{Seq: op.Seq, Data: op.Event}}, ms)
}

// applyEvent writes an event's rows but its log row, once the header has
// moved past it: its change to the history and artifact rows, and its
// push outbox rows when the task has configurations (hasPush).
func (s *Store) applyEvent(w *wtx, op *appendOp, hasPush bool) error {
	if err := s.applyRows(w, op); err != nil {
		return err
	}
	if op.Push && hasPush {
		return s.queueForTask(context.Background(), w, op.Scope, op.ID, op.Seq, op.Event)
	}
	return nil
}

// updateHeader moves the task's header from sequence number prev to
// op.Seq, logged at ms, with op's status or, for a Task event, its whole
// header. It
// returns whether the task has a push configuration (has_push), or
// sql.ErrNoRows when the task is not in the scope or its last sequence
// number is not prev. The UPDATE names has_push = 0 first, which is
// every task's mark until a configuration is put: one statement for such
// a task, a second (has_push = 1) only for a task with configurations.
func (s *Store) updateHeader(w *wtx, op *appendOp, prev uint64, ms int64) (hasPush bool, err error) {
	st, args := s.headSeq, []any{int64(op.Seq), ms}
	switch {
	case op.Status != nil:
		h := op.Status
		st, args = s.headStatus, append(args, h.State, h.StatusMS, h.Status)
	case op.Task != nil:
		h := op.Task
		st, args = s.headTask, append(args, h.State, h.StatusMS, h.Status, h.ContextID, h.Data)
	}
	args = append(args, op.ID, op.Scope.Tenant, op.Scope.Owner, int64(prev), 0)
	for mark := range 2 {
		args[len(args)-1] = mark
		n, err := affected(w.exec(context.Background(), st, args...))
		if err != nil || n > 0 {
			return mark == 1, err
		}
	}
	return false, sql.ErrNoRows
}

// applyRows writes the event's change to the history and artifact rows.
func (s *Store) applyRows(w *wtx, op *appendOp) error {
	bg := context.Background()
	switch {
	case op.Hist != nil:
		_, err := w.exec(bg, s.addHistory, op.ID, op.ID, op.Hist)
		return err
	case op.Chunk != nil:
		c := op.Chunk
		if !c.AppendTo {
			n, err := affected(w.exec(bg, s.replaceChunk, c.Data, op.ID, op.ID, c.ID))
			if err != nil || n > 0 {
				if err == nil {
					_, err = w.exec(bg, s.dropChunks, op.ID, c.ID, op.ID, c.ID)
				}
				return err
			}
		}
		_, err := w.exec(bg, s.addChunk, op.ID, op.ID, c.ID, c.AppendTo, c.Data)
		return err
	case op.Task != nil:
		if _, err := w.exec(bg, s.clearHistory, op.ID); err != nil {
			return err
		}
		if _, err := w.exec(bg, s.clearChunks, op.ID); err != nil {
			return err
		}
		return s.writeParts(w, op.ID, op.Parts)
	}
	return nil
}

// seqError explains why an Append wrote nothing: ErrNotFound when the task
// is not in the scope, otherwise ErrSeq, or nil for an empty Append.
func (s *Store) seqError(w *wtx, op *appendOp) error {
	var last int64
	err := w.queryRow(s.seqW, op.ID, op.Scope.Tenant, op.Scope.Owner).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return taskstore.ErrNotFound
	case err != nil:
		return err
	case op.Event == nil && op.Seq == 0:
		return nil
	}
	return taskstore.ErrSeq
}

// Events returns up to limit of the task's logged events after the
// sequence number after (every one when limit is not positive), oldest
// first, read in one statement with the task's last sequence number.
func (s *Store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	n := int64(limit)
	if n <= 0 {
		n = -1 // no limit
	}
	rows, err := s.events.QueryContext(ctx, id, sc.Tenant, sc.Owner, int64(after), n)
	if err != nil {
		return nil, wrap("events", err)
	}
	defer rows.Close()
	return sqlstore.ReadEvents[sql.RawBytes](dialect, rows, after, limit)
}

// PruneEvents removes the events logged before the given time, except
// each task's last, in batches of their own transactions. It finds the
// tasks by their mark (prune_ms: when the oldest of a task's events but
// the last was logged, indexed where set), not by an index of every
// event; each task's mark is set again from the events it keeps (NULL
// when only its last is left), so a task is read once per call and a
// task with nothing to prune not at all. A wall clock set back can log an
// event before its task's mark; it is pruned once the mark is passed.
// The count is of events, not of rows (layout.JoinEvents).
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	cut := order.CeilMillis(before)
	total := 0
	for {
		var n, seen int
		err := s.write(ctx, func(w *wtx) error {
			n, seen = 0, 0
			bg := context.Background()
			rows, err := w.stmt(s.pruneTasks).QueryContext(bg, cut)
			if err != nil {
				return err
			}
			type task struct {
				id  string
				seq int64
			}
			var batch []task
			for rows.Next() {
				var t task
				if err := rows.Scan(&t.id, &t.seq); err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, t)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			seen = len(batch)
			for _, t := range batch {
				d, err := s.pruneTask(w, t.id, t.seq, cut)
				if err != nil {
					return err
				}
				n += d
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

// pruneTask removes the events of the task logged before cut, but its
// last (number seq), inside a write, folds them into its timeline base,
// sets its mark again, and returns the number of events removed. The last
// event's row may hold others logged with it, which it rewrites to hold
// the last alone.
func (s *Store) pruneTask(w *wtx, id string, seq, cut int64) (int, error) {
	bg := context.Background()
	rows, err := w.stmt(s.pruneEvents).QueryContext(bg, id, seq, cut)
	if err != nil {
		return 0, err
	}
	n := 0
	var pruned []layout.Logged
	for rows.Next() {
		var row int64
		var first *int64
		var data []byte
		if err := rows.Scan(&row, &first, &data); err != nil {
			rows.Close()
			return 0, err
		}
		n++
		if first != nil {
			n += int(row - *first) // a row of several events
		}
		pruned = dialect.PrunedEvents(pruned, row, first, data, uint64(seq))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var first int64
	var data []byte
	switch err := w.queryRow(s.pruneLast, id, seq, cut).Scan(&first, &data); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, err
	default:
		// A row that does not split is left as it is: Events reports it,
		// and it does not stop the pruning of every other task.
		if evs, err := layout.SplitEvents(data, uint64(first), uint64(seq)); err == nil {
			n += len(evs) - 1
			pruned = dialect.PrunedEvents(pruned, seq, &first, data, uint64(seq))
			if _, err := w.exec(bg, s.trimLast, evs[len(evs)-1].Data, id, seq); err != nil {
				return 0, err
			}
		}
	}
	if len(pruned) > 0 {
		var base []byte
		if err := w.queryRow(s.getBase, id).Scan(&base); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
		if base, err = dialect.FoldPruned(base, pruned); err != nil {
			return 0, err
		}
		if _, err := w.exec(bg, s.putBase, id, base); err != nil {
			return 0, err
		}
	}
	_, err = w.exec(bg, s.pruneMark, id)
	return n, err
}

// TimelineBase returns the task's timeline base (taskstore.Fold),
// nil when none of its events was pruned.
func (s *Store) TimelineBase(ctx context.Context, sc taskstore.Scope, id string) ([]byte, error) {
	return dialect.ScanTimelineBase(s.timelineBase.QueryRowContext(ctx, id, sc.Tenant, sc.Owner))
}
