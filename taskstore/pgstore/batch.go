package pgstore

import (
	"context"
	"time"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
)

// sqlAppendRun records a run of status updates and artifact chunks (what
// the server pipelines) in one statement of the next group commit: the
// header moves once, to the run's last sequence number ($7) and its last
// status ($9-$11, NULL when the run has none), reserving the history ($5)
// and chunk ($6) rows the run adds; then every row is inserted from
// arrays, numbered from the reserved ones. Like the one-event statements,
// every row is written FROM h, so a header that does not match (scope,
// sequence number $4-1, fence $8) writes nothing, and the count of h says
// which.
//
// The chunks k are (artifact id, append, data, ordinal). A chunk that
// replaces its artifact (append false) and finds it (f: the artifact's
// first row, as it was before the statement) takes that first row and
// drops the others; otherwise it is a new row. Every part of a statement
// sees the rows as they were before it, so AppendBatch never puts in one
// run a replacing chunk after another chunk of its artifact (see
// oneRun).
//
// $12 is the events' created_ms, $19 and $20 their row of the log
// (first_seq and its bytes: layout.JoinEvents), $13 the events one by one
// and $14 whether to queue each in the push outbox (empty when none is to
// be queued), $15 the history rows, $16-$18 the chunks. Rows are numbered
// by their ordinal in the arrays. Outbox rows are inserted in event
// order, which their identity keeps.
var sqlAppendRun = `WITH h(has_push, hn, cn) AS (
		UPDATE tasks SET seq = $7, next_history = next_history + $5, next_chunk = next_chunk + $6,
			state = coalesce($9::integer, state), status_ms = coalesce($10::bigint, status_ms),
			status = CASE WHEN $9::integer IS NULL THEN status ELSE $11::bytea END, runner = $8
		WHERE ` + taskByID + ` AND seq = $4 - 1 AND ` + fenced8 + `
		RETURNING has_push, next_history - $5, next_chunk - $6),
	m AS (INSERT INTO task_history (task_id, n, message)
		SELECT $1, h.hn + x.o - 1, x.m FROM h, unnest($15::bytea[]) WITH ORDINALITY AS x(m, o)),
	k(aid, app, data, o) AS (SELECT * FROM unnest($16::text[], $17::boolean[], $18::bytea[]) WITH ORDINALITY),
	f(aid, n) AS (SELECT t.artifact_id, min(t.n) FROM task_artifacts t, h
		WHERE t.task_id = $1 AND t.artifact_id IN (SELECT aid FROM k WHERE NOT app) GROUP BY t.artifact_id),
	r AS (UPDATE task_artifacts t SET append = false, chunk = k.data FROM k, f
		WHERE t.task_id = $1 AND NOT k.app AND k.aid = f.aid AND t.n = f.n),
	d AS (DELETE FROM task_artifacts t USING f WHERE t.task_id = $1 AND t.artifact_id = f.aid AND t.n > f.n),
	a AS (INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk)
		SELECT $1, h.cn + k.o - 1, k.aid, k.app, k.data FROM h, k WHERE k.app OR k.aid NOT IN (SELECT aid FROM f)),
	e AS (INSERT INTO task_events (task_id, seq, created_ms, first_seq, response) SELECT $1, $7, $12, $19::bigint, $20::bytea FROM h),
	o AS (INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
		SELECT c.tenant, c.owner, c.task_id, c.id, $4 + x.i - 1, x.r, $12
		FROM h, push_configs c, unnest($13::bytea[], $14::boolean[]) WITH ORDINALITY AS x(r, p, i)
		WHERE x.p AND h.has_push AND c.task_id = $1 AND c.tenant = $2 AND c.owner = $3 AND c.suspended IS NULL
		ORDER BY x.i, c.id)
	SELECT count(*) FROM h`

// fenced8 is the fence of sqlAppendRun (see fenced7).
const fenced8 = `($8::bigint = 0 OR EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $8 AND lease_until > now()))`

// AppendBatch records consecutive events of the task in the scope in one
// atomic write (taskstore.BatchAppender). A batch of status updates and
// artifact chunks is one statement of the next group commit
// (sqlAppendRun); any other is its Appends one after the other in a
// transaction of its own.
func (s *Store) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	ops, err := dialect.EncodeBatch(sc, id, evs)
	if err != nil || len(ops) == 0 {
		return err
	}
	fence := s.epoch.Load()
	for _, op := range ops {
		op.Fence = fence
	}
	if oneRun(ops) {
		err = s.appendRun(ctx, ops)
	} else {
		err = s.appendInTx(ctx, sc, ops...)
	}
	return dialect.Refused("append batch", err)
}

// oneRun reports whether sqlAppendRun can record ops: status updates and
// artifact chunks only (or updates whose chunk another carries: Joined),
// no replacing chunk after another chunk of its artifact.
func oneRun(ops []*appendOp) bool {
	seen := map[string]bool{}
	for _, op := range ops {
		switch {
		case op.Msg != nil || op.Task != nil:
			return false
		case op.Chunk != nil:
			if !op.Chunk.AppendTo && seen[op.Chunk.ID] {
				return false
			}
			seen[op.Chunk.ID] = true
		case op.Status == nil && !op.Joined:
			return false
		}
	}
	return true
}

// appendRun records ops, which oneRun accepted, with sqlAppendRun.
func (s *Store) appendRun(ctx context.Context, ops []*appendOp) error {
	first, last := ops[0], ops[len(ops)-1]
	var state, statusMS, status any // NULL: the run sets no status
	logged := make([]layout.Logged, len(ops))
	var events [][]byte // for the outbox, only when one is queued
	var push []bool
	var hist, chunkData [][]byte
	var chunkIDs []string
	var chunkApp []bool
	for i, op := range ops {
		logged[i] = layout.Logged{Seq: op.Seq, Data: op.Event}
		if op.Push && push == nil {
			events, push = make([][]byte, len(ops)), make([]bool, len(ops))
			for j, o := range ops {
				events[j], push[j] = o.Event, o.Push
			}
		}
		if h := op.Status; h != nil {
			state, statusMS, status = h.State, h.StatusMS, h.Status
			if op.Hist != nil {
				hist = append(hist, op.Hist)
			}
			continue
		}
		c := op.Chunk
		if c == nil {
			continue // Joined
		}
		chunkIDs = append(chunkIDs, c.ID)
		chunkApp = append(chunkApp, c.AppendTo)
		chunkData = append(chunkData, c.Data)
	}
	_, firstSeq, row := layout.JoinEvents(logged)
	n, err := s.countGrouped(ctx, first.Scope, sqlAppendRun,
		first.ID, first.Scope.Tenant, first.Scope.Owner, int64(first.Seq), int32(len(hist)), int32(len(chunkIDs)),
		int64(last.Seq), first.Fence, state, statusMS, status,
		time.Now().UnixMilli(), events, push, hist, chunkIDs, chunkApp, chunkData, firstSeq, row)
	if err != nil {
		return err
	}
	if n == 0 {
		return seqError(ctx, s.pool, first)
	}
	return nil
}
