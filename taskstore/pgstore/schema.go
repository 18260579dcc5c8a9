package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// SchemaVersion is the schema version this package writes, kept in the
// parley_schema table. Open upgrades older databases and refuses newer
// ones (ErrNewerSchema).
const SchemaVersion = 9

// ErrNewerSchema is returned (wrapped, with both versions) by Open when
// the database's schema is newer than this package's SchemaVersion: a
// newer Parley migrated it, and this one would misread it.
var ErrNewerSchema = errors.New("the database schema is newer than this program knows")

// migrationLock is the key of the advisory lock under which Open checks
// and migrates the schema ("parley" in ASCII).
const migrationLock = 0x7061726c6579

// exclusiveLock is the first key of Options.Exclusive's lock (the second
// is the hash of the schema's name).
const exclusiveLock = 0x70617273

// migrate brings the schema up to SchemaVersion in one transaction, under
// an advisory lock held until it ends: processes opening one database at
// once take turns, and each after the first finds the work done.
func (s *Store) migrate(ctx context.Context) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("lock for migration: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS parley_schema (
			one     boolean PRIMARY KEY DEFAULT true CHECK (one),
			version integer NOT NULL)`); err != nil {
			return fmt.Errorf("schema version table: %w", err)
		}
		var version int
		err := tx.QueryRow(ctx, `SELECT version FROM parley_schema`).Scan(&version)
		if err != nil && !isNoRows(err) {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > SchemaVersion {
			return fmt.Errorf("%w: the database is at schema version %d, this program knows up to %d (run a newer parley, or use another database)",
				ErrNewerSchema, version, SchemaVersion)
		}
		err = sqlstore.Migrate(version, SchemaVersion, migrations, func(stmt string) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		}, map[int]func() error{6: func() error { return s.upgradeV6(ctx, tx) }})
		if err != nil {
			return err
		}
		if version == SchemaVersion {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO parley_schema (version) VALUES ($1)
			ON CONFLICT (one) DO UPDATE SET version = excluded.version`, SchemaVersion)
		return err
	})
}

