// Package sqlitestore is a durable taskstore.Store kept in one SQLite file,
// using the pure-Go driver modernc.org/sqlite (no cgo).
//
// The database runs in WAL mode. By default synchronous=NORMAL: once a write
// method returns, its change is in the write-ahead log and survives the
// process being killed (kill -9, a crash); only an operating-system crash
// or power loss can take back the last transactions. Options.FullSync
// (synchronous=FULL) closes that gap too, at the cost of one fsync per
// write. Writes go through a single connection, so
// writers queue in Go instead of failing with SQLITE_BUSY; reads use a
// separate pool of connections and run in parallel with each other and
// with the writer.
//
// Writes are group-committed: one writer goroutine takes every write call
// waiting, runs each in its own savepoint inside one transaction (a call
// that fails rolls back only its own changes and gets its own error),
// commits once and then answers them all. A write method still returns only
// after its change is committed, and one caller's writes are applied in the
// order of its calls. A caller's context is checked before its write
// starts; once started, the write is not interrupted (that would roll back
// the whole group), and the call waits for the outcome. The batched
// deletes of DeleteFinished and DeleteMessagesBefore run outside the
// group, each batch its own transaction.
//
// The push outbox is the push_outbox table (schema version 2): a row per
// event and configuration, written in the transaction that records the
// event, removed by cascade with its configuration or task.
//
// ListTasks pages with keyset conditions on (status_ms, id) over an index
// that matches each filter exactly, so finding a page never scans the
// table. The exact total comes from per-scope counters that triggers keep
// in step with the tasks table (one counter per scope, per context, per
// state and per context and state): one lookup. Only when the query has a
// Since bound is the total a COUNT over the matching index range, whose
// cost grows with the number of tasks at or after Since.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// SchemaVersion is the schema version this package writes, kept in the
// database's PRAGMA user_version. Open upgrades older files and refuses
// newer ones.
const SchemaVersion = 2

// deleteBatch bounds how many rows one cleanup transaction removes, so that
// a large cleanup does not hold the writer for long.
const deleteBatch = 500

// Store is a taskstore.Store backed by an SQLite database file. Create one
// with Open; it is safe for concurrent use.
type Store struct {
	writer *sql.DB // one connection: every write goes through it
	reader *sql.DB // a pool of query_only connections

	stmts   []*sql.Stmt // every prepared statement, for Close
	queries []string    // their text, for the query plan test

	createTask, updateTask, getTask, lastSeq *sql.Stmt
	queueEvent, queueOne, dropQueued         *sql.Stmt // the push outbox (writer)
	suspend, unsuspend, deletePush           *sql.Stmt
	pushTargetsOf, nextPushTarget, pending   *sql.Stmt // the push outbox (readers)
	listActive                               *sql.Stmt
	deleteFinished                           *sql.Stmt
	putConfig, getConfig                     *sql.Stmt
	listConfigs, deleteConfig                *sql.Stmt
	taskInScope                              *sql.Stmt
	getMessage, setReply                     *sql.Stmt
	insertMessage, getMessageW               *sql.Stmt // getMessageW runs on the writer
	deleteMessages                           *sql.Stmt
	list                                     [16]*sql.Stmt // by listFilter
	countSince                               [8]*sql.Stmt  // by listFilter, only those withSince
	counter                                  *sql.Stmt
	savepoint, release, rollbackTo           *sql.Stmt // group commit (writer)

	ops        chan *writeOp // to the writer goroutine
	closing    chan struct{} // closed by Close
	writerDone chan struct{} // closed when the writer goroutine has stopped

	closeOnce sync.Once
	closeErr  error
}

var _ taskstore.Store = (*Store)(nil)

// Options configure a Store.
type Options struct {
	// FullSync makes every write durable against power loss
	// (synchronous=FULL) instead of against process crashes only.
	FullSync bool
}

// Open opens or creates the database at path with default options; see
// OpenWith.
func Open(path string) (*Store, error) { return OpenWith(path, nil) }

