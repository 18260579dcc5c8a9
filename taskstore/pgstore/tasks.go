package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

const (
	// A task whole, in one statement of data-modifying CTEs: the header
	// t ($1-$12; $13 is the writer's fence, as in Append),
	// then, FROM t so that nothing is written when the id is taken or
	// the fence stops it, the history ($14, numbered from 0), the chunks
	// ($15-$17, their artifact ids, append flags and contents), the push
	// configuration ($18-$20: id, data, secret; none when $19 is NULL),
	// the events in one row of the log ($21 created_ms, $25 first_seq and
	// $26 the row's bytes, layout.JoinEvents; none when $26 is NULL) and
	// their outbox rows ($22 their bytes, numbered up to the header's $7,
	// and $23 whether to queue each; empty without a configuration), and
	// the task's two ListTasks counters, in key order as the trigger
	// upserts them (countFunction; since schema version 4 the trigger
	// leaves new tasks to this statement). The push configuration's
	// foreign key is checked at the statement's end, when the task is
	// there.
	sqlCreateTask = `WITH t AS (INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data, status, has_push,
			next_history, next_chunk, runner)
		SELECT $1::text, $2::text, $3::text, $4::text, $5::integer, $6::bigint, $7::bigint, $8::bytea, $9::bytea, $10::boolean,
			$11::integer, $12::integer, $13::bigint WHERE ` + fenced13 + ` ON CONFLICT (id) DO NOTHING RETURNING id),
		k AS (INSERT INTO task_counts AS c (tenant, owner, kind, context_id, state, slot, n)
			SELECT $2, $3, k.kind, k.context_id, k.state, hashtext(t.id) & 15, 1
			FROM t, (VALUES (0, ''::text, 0), (2, '', $5)) AS k(kind, context_id, state)
			ORDER BY k.kind
			ON CONFLICT (tenant, owner, kind, context_id, state, slot) DO UPDATE SET n = c.n + excluded.n),
		h AS (INSERT INTO task_history (task_id, n, message)
			SELECT t.id, m.n - 1, m.message FROM t, unnest($14::bytea[]) WITH ORDINALITY AS m(message, n)),
		a AS (INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk)
			SELECT t.id, c.n - 1, c.artifact_id, c.append, c.chunk
			FROM t, unnest($15::text[], $16::boolean[], $17::bytea[]) WITH ORDINALITY AS c(artifact_id, append, chunk, n)),
		p AS (INSERT INTO push_configs (tenant, owner, task_id, id, data, secret, version)
			SELECT $2, $3, t.id, $18, $19, $20, $24::text FROM t WHERE $19::bytea IS NOT NULL),
		x(r, p, seq) AS (SELECT r, p, $7 - cardinality($22::bytea[]) + i FROM unnest($22::bytea[], $23::boolean[]) WITH ORDINALITY AS x(r, p, i)),
		e AS (INSERT INTO task_events (task_id, seq, created_ms, first_seq, response)
			SELECT t.id, $7, $21, $25::bigint, $26::bytea FROM t WHERE $26::bytea IS NOT NULL),
		o AS (INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
			SELECT $2, $3, t.id, $18, x.seq, x.r, $21 FROM t, x WHERE x.p AND $19::bytea IS NOT NULL ORDER BY x.seq)
		SELECT count(*) FROM t`
	sqlPutHistory = `INSERT INTO task_history (task_id, n, message) VALUES ($1, $2, $3)`
	sqlPutChunk   = `INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) VALUES ($1, $2, $3, $4, $5)`
)

var (
	// A task whole, in one statement.
	sqlGetTask = `SELECT ` + dialect.HeaderColumns() + ` FROM tasks WHERE ` + taskByID + `
		UNION ALL SELECT ` + dialect.HistoryColumns() + ` FROM task_history WHERE task_id = $1
			AND EXISTS (SELECT 1 FROM tasks WHERE ` + taskByID + `)
		UNION ALL SELECT ` + dialect.ChunkColumns() + ` FROM task_artifacts WHERE task_id = $1
			AND EXISTS (SELECT 1 FROM tasks WHERE ` + taskByID + `)
		ORDER BY 1, 2`
	sqlLastSeq        = dialect.LastSeqSQL()
	sqlListActive     = sqlstore.ListActiveSQL()
	sqlDeleteFinished = `DELETE FROM tasks WHERE id IN (SELECT id FROM tasks
		WHERE state IN (` + sqlstore.StateList(order.Terminal) + `) AND status_ms < $1` + sqlstore.LimitBatch + `) RETURNING id`
)

// sqlDeletePieces deletes the history, chunks and events of the tasks $1.
// DeleteFinished runs it after deleting the tasks, in the same
// transaction: as a statement of its own it sees every piece committed
// until then, and a writer that comes later finds no task row to update
// and so adds no piece.
const sqlDeletePieces = `WITH h AS (DELETE FROM task_history WHERE task_id = ANY($1)),
	a AS (DELETE FROM task_artifacts WHERE task_id = ANY($1))
	DELETE FROM task_events WHERE task_id = ANY($1)`

// sqlDeleteBases deletes the timeline bases of the tasks $1, after
// sqlDeletePieces: a prune that removed some of their events, which that
// statement waited for, has written their bases by then (sqlPutBases).
const sqlDeleteBases = `DELETE FROM task_timelines WHERE task_id = ANY($1)`

