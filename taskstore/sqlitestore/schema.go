package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// SchemaVersion is the schema version this package writes, kept in the
// database's PRAGMA user_version. Open upgrades older files and refuses
// newer ones.
const SchemaVersion = 10

// setUp checks the journal mode and creates or upgrades the schema.
func (s *Store) setUp() error {
	ctx := context.Background()
	var mode string
	if err := s.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this program's %d", version, SchemaVersion)
	}
	err = sqlstore.Migrate(version, SchemaVersion, migrations, func(stmt string) error {
		_, err := tx.ExecContext(ctx, stmt)
		return err
	}, map[int]func() error{
		4: func() error { return upgradeV4(ctx, tx) },
		6: func() error { return s.upgradeV6(ctx, tx) },
	})
	if err != nil {
		return err
	}
	if version != SchemaVersion {
		// PRAGMA does not take parameters; the value is a constant.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// migrations[v] upgrades a version v database to version v+1.
var migrations = [][]string{
	0: {
		`CREATE TABLE tasks (
			id         TEXT PRIMARY KEY,
			tenant     TEXT NOT NULL,
			owner      TEXT NOT NULL,
			context_id TEXT NOT NULL,
			state      INTEGER NOT NULL,
			status_ms  INTEGER NOT NULL,
			seq        INTEGER NOT NULL DEFAULT 0,
			data       BLOB NOT NULL
		)`,
		`CREATE INDEX tasks_by_time ON tasks (tenant, owner, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_context ON tasks (tenant, owner, context_id, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_state ON tasks (tenant, owner, state, status_ms DESC, id DESC)`,
		`CREATE INDEX tasks_by_context_state ON tasks (tenant, owner, context_id, state, status_ms DESC, id DESC)`,
		// For ListActive and DeleteFinished, which look across scopes.
		`CREATE INDEX tasks_by_state_all ON tasks (state, status_ms)`,
		`CREATE TABLE push_configs (
			tenant  TEXT NOT NULL,
			owner   TEXT NOT NULL,
			task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			id      TEXT NOT NULL,
			data    BLOB NOT NULL,
			PRIMARY KEY (task_id, id)
		)`,
		`CREATE TABLE messages (
			tenant     TEXT NOT NULL,
			owner      TEXT NOT NULL,
			message_id TEXT NOT NULL,
			digest     TEXT NOT NULL,
			task_id    TEXT NOT NULL,
			reply      BLOB,
			created_ms INTEGER NOT NULL,
			PRIMARY KEY (tenant, owner, message_id)
		)`,
		`CREATE INDEX messages_by_created ON messages (created_ms)`,
		// kind is which filters the counter is for (a listFilter of
		// layout.WithContext and layout.WithState); unused columns hold '' and 0.
		`CREATE TABLE task_counts (
			tenant     TEXT NOT NULL,
			owner      TEXT NOT NULL,
			kind       INTEGER NOT NULL,
			context_id TEXT NOT NULL,
			state      INTEGER NOT NULL,
			n          INTEGER NOT NULL,
			PRIMARY KEY (tenant, owner, kind, context_id, state)
		) WITHOUT ROWID`,
		`CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN ` + countUp("new") + ` END`,
		`CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN ` + countDown("old") + ` END`,
		`CREATE TRIGGER tasks_count_update AFTER UPDATE OF tenant, owner, context_id, state ON tasks
			WHEN old.tenant IS NOT new.tenant OR old.owner IS NOT new.owner
				OR old.context_id IS NOT new.context_id OR old.state IS NOT new.state
			BEGIN ` + countDown("old") + countUp("new") + ` END`,
	},
	// Version 2: the push outbox. A row is one event waiting to be posted
	// to one configuration; it goes with its configuration (and so with
	// its task) by cascade. AUTOINCREMENT keeps ids from being reused, so
	// a late acknowledgement can never remove a newer row.
	1: {
		`ALTER TABLE push_configs ADD COLUMN suspended TEXT`,
		`CREATE TABLE push_outbox (
			id         INTEGER PRIMARY KEY AUTOINCREMENT,
			tenant     TEXT NOT NULL,
			owner      TEXT NOT NULL,
			task_id    TEXT NOT NULL,
			config_id  TEXT NOT NULL,
			seq        INTEGER NOT NULL,
			event      BLOB NOT NULL,
			created_ms INTEGER NOT NULL,
			FOREIGN KEY (task_id, config_id) REFERENCES push_configs (task_id, id) ON DELETE CASCADE
		)`,
		`CREATE INDEX push_outbox_by_config ON push_outbox (task_id, config_id, id)`,
	},
	// Version 3: sealed push secrets. With push keys, a configuration's
	// credentials and token are cleared from data and kept, encrypted,
	// in secret (see sqlstore.Sealer); without keys secret is NULL and data
	// holds the configuration as given. The version also keeps an older
	// program, which would read such a configuration as one without
	// credentials, from opening the file.
	2: {
		`ALTER TABLE push_configs ADD COLUMN secret BLOB`,
	},
	// Version 4: the event log, and tasks kept in pieces (see writeParts):
	// the tasks row becomes a small header (data loses the status,
	// history and artifacts, which move to the status column and the
	// task_history and task_artifacts rows: upgradeV4 converts the rows
	// of a version 3 file), has_push says whether the task ever had a
	// push configuration, and task_events holds each task's events. The
	// pieces go with their task by cascade.
	3: {
		`ALTER TABLE tasks ADD COLUMN status BLOB`,
		`ALTER TABLE tasks ADD COLUMN has_push INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE task_history (
			task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n       INTEGER NOT NULL,
			message BLOB NOT NULL,
			PRIMARY KEY (task_id, n)
		) WITHOUT ROWID`,
		`CREATE TABLE task_artifacts (
			task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n           INTEGER NOT NULL,
			artifact_id TEXT NOT NULL,
			append      INTEGER NOT NULL,
			chunk       BLOB NOT NULL,
			PRIMARY KEY (task_id, n)
		) WITHOUT ROWID`,
		`CREATE INDEX task_artifacts_by_id ON task_artifacts (task_id, artifact_id, n)`,
		`CREATE TABLE task_events (
			task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			seq        INTEGER NOT NULL,
			created_ms INTEGER NOT NULL,
			response   BLOB NOT NULL,
			PRIMARY KEY (task_id, seq)
		) WITHOUT ROWID`,
		`CREATE INDEX task_events_by_time ON task_events (created_ms)`,
		`UPDATE tasks SET has_push = 1 WHERE id IN (SELECT task_id FROM push_configs)`,
		// A status update changes the state alone, which moves two of the
		// four counters; the version 1 trigger moved all four.
		`DROP TRIGGER tasks_count_update`,
		`CREATE TRIGGER tasks_count_state AFTER UPDATE OF state ON tasks
			WHEN old.state IS NOT new.state AND old.tenant IS new.tenant AND old.owner IS new.owner
				AND old.context_id IS new.context_id
			BEGIN ` + countDownKeys("old", stateKeys) + countUpKeys("new", stateKeys) + ` END`,
		`CREATE TRIGGER tasks_count_move AFTER UPDATE OF tenant, owner, context_id ON tasks
			WHEN old.tenant IS NOT new.tenant OR old.owner IS NOT new.owner OR old.context_id IS NOT new.context_id
			BEGIN ` + countDown("old") + countUp("new") + ` END`,
	},
	4: {
		// One row, rewritten by ProbeWrite (readiness checks).
		`CREATE TABLE write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at_ms INTEGER NOT NULL)`,
	},
	// Version 6: the protocol version each push configuration was
	// registered in, a column of its own (sqlstore.VersionColumn), which
	// upgradeV6 fills from the mark older versions put on the URL.
	5: {
		`ALTER TABLE push_configs ADD COLUMN ` + sqlstore.VersionColumn,
	},
	// Version 7: counters per scope and per state only. A context's
	// total is a COUNT over its range of tasks_by_context or
	// tasks_by_context_state (see countTasks): most contexts hold a few
	// tasks, and their counters cost every new task two more rows to write
	// (one table row per context) and every change of state two more
	// upserts. A change of context alone no longer moves a counter.
	//
	// And the event log loses its time index, an entry per event, for a
	// mark per task (see PruneEvents): last_ms is when the task's last
	// event was logged, prune_ms when the oldest of its other events was
	// (NULL when it has none), indexed where it is set.
	6: {
		`ALTER TABLE tasks ADD COLUMN last_ms INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE tasks ADD COLUMN prune_ms INTEGER`,
		`UPDATE tasks SET
			last_ms = coalesce((SELECT created_ms FROM task_events WHERE task_id = tasks.id AND seq = tasks.seq), 0),
			prune_ms = (SELECT min(created_ms) FROM task_events WHERE task_id = tasks.id AND seq < tasks.seq)`,
		`CREATE INDEX tasks_by_prune ON tasks (prune_ms) WHERE prune_ms IS NOT NULL`,
		`DROP INDEX task_events_by_time`,
		`DROP TRIGGER tasks_count_insert`,
		`DROP TRIGGER tasks_count_delete`,
		`DROP TRIGGER tasks_count_state`,
		`DROP TRIGGER tasks_count_move`,
		fmt.Sprintf(`DELETE FROM task_counts WHERE kind IN (%d, %d)`, layout.WithContext, layout.WithContext|layout.WithState),
		`CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN ` + countUpKeys("new", scopeKeys) + ` END`,
		`CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN ` + countDownKeys("old", scopeKeys) + ` END`,
		`CREATE TRIGGER tasks_count_state AFTER UPDATE OF state ON tasks
			WHEN old.state IS NOT new.state AND old.tenant IS new.tenant AND old.owner IS new.owner
			BEGIN ` + countDownKeys("old", []int{2}) + countUpKeys("new", []int{2}) + ` END`,
		`CREATE TRIGGER tasks_count_move AFTER UPDATE OF tenant, owner ON tasks
			WHEN old.tenant IS NOT new.tenant OR old.owner IS NOT new.owner
			BEGIN ` + countDownKeys("old", scopeKeys) + countUpKeys("new", scopeKeys) + ` END`,
	},
	// Version 8: a row of the event log holds the events of one write
	// (layout.JoinEvents): first_seq is the first one's number, NULL for
	// a row of one event, as every row before was. And no index by
	// context and state: a context's tasks in one state are found in its
	// range of tasks_by_context, as its total is counted there; the index
	// cost every new task one more entry and every change of state a
	// move.
	7: {
		`ALTER TABLE task_events ADD COLUMN first_seq INTEGER`,
		`DROP INDEX tasks_by_context_state`,
	},
	// Version 9: the tables of a task's pieces hold their rows in rowid
	// b-trees, found by a unique index of their key, instead of WITHOUT
	// ROWID b-trees, whose rows are their own keys: a seek there compares
	// its key with whole rows, and one row of 8 MB (a long message) was
	// read whole by every seek that passed it, every caller's GetTask
	// slowed (issue 48). Now an index holds the key alone, the payload is
	// the last column of its row, after every column a statement reads
	// without it, and a row is read only when it is one asked for. The
	// statements that read a task's rows in order name the index by n
	// (INDEXED BY), which the planner could otherwise pass over for
	// task_artifacts_by_id. The rows are copied as they are.
	8: append(append(append(
		rebuilt("task_history", `task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n       INTEGER NOT NULL,
			message BLOB NOT NULL`, "task_id, n, message"),
		rebuilt("task_artifacts", `task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			n           INTEGER NOT NULL,
			artifact_id TEXT NOT NULL,
			append      INTEGER NOT NULL,
			chunk       BLOB NOT NULL`, "task_id, n, artifact_id, append, chunk")...),
		rebuilt("task_events", `task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
			seq        INTEGER NOT NULL,
			created_ms INTEGER NOT NULL,
			first_seq  INTEGER,
			response   BLOB NOT NULL`, "task_id, seq, created_ms, first_seq, response")...),
		`CREATE UNIQUE INDEX task_history_by_n ON task_history (task_id, n)`,
		`CREATE UNIQUE INDEX task_artifacts_by_n ON task_artifacts (task_id, n)`,
		`CREATE INDEX task_artifacts_by_id ON task_artifacts (task_id, artifact_id, n)`,
		`CREATE UNIQUE INDEX task_events_by_seq ON task_events (task_id, seq)`),
	// Version 10: a task's timeline base (taskstore.Fold), what the
	// events PruneEvents removed from its log said of its timeline, a row
	// of its own: not a column of tasks, whose row every event rewrites.
	9: {
		`CREATE TABLE IF NOT EXISTS task_timelines (
			task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
			base    BLOB NOT NULL
		)`,
	},
}

// rebuilt returns the statements that make the table name anew, as a
// rowid table with the columns given (their definitions and their names),
// and copy its rows.
func rebuilt(name, columns, names string) []string {
	return []string{
		`CREATE TABLE ` + name + `_new (` + columns + `)`,
		`INSERT INTO ` + name + `_new (` + names + `) SELECT ` + names + ` FROM ` + name,
		`DROP TABLE ` + name,
		`ALTER TABLE ` + name + `_new RENAME TO ` + name,
	}
}

// counterKeys returns, for the row named ref in a trigger, the kind,
// context and state of the four counters the row is counted in.
func counterKeys(ref string) [4][3]string {
	return [4][3]string{
		{"0", "''", "0"},
		{fmt.Sprint(int(layout.WithContext)), ref + ".context_id", "0"},
		{fmt.Sprint(int(layout.WithState)), "''", ref + ".state"},
		{fmt.Sprint(int(layout.WithContext | layout.WithState)), ref + ".context_id", ref + ".state"},
	}
}

// allKeys and stateKeys select, by index in counterKeys, the counters a
// row was counted in before version 7, and those that depend on its
// state; scopeKeys, the counters since (per scope, per scope and state).
var (
	allKeys   = []int{0, 1, 2, 3}
	stateKeys = []int{2, 3}
	scopeKeys = []int{0, 2}
)

// countUp returns trigger statements adding the row ref to its counters.
func countUp(ref string) string { return countUpKeys(ref, allKeys) }

// countDown returns trigger statements removing the row ref from its
// counters.
func countDown(ref string) string { return countDownKeys(ref, allKeys) }

// countUpKeys returns trigger statements adding the row ref to the
// counters chosen by keys.
func countUpKeys(ref string, keys []int) string {
	var vals []string
	all := counterKeys(ref)
	for _, i := range keys {
		k := all[i]
		vals = append(vals, fmt.Sprintf("(%s.tenant, %s.owner, %s, %s, %s, 1)", ref, ref, k[0], k[1], k[2]))
	}
	return `INSERT INTO task_counts (tenant, owner, kind, context_id, state, n) VALUES ` +
		strings.Join(vals, ", ") +
		` ON CONFLICT (tenant, owner, kind, context_id, state) DO UPDATE SET n = n + 1;`
}

// countDownKeys returns trigger statements removing the row ref from the
// counters chosen by keys, dropping per-context counters (before version
// 7) that reach zero so that contexts which come and go leave nothing
// behind.
func countDownKeys(ref string, keys []int) string {
	var b strings.Builder
	all := counterKeys(ref)
	perContext := false
	for _, i := range keys {
		k := all[i]
		fmt.Fprintf(&b, `UPDATE task_counts SET n = n - 1 WHERE tenant = %s.tenant AND owner = %s.owner
			AND kind = %s AND context_id = %s AND state = %s;`, ref, ref, k[0], k[1], k[2])
		perContext = perContext || i == 1 || i == 3
	}
	if perContext {
		fmt.Fprintf(&b, `DELETE FROM task_counts WHERE tenant = %s.tenant AND owner = %s.owner
			AND kind IN (%d, %d) AND context_id = %s.context_id AND n = 0;`,
			ref, ref, layout.WithContext, layout.WithContext|layout.WithState, ref)
	}
	return b.String()
}

// upgradeV6 takes the v0.3 mark off the URLs of a version 5 database's
// push configurations, which get the version "0.3" instead
// (sqlstore.Sealer.UnmarkV03). It runs inside the migration's
// transaction.
func (s *Store) upgradeV6(ctx context.Context, tx *sql.Tx) error {
	next := func(after sqlstore.SealedRow) (sqlstore.Cursor, error) {
		return query(tx.QueryContext(ctx, dialect.ConfigBatchSQL(), after.TaskID, after.ConfigID, sqlstore.UpgradeBatch))
	}
	write := func(r sqlstore.Resealed) error {
		_, err := tx.ExecContext(ctx, dialect.SetV03SQL(), r.SetV03Args()...)
		return err
	}
	return s.sealer.UnmarkV03(next, write)
}

// upgradeV4 splits the tasks of a version 3 database, whose data column
// holds the whole task, into the version 4 pieces: the header in data and
// status, the history and artifact rows. It runs inside the migration's
// transaction, a batch of tasks at a time.
func upgradeV4(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id   string
		data []byte
	}
	last := ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, data FROM tasks WHERE id > ? ORDER BY id LIMIT 500`, last)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.data); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			if err := splitTask(ctx, tx, r.id, r.data); err != nil {
				return fmt.Errorf("task %q: %w", r.id, err)
			}
			last = r.id
		}
		if len(batch) < 500 {
			return nil
		}
	}
}

// splitTask rewrites one version 3 task row as a version 4 header with
// its history and artifact rows.
func splitTask(ctx context.Context, tx *sql.Tx, id string, data []byte) error {
	t, err := unmarshalTask(data)
	if err != nil {
		return err
	}
	h, err := layout.EncodeHeader(t)
	if err != nil {
		return err
	}
	p, err := layout.EncodeParts(t)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET data = ?, status = ? WHERE id = ?`, h.Data, h.Status, id); err != nil {
		return err
	}
	for n, m := range p.History {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_history (task_id, n, message) VALUES (?, ?, ?)`, id, n, m); err != nil {
			return err
		}
	}
	for n, c := range p.Artifacts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_artifacts (task_id, n, artifact_id, append, chunk) VALUES (?, ?, ?, 0, ?)`,
			id, n, c.ID, c.Data); err != nil {
			return err
		}
	}
	return nil
}