// OpenWith opens or creates the database at path and brings its schema up to
// date. path must name a file; in-memory databases are not supported (use
// package memstore instead). opts may be nil.
func OpenWith(path string, opts *Options) (*Store, error) {
	sync := "NORMAL"
	if opts != nil && opts.FullSync {
		sync = "FULL"
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlitestore: %q is not a plain file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	// A file: URI keeps characters such as '?' and '#' in the path intact.
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()

	s := &Store{}
	s.writer, err = sql.Open("sqlite", base+"?_pragma=busy_timeout(10000)"+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+")&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	s.writer.SetConnMaxLifetime(0)
	s.writer.SetConnMaxIdleTime(0)
	if err := s.setUp(); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}

	n := max(4, runtime.GOMAXPROCS(0))
	s.reader, err = sql.Open("sqlite", base+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	s.reader.SetMaxOpenConns(n)
	s.reader.SetMaxIdleConns(n)
	s.reader.SetConnMaxLifetime(0)
	s.reader.SetConnMaxIdleTime(0)
	if err := s.prepare(); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	s.ops = make(chan *writeOp)
	s.closing = make(chan struct{})
	s.writerDone = make(chan struct{})
	go s.runWriter()
	return s, nil
}

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
	for v := version; v < SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
			}
		}
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
		// withContext and withState); unused columns hold '' and 0.
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
}

// counterKeys returns, for the row named ref in a trigger, the kind,
// context and state of the four counters the row is counted in.
func counterKeys(ref string) [4][3]string {
	return [4][3]string{
		{"0", "''", "0"},
		{fmt.Sprint(int(withContext)), ref + ".context_id", "0"},
		{fmt.Sprint(int(withState)), "''", ref + ".state"},
		{fmt.Sprint(int(withContext | withState)), ref + ".context_id", ref + ".state"},
	}
}

// countUp returns trigger statements adding the row ref to its counters.
func countUp(ref string) string {
	var vals []string
	for _, k := range counterKeys(ref) {
		vals = append(vals, fmt.Sprintf("(%s.tenant, %s.owner, %s, %s, %s, 1)", ref, ref, k[0], k[1], k[2]))
	}
	return `INSERT INTO task_counts (tenant, owner, kind, context_id, state, n) VALUES ` +
		strings.Join(vals, ", ") +
		` ON CONFLICT (tenant, owner, kind, context_id, state) DO UPDATE SET n = n + 1;`
}

// countDown returns trigger statements removing the row ref from its
// counters, dropping per-context counters that reach zero so that
// contexts which come and go leave nothing behind.
func countDown(ref string) string {
	var b strings.Builder
	for _, k := range counterKeys(ref) {
		fmt.Fprintf(&b, `UPDATE task_counts SET n = n - 1 WHERE tenant = %s.tenant AND owner = %s.owner
			AND kind = %s AND context_id = %s AND state = %s;`, ref, ref, k[0], k[1], k[2])
	}
	fmt.Fprintf(&b, `DELETE FROM task_counts WHERE tenant = %s.tenant AND owner = %s.owner
		AND kind IN (%d, %d) AND context_id = %s.context_id AND n = 0;`,
		ref, ref, withContext, withContext|withState, ref)
	return b.String()
}

// listFilter says which optional conditions a ListTasks query has. Its
// value indexes the prepared list and count statements.
type listFilter uint8

const (
	withContext listFilter = 1 << iota
	withState
	withSince
	withAfter
)

func filterOf(q taskstore.ListQuery) listFilter {
	var f listFilter
	if q.ContextID != "" {
		f |= withContext
	}
	if q.State != a2a.TaskState_TASK_STATE_UNSPECIFIED {
		f |= withState
	}
	if !q.Since.IsZero() {
		f |= withSince
	}
	if q.After != nil {
		f |= withAfter
	}
	return f
}

// where returns the WHERE clause for f. args must produce the arguments in
// the same order.
func (f listFilter) where() string {
	w := "tenant = ? AND owner = ?"
	if f&withContext != 0 {
		w += " AND context_id = ?"
	}
	if f&withState != 0 {
		w += " AND state = ?"
	}
	if f&withSince != 0 {
		w += " AND status_ms >= ?"
	}
	if f&withAfter != 0 {
		w += " AND (status_ms, id) < (?, ?)"
	}
	return w
}