// migrations[v] upgrades a version v database to version v+1.
var migrations = [][]string{
	0: {
		// The header of a task kept in pieces (see sqlstore.Dialect.HeaderColumns).
		// next_history and next_chunk number the task's next history and
		// chunk rows.
		`CREATE TABLE tasks (
			id           text PRIMARY KEY,
			tenant       text NOT NULL,
			owner        text NOT NULL,
			context_id   text NOT NULL,
			state        integer NOT NULL,
			status_ms    bigint NOT NULL,
			seq          bigint NOT NULL DEFAULT 0,
			data         bytea NOT NULL,
			status       bytea,
			has_push     boolean NOT NULL DEFAULT false,
			next_history integer NOT NULL DEFAULT 0,
			next_chunk   integer NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX tasks_by_time ON tasks (tenant, owner, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_context ON tasks (tenant, owner, context_id, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_state ON tasks (tenant, owner, state, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_context_state ON tasks (tenant, owner, context_id, state, status_ms DESC, id DESC)`,
		// For ListActive and DeleteFinished, which look across scopes.
		`CREATE INDEX tasks_by_state_all ON tasks (state, status_ms)`,
		`CREATE TABLE task_history (
			task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n       integer NOT NULL,
			message bytea NOT NULL,
			PRIMARY KEY (task_id, n)
		)`,
		`CREATE TABLE task_artifacts (
			task_id     text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n           integer NOT NULL,
			artifact_id text NOT NULL,
			append      boolean NOT NULL,
			chunk       bytea NOT NULL,
			PRIMARY KEY (task_id, n)
		)`,
		`CREATE INDEX task_artifacts_by_id ON task_artifacts (task_id, artifact_id, n)`,
		`CREATE TABLE task_events (
			task_id    text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			seq        bigint NOT NULL,
			created_ms bigint NOT NULL,
			response   bytea NOT NULL,
			PRIMARY KEY (task_id, seq)
		)`,
		`CREATE INDEX task_events_by_time ON task_events (created_ms)`,
		`CREATE TABLE push_configs (
			tenant    text NOT NULL,
			owner     text NOT NULL,
			task_id   text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			id        text NOT NULL,
			data      bytea NOT NULL,
			secret    bytea,
			suspended text,
			PRIMARY KEY (task_id, id)
		)`,
		// An identity column never reuses an id, so a late
		// acknowledgement can never remove a newer row.
		`CREATE TABLE push_outbox (
			id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			tenant     text NOT NULL,
			owner      text NOT NULL,
			task_id    text NOT NULL,
			config_id  text NOT NULL,
			seq        bigint NOT NULL,
			event      bytea NOT NULL,
			created_ms bigint NOT NULL,
			FOREIGN KEY (task_id, config_id) REFERENCES push_configs (task_id, id) ON DELETE CASCADE
		)`,
		`CREATE INDEX push_outbox_by_config ON push_outbox (task_id, config_id, id)`,
		`CREATE TABLE messages (
			tenant     text NOT NULL,
			owner      text NOT NULL,
			message_id text NOT NULL,
			digest     text NOT NULL,
			task_id    text NOT NULL,
			reply      bytea,
			created_ms bigint NOT NULL,
			PRIMARY KEY (tenant, owner, message_id)
		)`,
		`CREATE INDEX messages_by_created ON messages (created_ms)`,
		// kind is which filters a counter is for (a listFilter of
		// layout.WithContext and WithState; unused columns hold '' and 0), slot
		// which of the 16 shares of it (by task id). A total is the sum
		// of a key's slots.
		`CREATE TABLE task_counts (
			tenant     text NOT NULL,
			owner      text NOT NULL,
			kind       integer NOT NULL,
			context_id text NOT NULL,
			state      integer NOT NULL,
			slot       integer NOT NULL,
			n          bigint NOT NULL,
			PRIMARY KEY (tenant, owner, kind, context_id, state, slot)
		)`,
		countFunction,
		`CREATE TRIGGER tasks_count AFTER INSERT OR DELETE OR UPDATE OF tenant, owner, context_id, state ON tasks
			FOR EACH ROW EXECUTE FUNCTION parley_count_tasks()`,
	},
	1: {
		// Replicas (Store.Join): each process sharing the database holds
		// a row, its lease, renewed until lease_until; epoch numbers
		// the rows and is never reused, so a replica whose row is gone
		// cannot come back under its old number.
		`CREATE TABLE parley_replicas (
			epoch       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			name        text NOT NULL,
			started     timestamptz NOT NULL DEFAULT now(),
			lease_until timestamptz NOT NULL
		)`,
		// runner is the epoch of the replica that last wrote the task
		// (0: a process without a lease); a SUBMITTED or WORKING task
		// whose runner holds no lease lost its execution.
		`ALTER TABLE tasks ADD COLUMN runner bigint NOT NULL DEFAULT 0`,
		`CREATE INDEX tasks_active_runner ON tasks (runner) WHERE state IN (` + sqlstore.StateList(order.Active) + `)`,
		// A claim on a queued notification (ClaimPush): who holds it and
		// until when.
		`ALTER TABLE push_outbox ADD COLUMN claimed_by text, ADD COLUMN claimed_until timestamptz`,
		// Keys every replica shares, made by the first that needs one.
		`CREATE TABLE parley_keys (
			name  text PRIMARY KEY,
			value bytea NOT NULL
		)`,
	},
	2: {
		// The counters' trigger as countFunction has it now. Version
		// 2's dropped emptied per-context counters with one DELETE whose
		// kind IN (1, 3) left the planner a scan of every counter of
		// the scope, a cost that grew with the contexts the scope ever had
		// (6.6 ms at 4,000 tasks), and took its general path, an
		// aggregate of eight rows, for every change.
		countFunction,
		// Room in each page for a header's next version, so that the
		// updates that move no indexed column (an artifact chunk) are
		// HOT updates, which add no index entries.
		`ALTER TABLE tasks SET (fillfactor = 70)`,
	},
	// Version 4: two checks that cost PostgreSQL about a third of its
	// time on a new task are made by the statements that need them
	// instead. The pieces of a task (history, chunks, events) lose their
	// foreign keys to tasks: every statement that adds one either adds
	// the task in the same statement (CreateTask) or first updates the
	// task's row, which it then holds locked until it commits, and
	// DeleteFinished deletes a task's pieces itself. A new task's four
	// counters are upserted by CreateTask's statement (sqlCreateTask); the
	// trigger no longer fires on INSERT, and so no longer costs a PL/pgSQL
	// call with a statement of its own for every new task.
	3: {
		`ALTER TABLE task_history DROP CONSTRAINT IF EXISTS task_history_task_id_fkey`,
		`ALTER TABLE task_artifacts DROP CONSTRAINT IF EXISTS task_artifacts_task_id_fkey`,
		`ALTER TABLE task_events DROP CONSTRAINT IF EXISTS task_events_task_id_fkey`,
		`DROP TRIGGER IF EXISTS tasks_count ON tasks`,
		`CREATE TRIGGER tasks_count AFTER DELETE OR UPDATE OF tenant, owner, context_id, state ON tasks
			FOR EACH ROW EXECUTE FUNCTION parley_count_tasks()`,
	},
	4: {
		// The replica (its epoch) that recorded the message: while its
		// lease holds it may still make the message's task; once it
		// lapses, another replica may take the message over (0: a store
		// that never joined, or a record older than this column).
		`ALTER TABLE messages ADD COLUMN IF NOT EXISTS runner bigint NOT NULL DEFAULT 0`,
	},
	// Version 6: the protocol version each push configuration was
	// registered in, a column of its own (sqlstore.VersionColumn), which
	// upgradeV6 fills from the mark older versions put on the URL.
	5: {
		`ALTER TABLE push_configs ADD COLUMN IF NOT EXISTS ` + sqlstore.VersionColumn,
	},
	// Version 7: counters per scope and per state only, as in the SQLite
	// store: a context's total is a COUNT over its range of the tasks
	// index (countTasks); its counters cost every new task two more rows
	// to upsert and every change of state two more. A change of context
	// alone no longer moves a counter.
	6: {
		countFunction,
		fmt.Sprintf(`DELETE FROM task_counts WHERE kind IN (%d, %d)`, layout.WithContext, layout.WithContext|layout.WithState),
		`DROP TRIGGER IF EXISTS tasks_count ON tasks`,
		`CREATE TRIGGER tasks_count AFTER DELETE OR UPDATE OF tenant, owner, state ON tasks
			FOR EACH ROW EXECUTE FUNCTION parley_count_tasks()`,
	},
	// Version 8: a row of the event log holds the events of one write
	// (layout.JoinEvents), as in the SQLite store: first_seq is the first
	// one's number, NULL for a row of one event, as every row before was.
	// And no index by context and state, as in the SQLite store.
	7: {
		`ALTER TABLE task_events ADD COLUMN IF NOT EXISTS first_seq bigint`,
		`DROP INDEX IF EXISTS tasks_by_context_state`,
	},
	// Version 9: a task's timeline base (taskstore.Fold), what the
	// events PruneEvents removed from its log said of its timeline, a row
	// of its own, as in the SQLite store: not a column of tasks, whose row
	// every event rewrites. DeleteFinished removes it with the task.
	8: {
		`CREATE TABLE IF NOT EXISTS task_timelines (
			task_id text PRIMARY KEY,
			base    bytea NOT NULL
		)`,
	},
}

