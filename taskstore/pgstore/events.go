package pgstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// The header updates of Append check the scope ($1-$3) and the sequence
// number ($4 is the new one; the row must be at $4-1) in their WHERE
// clause, reserve the numbers of the history ($5 of them) and chunk ($6)
// rows the event adds, and return has_push and the first reserved
// numbers, so an event needs no read first. Their last parameter is the
// writer's fence (see fenced7): the epoch of its replica lease, which
// must still hold, recorded as the task's runner; 0 without a lease.
const (
	headWhere   = ` WHERE ` + taskByID + ` AND seq = $4 - 1`
	headReturn  = ` RETURNING has_push, next_history - $5, next_chunk - $6`
	headCounter = `seq = $4, next_history = next_history + $5, next_chunk = next_chunk + $6`
	sqlHeadSeq  = `UPDATE tasks SET ` + headCounter + `, runner = $7` + headWhere + ` AND ` + fenced7 + headReturn
	// A status update also sets the state, status_ms and status.
	sqlHeadStatus = `UPDATE tasks SET ` + headCounter + `, state = $7, status_ms = $8, status = $9, runner = $10` +
		headWhere + ` AND ` + fenced10 + headReturn
	// A Task event replaces the whole header; its rows are numbered from
	// 0 again ($5 history rows and $6 chunks).
	sqlHeadTask = `UPDATE tasks SET seq = $4, next_history = $5, next_chunk = $6, state = $7, status_ms = $8, status = $9,
		context_id = $10, data = $11, runner = $12` + headWhere + ` AND ` + fenced12 + ` RETURNING has_push, 0, 0`
	// A message without an event: its number and row in one statement.
	sqlAddMessage = `WITH h AS (UPDATE tasks SET next_history = next_history + 1 WHERE ` + taskByID + `
		RETURNING id, next_history - 1 AS n) INSERT INTO task_history (task_id, n, message) SELECT id, n, $4 FROM h`

	// Replacing an artifact: its first chunk takes the new content, its
	// other chunks go; an artifact not there yet is added.
	sqlFirstChunk   = `(SELECT min(n) FROM task_artifacts WHERE task_id = $1 AND artifact_id = $2)`
	sqlReplaceChunk = `UPDATE task_artifacts SET append = false, chunk = $3 WHERE task_id = $1 AND n = ` + sqlFirstChunk
	sqlDropChunks   = `DELETE FROM task_artifacts WHERE task_id = $1 AND artifact_id = $2 AND n > ` + sqlFirstChunk
	sqlNewArtifact  = `INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) SELECT $1, $2, $3, false, $4
		WHERE NOT EXISTS (SELECT 1 FROM task_artifacts WHERE task_id = $1 AND artifact_id = $3)`
	sqlClearHistory = `DELETE FROM task_history WHERE task_id = $1`
	sqlClearChunks  = `DELETE FROM task_artifacts WHERE task_id = $1`

	sqlInsertEvent = `INSERT INTO task_events (task_id, seq, created_ms, response) VALUES ($1, $2, $3, $4)`

	// The task's last sequence number and the events after $4, in one
	// statement (one snapshot): a row with no event (0) when there is
	// none, no row when the task is not in the scope. A row may hold
	// several events (layout.JoinEvents).
	sqlEvents = `SELECT t.seq, coalesce(e.seq, 0), e.first_seq, e.response FROM tasks t
		LEFT JOIN LATERAL (SELECT seq, first_seq, response FROM task_events WHERE task_id = t.id AND seq > $4 ORDER BY seq LIMIT $5) e ON true
		WHERE ` + taskByIDAs
)

// sqlTaskInScope finds a task by id in a scope (dialect.InScope).
var sqlTaskInScope = dialect.TaskInScopeSQL()