// queueParts adds the inserts of a task's history and artifact rows,
// numbered from 0, to a batch.
func queueParts(b *pgx.Batch, taskID string, p encodedParts) {
	for n, m := range p.History {
		b.Queue(sqlPutHistory, taskID, n, m)
	}
	for n, c := range p.Artifacts {
		b.Queue(sqlPutChunk, taskID, n, c.ID, c.AppendTo, c.Data)
	}
}

// runBatch sends a batch in the transaction and reads every result.
func runBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// CreateTask inserts t (its header, history and artifact rows), with
// ev.PushConfig, ev.Response as the first event of its log and the outbox
// row of ev, in one statement of the next group commit; the id must be
// new in the whole store.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	return s.CreateTaskBatch(ctx, sc, t, []taskstore.Event{ev})
}

// CreateTaskBatch is CreateTask of t with evs[0] followed by an
// AppendBatch of the other events, all or none (taskstore.BatchAppender),
// in the one statement of CreateTask: the task is inserted as the events
// leave it (taskstore.Apply), with its events logged in one row.
func (s *Store) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	fence := s.epoch.Load()
	enc, err := s.sealer.EncodeCreate(sc, t, evs)
	if err != nil {
		return err
	}
	// The statement takes the rows as arrays, a column each, and the
	// events as one row of the log; they go one by one only to the
	// outbox of the new task's configuration.
	h, parts := enc.Header, enc.Parts
	var first any
	var logged []byte
	if len(enc.Events) > 0 {
		_, first, logged = layout.JoinEvents(enc.Events)
	}
	var events [][]byte
	var push []bool
	if enc.Config != nil {
		events, push = make([][]byte, len(enc.Events)), make([]bool, len(enc.Events))
		for i, e := range enc.Events {
			events[i], push[i] = e.Data, e.Push
		}
	}
	n := len(parts.Artifacts)
	ids, appends, chunks := make([]string, n), make([]bool, n), make([][]byte, n)
	for i, c := range parts.Artifacts {
		ids[i], appends[i], chunks[i] = c.ID, c.AppendTo, c.Data
	}
	made, err := s.countGrouped(ctx, sc, sqlCreateTask, t.Id, sc.Tenant, sc.Owner, h.ContextID, h.State, h.StatusMS,
		int64(enc.Seq), h.Data, h.Status, enc.Config != nil, len(parts.History), n, fence,
		parts.History, ids, appends, chunks, enc.ConfigID, enc.Config, enc.Secret, time.Now().UnixMilli(), events, push, enc.ConfigVersion, first, logged)
	if err == nil && made == 0 {
		err = fenceError(ctx, s.pool, fence, taskstore.ErrExists)
	}
	return dialect.Refused("create task", err)
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	seq, err := dialect.ScanLastSeq(s.pool.QueryRow(ctx, sqlLastSeq, id, sc.Tenant, sc.Owner))
	return seq, dialect.Refused("last seq", err)
}

// GetTask returns the task with the id in the scope, assembled from its
// header, history and artifact rows read by one statement.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	rows, err := s.pool.Query(ctx, sqlGetTask, id, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("get task", err)
	}
	defer rows.Close()
	t, err := sqlstore.ReadTask[[]byte](dialect, rows)
	return t, dialect.Refused("get task", err)
}

// ListActive returns every SUBMITTED or WORKING task with its scope: it
// finds the tasks, then reads each with GetTask (one that finished in
// between is left out).
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	return s.listScoped(ctx, sqlListActive)
}

// listScoped reads the tasks a query finds as (tenant, owner, id) rows,
// each with GetTask, leaving out those no longer SUBMITTED or WORKING.
func (s *Store) listScoped(ctx context.Context, query string) ([]taskstore.ScopedTask, error) {
	found, err := sqlstore.Query(dialect, "list active tasks",
		func() (sqlstore.Cursor, error) { return s.pool.Query(ctx, query) }, sqlstore.ReadScopedIDs)
	if err != nil {
		return nil, err
	}
	return sqlstore.ActiveTasks(ctx, found, s.GetTask)
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time, with their history, artifacts and events
// (sqlDeletePieces); their push configurations and queued notifications
// go with them by cascade. It works in batches, each a transaction of its
// own.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	return dialect.Cleanup("delete finished tasks", before, func(cut int64) (int, error) {
		var n int
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, sqlDeleteFinished, cut)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || len(ids) == 0 {
				return err
			}
			n = len(ids)
			if _, err = tx.Exec(ctx, sqlDeletePieces, ids); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, sqlDeleteBases, ids)
			return err
		})
		if err != nil {
			return 0, err
		}
		return n, nil
	})
}

// deleteBefore runs a batched DELETE of what was stored before a time,
// each batch a statement of its own, until it removes fewer than a batch,
// and returns the number of rows removed; a failure is wrapped with op.
func (s *Store) deleteBefore(ctx context.Context, op, query string, before time.Time) (int, error) {
	return dialect.Cleanup(op, before, func(cut int64) (int, error) {
		n, err := affected(s.pool.Exec(ctx, query, cut))
		return int(n), err
	})
}