func (f listFilter) args(sc taskstore.Scope, q taskstore.ListQuery) []any {
	a := []any{sc.Tenant, sc.Owner}
	if f&withContext != 0 {
		a = append(a, q.ContextID)
	}
	if f&withState != 0 {
		a = append(a, int32(q.State))
	}
	if f&withSince != 0 {
		a = append(a, order.CeilMillis(q.Since))
	}
	if f&withAfter != 0 {
		a = append(a, order.FloorMillis(q.After.Time), q.After.ID)
	}
	return a
}

// listSQL returns the page query for f; its last argument is the row limit.
func listSQL(f listFilter) string {
	return "SELECT data FROM tasks WHERE " + f.where() + " ORDER BY status_ms DESC, id DESC LIMIT ?"
}

// countSQL returns the range count for f, which must have withSince and
// not withAfter.
func countSQL(f listFilter) string {
	return "SELECT count(*) FROM tasks WHERE " + f.where()
}

func stateList(states []a2a.TaskState) string {
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprint(int32(st))
	}
	return strings.Join(parts, ", ")
}

// prepare prepares every statement the store runs, each on the pool that
// runs it.
func (s *Store) prepare() error {
	var err error
	prep := func(db *sql.DB, query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.Prepare(query)
		if err != nil {
			err = fmt.Errorf("prepare %q: %w", query, err)
			return nil
		}
		s.stmts = append(s.stmts, st)
		s.queries = append(s.queries, query)
		return st
	}
	w, r := s.writer, s.reader

	s.createTask = prep(w, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, seq, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	s.updateTask = prep(w, `UPDATE tasks SET context_id = ?, state = ?, status_ms = ?, data = ?,
		seq = MAX(seq, ?)
		WHERE id = ? AND tenant = ? AND owner = ?`)
	s.getTask = prep(r, `SELECT data FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.lastSeq = prep(r, `SELECT seq FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)
	s.listActive = prep(r, `SELECT tenant, owner, data FROM tasks WHERE state IN (`+stateList(order.Active)+`)`)
	s.deleteFinished = prep(w, `DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks
		WHERE state IN (`+stateList(order.Terminal)+`) AND status_ms < ? LIMIT `+fmt.Sprint(deleteBatch)+`)`)

	// The configuration takes its tenant and owner from the task row, and
	// is written only if that row is in the caller's scope.
	s.putConfig = prep(w, `INSERT INTO push_configs (tenant, owner, task_id, id, data)
		SELECT tenant, owner, id, ?, ? FROM tasks WHERE id = ? AND tenant = ? AND owner = ?
		ON CONFLICT (task_id, id) DO UPDATE SET data = excluded.data`)
	s.getConfig = prep(r, `SELECT data FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	// One row with a NULL config when the task has none; no row when the
	// task is not in the scope.
	s.listConfigs = prep(r, `SELECT p.id IS NOT NULL, p.data FROM tasks t LEFT JOIN push_configs p ON p.task_id = t.id
		WHERE t.id = ? AND t.tenant = ? AND t.owner = ? ORDER BY p.id`)
	s.deleteConfig = prep(w, `DELETE FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	s.taskInScope = prep(r, `SELECT 1 FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`)

	// The outbox. queueEvent queues an event for every active
	// configuration of a task in the scope, queueOne for one.
	const queueSelect = `INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
		SELECT tenant, owner, task_id, id, ?, ?, ? FROM push_configs
		WHERE task_id = ? AND tenant = ? AND owner = ? AND suspended IS NULL`
	s.queueEvent = prep(w, queueSelect)
	s.queueOne = prep(w, queueSelect+` AND id = ?`)
	s.dropQueued = prep(w, `DELETE FROM push_outbox WHERE task_id = ? AND config_id = ?`)
	s.suspend = prep(w, `UPDATE push_configs SET suspended = ? WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
	s.unsuspend = prep(w, `UPDATE push_configs SET suspended = NULL WHERE task_id = ? AND id = ?`)
	s.deletePush = prep(w, `DELETE FROM push_outbox WHERE id = ?`)
	s.pushTargetsOf = prep(r, `SELECT config_id, min(tenant), min(owner) FROM push_outbox WHERE task_id = ?
		GROUP BY config_id ORDER BY config_id`)
	// One step of a skip scan over the index: the next configuration with
	// queued rows after a (task, config) position.
	s.nextPushTarget = prep(r, `SELECT task_id, config_id, tenant, owner FROM push_outbox
		WHERE (task_id, config_id) > (?, ?) ORDER BY task_id, config_id LIMIT 1`)
	s.pending = prep(r, `SELECT o.id, o.seq, o.event, c.data FROM push_outbox o
		JOIN push_configs c ON c.task_id = o.task_id AND c.id = o.config_id
		WHERE o.task_id = ? AND o.config_id = ? AND o.tenant = ? AND o.owner = ?
		ORDER BY o.id LIMIT ?`)

	s.insertMessage = prep(w, `INSERT INTO messages (tenant, owner, message_id, digest, task_id, reply, created_ms)
		VALUES (?, ?, ?, ?, ?, `+replyParam+`, ?) ON CONFLICT DO NOTHING`)
	const getMessage = `SELECT digest, task_id, reply IS NOT NULL, reply, created_ms FROM messages
		WHERE tenant = ? AND owner = ? AND message_id = ?`
	s.getMessage = prep(r, getMessage)
	s.getMessageW = prep(w, getMessage)
	s.setReply = prep(w, `UPDATE messages SET reply = `+replyParam+` WHERE tenant = ? AND owner = ? AND message_id = ?`)
	s.deleteMessages = prep(w, `DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages
		WHERE created_ms < ? LIMIT `+fmt.Sprint(deleteBatch)+`)`)

	for f := range listFilter(len(s.list)) {
		s.list[f] = prep(r, listSQL(f))
	}
	for f := range listFilter(len(s.countSince)) {
		if f&withSince != 0 {
			s.countSince[f] = prep(r, countSQL(f))
		}
	}
	s.counter = prep(r, `SELECT n FROM task_counts
		WHERE tenant = ? AND owner = ? AND kind = ? AND context_id = ? AND state = ?`)

	// Savepoints of the group commit; not queries, so not in s.queries.
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&s.savepoint, "SAVEPOINT op"}, {&s.release, "RELEASE op"}, {&s.rollbackTo, "ROLLBACK TO op"}} {
		if err != nil {
			break
		}
		if *p.st, err = w.Prepare(p.q); err == nil {
			s.stmts = append(s.stmts, *p.st)
		}
	}
	return err
}

// replyParam takes two arguments, whether there is a reply and its
// encoding. The driver binds an empty []byte as NULL, so an empty reply
// message is turned back into an empty blob here, apart from no reply.
const replyParam = `CASE WHEN ? THEN coalesce(?, x'') END`

func marshal(m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: encode: %w", err)
	}
	return b, nil
}

func unmarshalTask(b []byte) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("sqlitestore: decode task: %w", err)
	}
	return t, nil
}

func wrap(op string, err error) error {
	return fmt.Errorf("sqlitestore: %s: %w", op, err)
}

// wtx is the writer's open transaction as one write operation sees it.
// Statements run with the batch's context, not the caller's: interrupting
// a statement would roll back the whole shared transaction, so a caller's
// context is checked only before its operation starts.
type wtx struct {
	tx    *sql.Tx
	stmts map[*sql.Stmt]*sql.Stmt // the transaction's copies, reused within a batch
}

func (w *wtx) stmt(st *sql.Stmt) *sql.Stmt {
	ts, ok := w.stmts[st]
	if !ok {
		ts = w.tx.StmtContext(context.Background(), st)
		w.stmts[st] = ts
	}
	return ts
}

// exec runs a prepared writer statement in the transaction. The context
// argument is ignored (see wtx).
func (w *wtx) exec(_ context.Context, st *sql.Stmt, args ...any) (sql.Result, error) {
	return w.stmt(st).ExecContext(context.Background(), args...)
}

func (w *wtx) queryRow(st *sql.Stmt, args ...any) *sql.Row {
	return w.stmt(st).QueryRowContext(context.Background(), args...)
}

// writeOp is one queued write: fn runs inside the writer's transaction and
// err receives its outcome once that transaction has committed (or failed).
type writeOp struct {
	ctx context.Context
	fn  func(w *wtx) error
	err chan error
}

// maxBatch bounds how many operations one group commit takes.
const maxBatch = 256

var errClosed = errors.New("sqlitestore: store is closed")

// write runs fn in a transaction on the writer connection and returns
// only after that transaction has committed. Concurrent calls are grouped:
// the writer goroutine takes every operation waiting, runs each in its own
// savepoint (an operation that fails rolls back only its own changes),
// commits once and then answers them all. A caller's operations run in the
// order of its calls, since each call waits for its answer.
func (s *Store) write(ctx context.Context, fn func(w *wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &writeOp{ctx: ctx, fn: fn, err: make(chan error, 1)}
	select {
	case s.ops <- op:
	case <-s.closing:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once taken, the operation may commit: wait for the outcome whatever
	// the context does, so that an error always means "not written".
	return <-op.err
}

// runWriter is the writer goroutine.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	batch := make([]*writeOp, 0, maxBatch)
	for {
		select {
		case op := <-s.ops:
			batch = append(batch[:0], op)
		case <-s.closing:
			return
		}
		// Let the goroutines that are ready to run (the callers just
		// answered, say) queue their next operations before taking every
		// operation waiting; without this, on a busy processor the
		// writer would run each operation alone as soon as it arrives.
		for n := -1; n != len(batch) && len(batch) < maxBatch; {
			n = len(batch)
			runtime.Gosched()
		more:
			for len(batch) < maxBatch {
				select {
				case op := <-s.ops:
					batch = append(batch, op)
				default:
					break more
				}
			}
		}
		s.commitBatch(batch)
		clear(batch)
	}
}

// commitBatch runs the operations in one transaction and answers each.
func (s *Store) commitBatch(batch []*writeOp) {
	errs := make([]error, len(batch))
	fail := func(err error) {
		for _, op := range batch {
			op.err <- err
		}
	}
	bg := context.Background()
	tx, err := s.writer.BeginTx(bg, nil)
	if err != nil {
		fail(err)
		return
	}
	w := &wtx{tx: tx, stmts: make(map[*sql.Stmt]*sql.Stmt, 8)}
	single := len(batch) == 1
	for i, op := range batch {
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if single {
			errs[i] = op.fn(w)
			continue
		}
		if _, err := w.exec(bg, s.savepoint); err != nil {
			tx.Rollback()
			fail(err)
			return
		}
		errs[i] = op.fn(w)
		end := s.release
		if errs[i] != nil {
			end = s.rollbackTo
		}
		if _, err := w.exec(bg, end); err != nil {
			// The transaction is no longer usable (SQLite may have rolled
			// it back): nothing in the batch is written.
			tx.Rollback()
			fail(err)
			return
		}
		if errs[i] != nil {
			if _, err := w.exec(bg, s.release); err != nil {
				tx.Rollback()
				fail(err)
				return
			}
		}
	}
	if single && errs[0] != nil {
		tx.Rollback()
		batch[0].err <- errs[0]
		return
	}
	if err := tx.Commit(); err != nil {
		fail(err)
		return
	}
	for i, op := range batch {
		op.err <- errs[i]
	}
}

// affected returns the row count of an Exec result.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queued reports whether ev queues anything in the outbox.
func queued(ev taskstore.Event) bool { return ev.Push && ev.Response != nil }

// CreateTask inserts t, with ev.PushConfig and the outbox rows of ev, in
// one transaction; the id must be new in the whole store.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	if t.GetId() == "" {
		return errors.New("sqlitestore: task has no id")
	}
	if c := ev.PushConfig; c != nil && c.GetTaskId() != t.Id {
		return errors.New("sqlitestore: the push config is not the new task's")
	}
	data, err := marshal(t)
	if err != nil {
		return err
	}
	var cfg, evData []byte
	if ev.PushConfig != nil {
		if cfg, err = marshal(ev.PushConfig); err != nil {
			return err
		}
	}
	if queued(ev) {
		if evData, err = marshal(ev.Response); err != nil {
			return err
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.createTask, t.Id, sc.Tenant, sc.Owner, t.ContextId,
			int32(t.GetStatus().GetState()), order.StatusMillis(t), int64(ev.Seq), data))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrExists
		}
		if cfg != nil {
			if _, err := w.exec(ctx, s.putConfig, ev.PushConfig.GetId(), cfg, t.Id, sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		if evData != nil {
			if _, err := w.exec(ctx, s.queueEvent, int64(ev.Seq), evData, time.Now().UnixMilli(), t.Id, sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, taskstore.ErrExists) {
		return wrap("create task", err)
	}
	return err
}

// UpdateTask replaces the task with t's id in the scope, and queues the
// outbox rows of ev in the same transaction.
func (s *Store) UpdateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	data, err := marshal(t)
	if err != nil {
		return err
	}
	var evData []byte
	if queued(ev) {
		if evData, err = marshal(ev.Response); err != nil {
			return err
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.updateTask, t.GetContextId(), int32(t.GetStatus().GetState()),
			order.StatusMillis(t), data, int64(ev.Seq), t.GetId(), sc.Tenant, sc.Owner))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrNotFound
		}
		if evData != nil {
			if _, err := w.exec(ctx, s.queueEvent, int64(ev.Seq), evData, time.Now().UnixMilli(), t.GetId(), sc.Tenant, sc.Owner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, taskstore.ErrNotFound) {
		return wrap("update task", err)
	}
	return err
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	var seq int64
	err := s.lastSeq.QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, taskstore.ErrNotFound
	}
	if err != nil {
		return 0, wrap("last seq", err)
	}
	return uint64(seq), nil
}

// GetTask returns the task with the id in the scope.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	var data []byte
	err := s.getTask.QueryRowContext(ctx, id, sc.Tenant, sc.Owner).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get task", err)
	}
	return unmarshalTask(data)
}

// ListTasks returns one page of the scope's tasks. The page and the total
// are read in one read transaction, so they agree with each other.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	limit := max(q.Limit, 1)
	f := filterOf(q)
	args := f.args(sc, q)

	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	defer tx.Rollback()

	var res taskstore.ListResult
	if f&withSince != 0 {
		cf := f &^ withAfter
		err = tx.StmtContext(ctx, s.countSince[cf]).QueryRowContext(ctx, cf.args(sc, q)...).Scan(&res.Total)
	} else {
		kind := f & (withContext | withState)
		var ctxKey string
		if kind&withContext != 0 {
			ctxKey = q.ContextID
		}
		var stateKey int32
		if kind&withState != 0 {
			stateKey = int32(q.State)
		}
		err = tx.StmtContext(ctx, s.counter).QueryRowContext(ctx, sc.Tenant, sc.Owner, int(kind), ctxKey, stateKey).Scan(&res.Total)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
	}
	if err != nil {
		return taskstore.ListResult{}, wrap("count tasks", err)
	}

	rows, err := tx.StmtContext(ctx, s.list[f]).QueryContext(ctx, append(args, limit+1)...)
	if err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	defer rows.Close()
	res.Tasks = make([]*a2a.Task, 0, min(limit, 64))
	for rows.Next() {
		if len(res.Tasks) == limit {
			res.More = true
			break
		}
		var data sql.RawBytes
		if err := rows.Scan(&data); err != nil {
			return taskstore.ListResult{}, wrap("list tasks", err)
		}
		t, err := unmarshalTask(data)
		if err != nil {
			return taskstore.ListResult{}, err
		}
		res.Tasks = append(res.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return taskstore.ListResult{}, wrap("list tasks", err)
	}
	return res, nil
}

// ListActive returns every SUBMITTED or WORKING task with its scope.
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	rows, err := s.listActive.QueryContext(ctx)
	if err != nil {
		return nil, wrap("list active tasks", err)
	}
	defer rows.Close()
	var out []taskstore.ScopedTask
	for rows.Next() {
		var st taskstore.ScopedTask
		var data sql.RawBytes
		if err := rows.Scan(&st.Scope.Tenant, &st.Scope.Owner, &data); err != nil {
			return nil, wrap("list active tasks", err)
		}
		if st.Task, err = unmarshalTask(data); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list active tasks", err)
	}
	return out, nil
}

// deleteInBatches runs a batched DELETE until it removes nothing and
// returns the number of rows removed.
func deleteInBatches(ctx context.Context, st *sql.Stmt, arg any) (int, error) {
	total := 0
	for {
		res, err := st.ExecContext(ctx, arg)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
	}
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time; their push configurations go with them (ON DELETE
// CASCADE). It works in batches, each its own transaction.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	n, err := deleteInBatches(ctx, s.deleteFinished, order.CeilMillis(before))
	if err != nil {
		return n, wrap("delete finished tasks", err)
	}
	return n, nil
}

// PutPushConfig creates or replaces a configuration of a task in the
// scope. In the same transaction it drops the configuration's queued
// notifications, lifts its suspension and, with ev.Push, queues
// ev.Response for it.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig, ev taskstore.Event) error {
	data, err := marshal(c)
	if err != nil {
		return err
	}
	var evData []byte
	if queued(ev) {
		if evData, err = marshal(ev.Response); err != nil {
			return err
		}
	}
	err = s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.putConfig, c.GetId(), data, c.GetTaskId(), sc.Tenant, sc.Owner))
		if err != nil {
			return err
		}
		if n == 0 {
			return taskstore.ErrNotFound
		}
		if _, err := w.exec(ctx, s.dropQueued, c.GetTaskId(), c.GetId()); err != nil {
			return err
		}
		if _, err := w.exec(ctx, s.unsuspend, c.GetTaskId(), c.GetId()); err != nil {
			return err
		}
		if evData != nil {
			_, err = w.exec(ctx, s.queueOne, int64(ev.Seq), evData, time.Now().UnixMilli(), c.GetTaskId(), sc.Tenant, sc.Owner, c.GetId())
		}
		return err
	})
	if err != nil && !errors.Is(err, taskstore.ErrNotFound) {
		return wrap("put push config", err)
	}
	return err
}

// GetPushConfig returns one configuration of a task in the scope.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var data []byte
	err := s.getConfig.QueryRowContext(ctx, taskID, id, sc.Tenant, sc.Owner).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get push config", err)
	}
	c := new(a2a.TaskPushNotificationConfig)
	if err := proto.Unmarshal(data, c); err != nil {
		return nil, wrap("decode push config", err)
	}
	return c, nil
}

// ListPushConfigs returns a task's configurations ordered by id, or
// ErrNotFound when the task is not in the scope.
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error) {
	rows, err := s.listConfigs.QueryContext(ctx, taskID, sc.Tenant, sc.Owner)
	if err != nil {
		return nil, wrap("list push configs", err)
	}
	defer rows.Close()
	found := false
	out := []*a2a.TaskPushNotificationConfig{}
	for rows.Next() {
		found = true
		var has bool
		var data sql.RawBytes
		if err := rows.Scan(&has, &data); err != nil {
			return nil, wrap("list push configs", err)
		}
		if !has {
			continue // the task has no configuration
		}
		c := new(a2a.TaskPushNotificationConfig)
		if err := proto.Unmarshal(data, c); err != nil {
			return nil, wrap("decode push config", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list push configs", err)
	}
	if !found {
		return nil, taskstore.ErrNotFound
	}
	return out, nil
}

// DeletePushConfig removes one configuration of a task in the scope. A
// missing configuration is not an error; a task outside the scope is
// ErrNotFound.
func (s *Store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	var n int64
	err := s.write(ctx, func(w *wtx) (err error) {
		n, err = affected(w.exec(ctx, s.deleteConfig, taskID, id, sc.Tenant, sc.Owner))
		return err
	})
	if err != nil {
		return wrap("delete push config", err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = s.taskInScope.QueryRowContext(ctx, taskID, sc.Tenant, sc.Owner).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return taskstore.ErrNotFound
	}
	if err != nil {
		return wrap("delete push config", err)
	}
	return nil
}

// PushTargets returns the configurations with queued notifications, of one
// task or, walking the outbox index one configuration at a time, of all.
func (s *Store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	var out []taskstore.PushTarget
	if taskID != "" {
		rows, err := s.pushTargetsOf.QueryContext(ctx, taskID)
		if err != nil {
			return nil, wrap("push targets", err)
		}
		defer rows.Close()
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
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("push targets", err)
	}
	defer tx.Rollback()
	next := tx.StmtContext(ctx, s.nextPushTarget)
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
// notifications, oldest first.
func (s *Store) PendingPush(ctx context.Context, t taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	rows, err := s.pending.QueryContext(ctx, t.TaskID, t.ConfigID, t.Scope.Tenant, t.Scope.Owner, max(limit, 1))
	if err != nil {
		return nil, wrap("pending push", err)
	}
	defer rows.Close()
	var out []*taskstore.Notification
	for rows.Next() {
		n := &taskstore.Notification{Target: t, Config: new(a2a.TaskPushNotificationConfig), Event: new(a2a.StreamResponse)}
		var seq int64
		var ev, cfg sql.RawBytes
		if err := rows.Scan(&n.ID, &seq, &ev, &cfg); err != nil {
			return nil, wrap("pending push", err)
		}
		n.Seq = uint64(seq)
		if err := proto.Unmarshal(ev, n.Event); err != nil {
			return nil, wrap("decode queued event", err)
		}
		if err := proto.Unmarshal(cfg, n.Config); err != nil {
			return nil, wrap("decode push config", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("pending push", err)
	}
	return out, nil
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

// PutMessage records r if its id is new in the scope and returns
// (nil, nil); otherwise it returns the existing record. The check and the
// insert are one transaction.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	var reply []byte
	if r.Reply != nil {
		var err error
		if reply, err = marshal(r.Reply); err != nil {
			return nil, err
		}
	}
	var old *taskstore.MessageRecord
	var opErr error // already wrapped
	err := s.write(ctx, func(w *wtx) error {
		n, err := affected(w.exec(ctx, s.insertMessage, sc.Tenant, sc.Owner, r.MessageID,
			r.Digest, r.TaskID, r.Reply != nil, reply, r.Created.UnixMilli()))
		if err != nil {
			opErr = wrap("put message", err)
		} else if n == 0 {
			// Read the existing record on the writer's own connection,
			// inside the transaction, so that no cleanup can slip in
			// between.
			old, opErr = scanMessage(w.queryRow(s.getMessageW, sc.Tenant, sc.Owner, r.MessageID), r.MessageID)
		}
		return opErr
	})
	if opErr != nil {
		return nil, opErr
	}
	if err != nil {
		return nil, wrap("put message", err)
	}
	return old, nil
}

func scanMessage(row *sql.Row, id string) (*taskstore.MessageRecord, error) {
	r := &taskstore.MessageRecord{MessageID: id}
	var reply []byte
	var hasReply bool
	var created int64
	err := row.Scan(&r.Digest, &r.TaskID, &hasReply, &reply, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get message", err)
	}
	r.Created = time.UnixMilli(created).UTC()
	if hasReply {
		r.Reply = new(a2a.Message)
		if err := proto.Unmarshal(reply, r.Reply); err != nil {
			return nil, wrap("decode message reply", err)
		}
	}
	return r, nil
}

// GetMessage returns the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return scanMessage(s.getMessage.QueryRowContext(ctx, sc.Tenant, sc.Owner, messageID), messageID)
}

// SetMessageReply stores the direct reply of a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	var data []byte
	if reply != nil {
		var err error
		if data, err = marshal(reply); err != nil {
			return err
		}
	}
	var n int64
	err := s.write(ctx, func(w *wtx) (err error) {
		n, err = affected(w.exec(ctx, s.setReply, reply != nil, data, sc.Tenant, sc.Owner, messageID))
		return err
	})
	if err != nil {
		return wrap("set message reply", err)
	}
	if n == 0 {
		return taskstore.ErrNotFound
	}
	return nil
}

// DeleteMessagesBefore forgets the records created before the time, in
// batches.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	n, err := deleteInBatches(ctx, s.deleteMessages, order.CeilMillis(before))
	if err != nil {
		return n, wrap("delete messages", err)
	}
	return n, nil
}

// Close closes the statements and connections. It may be called more than
// once; later calls return the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.closing != nil {
			// Operations already taken are answered before the
			// goroutine stops; later ones get errClosed.
			close(s.closing)
			<-s.writerDone
		}
		var errs []error
		for _, st := range s.stmts {
			errs = append(errs, st.Close())
		}
		if s.reader != nil {
			errs = append(errs, s.reader.Close())
		}
		// Closing the last connection checkpoints the WAL into the file.
		errs = append(errs, s.writer.Close())
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlitestore: close: %w", err)
		}
	})
	return s.closeErr
}