var (
	// The two commonest events, a status update and an appended chunk,
	// are one statement each: the header UPDATE and the rows it makes
	// possible as data-modifying CTEs, in one round trip and one implicit
	// transaction instead of BEGIN, the UPDATE, a batch and COMMIT. Every
	// row is inserted FROM h, so a header that did not match (scope,
	// sequence number or fence) writes nothing; the count of h says which.
	// $e, $e+1, $e+2 are the event's created_ms, bytes and whether to queue
	// it in the push outbox.
	sqlAppendStatus = `WITH h(has_push, hn, cn) AS (` + sqlHeadStatus + `),
		m AS (INSERT INTO task_history (task_id, n, message) SELECT $1, h.hn, $11 FROM h WHERE $11::bytea IS NOT NULL),` +
		appendTail(12)
	sqlAppendChunk = `WITH h(has_push, hn, cn) AS (` + sqlHeadSeq + `),
		a AS (INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) SELECT $1, h.cn, $8, true, $9 FROM h),` +
		appendTail(10)
	// An artifact that replaces the one with its id ($8): the first
	// chunk f of that artifact takes the content ($9) and its other
	// chunks go, or, with no such artifact, a new chunk is added. The
	// three see the rows as they were before the statement, so exactly
	// one of the two cases writes.
	sqlAppendArtifact = `WITH h(has_push, hn, cn) AS (` + sqlHeadSeq + `),
		f(n) AS (SELECT min(n) FROM task_artifacts WHERE task_id = $1 AND artifact_id = $8),
		r AS (UPDATE task_artifacts SET append = false, chunk = $9 FROM h, f WHERE task_id = $1 AND task_artifacts.n = f.n),
		d AS (DELETE FROM task_artifacts USING h, f WHERE task_id = $1 AND artifact_id = $8 AND task_artifacts.n > f.n),
		a AS (INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) SELECT $1, h.cn, $8, false, $9 FROM h, f WHERE f.n IS NULL),` +
		appendTail(10)
)

// The steps of PruneEvents, each in a transaction under the prune lock:
// a batch of old log rows removed, never a task's last, returned; or a
// batch of the last rows that hold more events than the last, logged
// before the cut, read and locked, and each rewritten to hold the last
// alone; then the timeline bases of their tasks read and written with
// the removed events folded in. A batch removes the rows of a task up to
// the last of its rows the batch found, so that a task's log is pruned
// from its start, and its base folds its events in order. The batch takes
// the oldest rows (the created_ms index, in order), so that the rows
// before them it removes too are few: a batch of rows in any order could
// name 500 tasks' newest old rows and remove (and return) their whole logs.
var (
	sqlPruneLock   = `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`
	sqlPruneEvents = `WITH c AS (SELECT task_id, max(seq) AS upto FROM (SELECT e.task_id, e.seq FROM task_events e
			JOIN tasks t ON t.id = e.task_id WHERE e.created_ms < $1 AND e.seq < t.seq ORDER BY e.created_ms` + sqlstore.LimitBatch + `) f GROUP BY task_id)
		DELETE FROM task_events d USING c WHERE d.task_id = c.task_id AND d.seq <= c.upto
		RETURNING d.task_id, d.seq, d.first_seq, d.response`
	sqlPruneLast = `SELECT e.task_id, e.seq, e.first_seq, e.response FROM task_events e
		JOIN tasks t ON t.id = e.task_id AND t.seq = e.seq
		WHERE e.created_ms < $1 AND e.first_seq IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM task_events p WHERE p.task_id = e.task_id AND p.seq < e.first_seq)` + sqlstore.LimitBatch + ` FOR UPDATE OF e`
	sqlTrimLast = `UPDATE task_events SET first_seq = NULL, response = $3 WHERE task_id = $1 AND seq = $2`
	sqlGetBases = `SELECT task_id, base FROM task_timelines WHERE task_id = ANY($1)`
	// A base is written only while its task is there: DeleteFinished
	// removes a task's base after its other pieces, in a statement of its
	// own, which sees the base of a prune it waited for.
	sqlPutBases = `INSERT INTO task_timelines (task_id, base)
		SELECT u.id, u.base FROM unnest($1::text[], $2::bytea[]) AS u(id, base) WHERE EXISTS (SELECT 1 FROM tasks WHERE id = u.id)
		ON CONFLICT (task_id) DO UPDATE SET base = excluded.base`
	sqlTimelineBase = dialect.TimelineBaseSQL()
)

// pruneLock is the first key of the transaction-level advisory lock a
// step of PruneEvents takes (the second is the hash of the schema's
// name): replicas prune one step at a time, so that a step folds a task's
// removed events into the base the step before it wrote.
const pruneLock = 0x7072756e // "prun"