// upgradeV6 takes the v0.3 mark off the URLs of a version 5 database's
// push configurations, which get the version "0.3" instead
// (sqlstore.Sealer.UnmarkV03). It runs inside the migration's
// transaction.
func (s *Store) upgradeV6(ctx context.Context, tx pgx.Tx) error {
	next := func(after sqlstore.SealedRow) (sqlstore.Cursor, error) {
		return tx.Query(ctx, sqlConfigBatch, after.TaskID, after.ConfigID, sqlstore.UpgradeBatch)
	}
	write := func(r sqlstore.Resealed) error {
		_, err := tx.Exec(ctx, sqlSetV03, r.SetV03Args()...)
		return err
	}
	return s.sealer.UnmarkV03(next, write)
}

// The statements of upgradeV6 (package sqlstore).
var (
	sqlConfigBatch = dialect.ConfigBatchSQL()
	sqlSetV03      = dialect.SetV03SQL()
)

// countFunction keeps task_counts in step with the tasks table. A row is
// counted under two keys (kind 0: the scope; 2: its state; before schema
// version 7 also 1: its context, and 3: both), in one of 16 slots chosen
// by its id; a context's total is a COUNT over its range of the tasks
// index (countTasks). Counters are upserted in key order, so that two
// transactions lock counter rows in the same order and cannot deadlock on
// them, and each statement names every column of task_counts' key, so
// that it is a lookup of the key whatever the number of counters. The
// common change has a short path of one upsert of two rows: a state
// change (-1 and +1 under the state key, lower state first). Any other
// change (a task moved to another scope, a deleted task, a new one)
// removes the old row's keys and adds the new one's, merged so that a key
// both add and remove is left alone. A new task's counters are upserted by
// CreateTask's statement (sqlCreateTask): the trigger does not fire on
// INSERT. SET search_path FROM CURRENT binds the function to the schema it
// was created in.
const countFunction = `CREATE OR REPLACE FUNCTION parley_count_tasks() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	sl integer;
	lo integer;
	hi integer;
	d  integer;
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.tenant = NEW.tenant AND OLD.owner = NEW.owner THEN
		IF OLD.state = NEW.state THEN
			RETURN NULL;
		END IF;
		sl := hashtext(NEW.id) & 15;
		lo := least(OLD.state, NEW.state);
		hi := greatest(OLD.state, NEW.state);
		d := CASE WHEN OLD.state = lo THEN -1 ELSE 1 END;
		INSERT INTO task_counts AS c (tenant, owner, kind, context_id, state, slot, n) VALUES
			(NEW.tenant, NEW.owner, 2, '', lo, sl, d),
			(NEW.tenant, NEW.owner, 2, '', hi, sl, -d)
		ON CONFLICT (tenant, owner, kind, context_id, state, slot) DO UPDATE SET n = c.n + excluded.n;
		RETURN NULL;
	END IF;
	INSERT INTO task_counts AS c (tenant, owner, kind, context_id, state, slot, n)
	SELECT d.tenant, d.owner, d.kind, '', d.state, d.slot, sum(d.delta)
	FROM (
		SELECT OLD.tenant AS tenant, OLD.owner AS owner, k AS kind,
			CASE WHEN k = 2 THEN OLD.state ELSE 0 END AS state,
			hashtext(OLD.id) & 15 AS slot, -1 AS delta
		FROM (VALUES (0), (2)) AS g(k) WHERE TG_OP <> 'INSERT'
		UNION ALL
		SELECT NEW.tenant, NEW.owner, k,
			CASE WHEN k = 2 THEN NEW.state ELSE 0 END,
			hashtext(NEW.id) & 15, 1
		FROM (VALUES (0), (2)) AS g(k) WHERE TG_OP <> 'DELETE'
	) AS d
	GROUP BY 1, 2, 3, 5, 6 HAVING sum(d.delta) <> 0
	ORDER BY 1, 2, 3, 5, 6
	ON CONFLICT (tenant, owner, kind, context_id, state, slot) DO UPDATE SET n = c.n + excluded.n;
	RETURN NULL;
END $$`