// appendOp is one Append, encoded before its transaction; its Fence is
// the writer's lease epoch (0: none).
type appendOp = sqlstore.Op

// Append records one change of the task in the scope in one transaction:
// ev.Message added to its history; ev.Response added to its log, applied
// to the task's rows and queued in the push outbox. An event is the
// header UPDATE (which also checks the scope and the sequence number) and
// one batch of small statements.
func (s *Store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	op, err := dialect.EncodeOp(sc, id, ev)
	if err != nil {
		return err
	}
	op.Fence = s.epoch.Load()
	var done bool
	switch {
	case op.Event == nil:
		err = s.appendMessage(ctx, op)
	default:
		if done, err = s.appendOne(ctx, op); !done {
			err = s.appendInTx(ctx, op.Scope, op)
		}
	}
	return dialect.Refused("append", err)
}

// appendMessage is an Append without an event: a follow-up message added
// to the history, or nothing at all.
func (s *Store) appendMessage(ctx context.Context, op *appendOp) error {
	if op.Seq != 0 || op.Msg == nil {
		err := dialect.InScope(s.pool.QueryRow(ctx, sqlTaskInScope, op.ID, op.Scope.Tenant, op.Scope.Owner))
		if err == nil && op.Seq != 0 {
			return taskstore.ErrSeq // a sequence number without an event
		}
		return err // nil: an empty Append in the scope
	}
	n, err := s.execGrouped(ctx, op.Scope, sqlAddMessage, op.ID, op.Scope.Tenant, op.Scope.Owner, op.Msg)
	if err == nil && n == 0 {
		return taskstore.ErrNotFound
	}
	return err
}

// appendTail is the end of the one-statement appends: the event's row
// and its push outbox rows, with the event's parameters from $e.
func appendTail(e int) string {
	at, ev, push := fmt.Sprint("$", e), fmt.Sprint("$", e+1), fmt.Sprint("$", e+2)
	return `
		e AS (INSERT INTO task_events (task_id, seq, created_ms, response) SELECT $1, $4, ` + at + `, ` + ev + ` FROM h),
		o AS (INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
			SELECT c.tenant, c.owner, c.task_id, c.id, $4, ` + ev + `, ` + at + ` FROM push_configs c, h
			WHERE ` + push + `::boolean AND h.has_push AND c.task_id = $1 AND c.tenant = $2 AND c.owner = $3 AND c.suspended IS NULL)
		SELECT count(*) FROM h`
}

// appendOne is an Append of a status update or an artifact chunk, without
// a history message of the client's, in one statement (sqlAppendStatus,
// sqlAppendChunk, sqlAppendArtifact) of the next group commit. It
// reports false, having done nothing, for any other event.
func (s *Store) appendOne(ctx context.Context, op *appendOp) (bool, error) {
	if op.Msg != nil {
		return false, nil
	}
	where := []any{op.ID, op.Scope.Tenant, op.Scope.Owner, int64(op.Seq)}
	tail := []any{time.Now().UnixMilli(), op.Event, op.Push}
	var args []any
	var sql string
	switch {
	case op.Status != nil:
		nh := int32(0)
		if op.Hist != nil {
			nh = 1
		}
		h := op.Status
		sql, args = sqlAppendStatus, append(where, nh, int32(0), h.State, h.StatusMS, h.Status, op.Fence, op.Hist)
	case op.Chunk != nil:
		sql = sqlAppendArtifact
		if op.Chunk.AppendTo {
			sql = sqlAppendChunk
		}
		args = append(where, int32(0), int32(1), op.Fence, op.Chunk.ID, op.Chunk.Data)
	default:
		return false, nil
	}
	n, err := s.countGrouped(ctx, op.Scope, sql, append(args, tail...)...)
	if err != nil {
		return true, err
	}
	if n == 0 {
		return true, seqError(ctx, s.pool, op)
	}
	return true, nil
}

// appendInTx records ops one after the other in a transaction of their
// own, which takes its scope's lock first, as a group does (committer).
func (s *Store) appendInTx(ctx context.Context, sc taskstore.Scope, ops ...*appendOp) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlLockScopes, int32(scopeLocks), []int32{scopeKey(sc)}); err != nil {
			return err
		}
		for _, op := range ops {
			if err := s.appendEvent(ctx, tx, op); err != nil {
				return err
			}
		}
		return nil
	})
}

// appendEvent is an Append with an event, inside its transaction.
func (s *Store) appendEvent(ctx context.Context, tx pgx.Tx, op *appendOp) error {
	var hasPush bool
	var hist, chunkN int32
	err := s.updateHeader(ctx, tx, op).Scan(&hasPush, &hist, &chunkN)
	if isNoRows(err) {
		return seqError(ctx, tx, op)
	}
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	if op.Msg != nil {
		b.Queue(sqlPutHistory, op.ID, hist, op.Msg)
		hist++
	}
	switch {
	case op.Hist != nil:
		b.Queue(sqlPutHistory, op.ID, hist, op.Hist)
	case op.Chunk != nil && op.Chunk.AppendTo:
		b.Queue(sqlPutChunk, op.ID, chunkN, op.Chunk.ID, true, op.Chunk.Data)
	case op.Chunk != nil:
		c := op.Chunk
		b.Queue(sqlReplaceChunk, op.ID, c.ID, c.Data)
		b.Queue(sqlDropChunks, op.ID, c.ID)
		b.Queue(sqlNewArtifact, op.ID, chunkN, c.ID, c.Data)
	case op.Task != nil:
		b.Queue(sqlClearHistory, op.ID)
		b.Queue(sqlClearChunks, op.ID)
		queueParts(b, op.ID, op.Parts)
	}
	b.Queue(sqlInsertEvent, op.ID, int64(op.Seq), time.Now().UnixMilli(), op.Event)
	if op.Push && hasPush {
		queueForTask(b, op.Scope, op.ID, op.Seq, op.Event)
	}
	return runBatch(ctx, tx, b)
}

// updateHeader moves the task's header to the event's sequence number,
// with the event's status or, for a Task event, its whole header. Its row
// is (has_push, first history number, first chunk number); none when the
// task is not in the scope or its last sequence number is not op.Seq-1.
func (s *Store) updateHeader(ctx context.Context, tx pgx.Tx, op *appendOp) pgx.Row {
	where := []any{op.ID, op.Scope.Tenant, op.Scope.Owner, int64(op.Seq)}
	var nh, nc int32
	if op.Msg != nil {
		nh++
	}
	switch {
	case op.Status != nil:
		if op.Hist != nil {
			nh++
		}
		h := op.Status
		return tx.QueryRow(ctx, sqlHeadStatus, append(where, nh, nc, h.State, h.StatusMS, h.Status, op.Fence)...)
	case op.Task != nil:
		h := op.Task
		nh += int32(len(op.Parts.History))
		nc = int32(len(op.Parts.Artifacts))
		return tx.QueryRow(ctx, sqlHeadTask, append(where, nh, nc, h.State, h.StatusMS, h.Status, h.ContextID, h.Data, op.Fence)...)
	case op.Chunk != nil:
		nc = 1
	}
	return tx.QueryRow(ctx, sqlHeadSeq, append(where, nh, nc, op.Fence)...)
}

// seqError explains why the header update matched no row: ErrNotFound
// when the task is not in the scope, ErrFenced when the writer's lease
// lapsed, otherwise ErrSeq.
func seqError(ctx context.Context, tx querier, op *appendOp) error {
	if err := dialect.InScope(tx.QueryRow(ctx, sqlTaskInScope, op.ID, op.Scope.Tenant, op.Scope.Owner)); err != nil {
		return err
	}
	return fenceError(ctx, tx, op.Fence, taskstore.ErrSeq)
}

// Events returns up to limit of the task's logged events after the
// sequence number after (every one when limit is not positive), oldest
// first, read in one statement with the task's last sequence number.
func (s *Store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(ctx, sqlEvents, id, sc.Tenant, sc.Owner, int64(after), lim)
	if err != nil {
		return nil, wrap("events", err)
	}
	defer rows.Close()
	return sqlstore.ReadEvents[[]byte](dialect, rows, after, limit)
}

// PruneEvents removes the events logged before the given time, except
// each task's last, in batches of their own transactions: the rows before
// each task's last, then, from a last row that holds several events
// (layout.JoinEvents), those before the last. Each folds the events it
// removes into their tasks' timeline bases. The count is of events. A
// log is pruned from its start: when a wall clock set back stamped an
// event older than the one before it, that one goes with it, sooner
// than asked; a last row is trimmed once no row is left before it.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	cut, total := order.CeilMillis(before), 0
	for _, step := range []func(pgx.Tx, int64) (removed, found int, err error){s.pruneRows, s.trimLast} {
		for {
			var removed, found int
			err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
				if _, err := tx.Exec(ctx, sqlPruneLock, int32(pruneLock)); err != nil {
					return err
				}
				removed, found, err = step(tx, cut)
				return err
			})
			if err != nil {
				return total, wrap("prune events", err)
			}
			total += removed
			if found < sqlstore.DeleteBatch || removed == 0 {
				break
			}
		}
	}
	return total, nil
}

// pruneRows removes, in tx, a batch of rows logged before cut, never a
// task's last, with the rows before them, and folds their events into
// the tasks' bases; it returns the number of events and of rows removed.
func (s *Store) pruneRows(tx pgx.Tx, cut int64) (removed, found int, err error) {
	ctx := context.Background()
	rows, err := tx.Query(ctx, sqlPruneEvents, cut)
	if err != nil {
		return 0, 0, err
	}
	pruned := map[string][]layout.Logged{}
	var id string
	var seq int64
	var first *int64
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &seq, &first, &data}, func() error {
		found++
		removed++
		if first != nil {
			removed += int(seq - *first) // a row of several events
		}
		pruned[id] = dialect.PrunedEvents(pruned[id], seq, first, data, uint64(seq)+1)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return removed, found, foldBases(ctx, tx, pruned)
}

// trimLast rewrites, in tx, a batch of last rows logged before cut that
// hold several events to hold the last alone, and folds the others into
// the tasks' bases; it returns the number of events removed and of rows
// found. A row that does not split is left as it is: Events reports it,
// and it does not stop the pruning of the others.
func (s *Store) trimLast(tx pgx.Tx, cut int64) (removed, found int, err error) {
	ctx := context.Background()
	rows, err := tx.Query(ctx, sqlPruneLast, cut)
	if err != nil {
		return 0, 0, err
	}
	type lastRow struct {
		id         string
		seq, first int64
		data       []byte
	}
	last, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (lastRow, error) {
		var l lastRow
		return l, r.Scan(&l.id, &l.seq, &l.first, &l.data)
	})
	if err != nil || len(last) == 0 {
		return 0, 0, err
	}
	pruned := map[string][]layout.Logged{}
	b := &pgx.Batch{}
	for _, l := range last {
		evs, err := layout.SplitEvents(l.data, uint64(l.first), uint64(l.seq))
		if err != nil {
			continue
		}
		pruned[l.id] = dialect.PrunedEvents(pruned[l.id], l.seq, &l.first, l.data, uint64(l.seq))
		removed += len(evs) - 1
		b.Queue(sqlTrimLast, l.id, l.seq, evs[len(evs)-1].Data)
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return 0, 0, err
		}
	}
	return removed, len(last), foldBases(ctx, tx, pruned)
}

// foldBases folds, in tx, the events pruned from each task's log into its
// timeline base.
func foldBases(ctx context.Context, tx pgx.Tx, pruned map[string][]layout.Logged) error {
	if len(pruned) == 0 {
		return nil
	}
	ids := slices.Collect(maps.Keys(pruned))
	rows, err := tx.Query(ctx, sqlGetBases, ids)
	if err != nil {
		return err
	}
	bases := map[string][]byte{}
	var id string
	var base []byte
	if _, err := pgx.ForEachRow(rows, []any{&id, &base}, func() error {
		bases[id] = base
		return nil
	}); err != nil {
		return err
	}
	out := make([][]byte, len(ids))
	for i, id := range ids {
		if out[i], err = dialect.FoldPruned(bases[id], pruned[id]); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, sqlPutBases, ids, out)
	return err
}

// TimelineBase returns the task's timeline base (taskstore.Fold),
// nil when none of its events was pruned.
func (s *Store) TimelineBase(ctx context.Context, sc taskstore.Scope, id string) ([]byte, error) {
	return dialect.ScanTimelineBase(s.pool.QueryRow(ctx, sqlTimelineBase, id, sc.Tenant, sc.Owner))
}
