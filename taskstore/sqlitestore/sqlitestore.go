// Package sqlitestore is a durable taskstore.Store kept in one SQLite file,
// using the pure-Go driver modernc.org/sqlite (no cgo).
//
// The database runs in WAL mode. By default synchronous=NORMAL: once a write
// method returns, its change is in the write-ahead log and survives the
// process being killed (kill -9, a crash); only an operating-system crash
// or power loss can take back the last transactions. Options.FullSync
// (synchronous=FULL) closes that gap too, at the cost of one fsync per
// write. The write-ahead log is kept in proportion to the volume the file
// lives on: checkpointed at an eighth of the volume (at most about 40
// MiB) and truncated back to it, truncated to nothing after a second
// without writes, and after every commit while free space is short, so
// that it cannot fill a small volume; a full disk recovers, without a
// restart, once space returns. Writes go through a single connection, so
// writers queue in Go instead of failing with SQLITE_BUSY; reads use a
// separate pool of connections and run in parallel with each other and
// with the writer.
//
// Writes are group-committed: one writer goroutine takes every write call
// waiting, runs them inside one transaction, commits once and then answers
// them all. A call that fails gets its own error and loses only its own
// changes: the expected refusals (ErrExists, ErrNotFound, ErrSeq) come
// before any write, and any other failure has the batch run again with
// each call in its own savepoint. A write method still returns only
// after its change is committed, and one caller's writes are applied in the
// order of its calls. A caller's context is checked before its write
// starts; once started, the write is not interrupted (that would roll back
// the whole group), and the call waits for the outcome. The batched
// deletes of DeleteFinished and DeleteMessagesBefore run outside the
// group, each batch its own transaction.
//
// A task is kept in pieces (schema version 4), so that an event costs a few
// small writes whatever the size of the task: the tasks row is a small
// header (the ListTasks columns, the status, the last sequence number,
// whether the task ever had a push configuration), history messages and
// artifact chunks are rows of their own, and task_events is the event log.
// Append is one header UPDATE, which checks the scope and the sequence
// number and returns the push mark in the same statement, and one to three
// small INSERTs; GetTask and ListTasks put the pieces back together (a
// page's pieces in two queries). Payloads are protobuf binary. Opening a
// version 3 file splits its tasks into the pieces, in the upgrade's
// transaction.
//
// The push outbox is the push_outbox table (schema version 2): a row per
// event and configuration, written in the transaction that records the
// event, removed by cascade with its configuration or task. A task never
// given a push configuration skips the outbox query.
//
// The database files are private to their owner: Open creates the
// database with mode 0600 (Options.FileMode) whatever the umask, SQLite
// gives its -wal and -shm files the same mode, and Open narrows the mode
// of files that exist (such as those older versions created 0644). Deleted
// rows are overwritten in the pages a write touches (secure_delete=FAST).
//
// Push secrets can be encrypted at rest (spec §13.2): with
// Options.PushKeys, the webhook URL, token and credentials of every push
// configuration are sealed with AES-256-GCM by package taskstore/seal,
// bound to the configuration's scope, task and id, so a sealed value can
// be neither read without the key, nor changed, nor moved to another row.
// The rest of the configuration stays readable. Open refuses a database whose sealed
// secrets the given keys cannot open, and ResealPushConfigs moves every
// configuration to the first key, after a key is added or rotated. Without
// keys, the secrets are stored as given.
//
// ListTasks pages with keyset conditions on (status_ms, id) over an index
// that matches each filter exactly, so finding a page never scans the
// table. The exact total comes from counters that triggers keep in step
// with the tasks table (one per scope, and one per scope and state): one
// lookup. When the query names a context or has a Since bound, the total
// is a COUNT over the matching index range instead, whose cost grows with
// the number of tasks in the context or at or after Since (a context
// holds a conversation's tasks; counters per context cost every new task
// two more rows to write).
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
	"parley.dev/parley/taskstore/seal"
)

// Store is a taskstore.Store backed by an SQLite database file. Create one
// with Open; it is safe for concurrent use.
type Store struct {
	writer *sql.DB         // one connection: every write goes through it
	reader *sql.DB         // a pool of query_only connections
	sealer sqlstore.Sealer // seals push secrets; without keys stores them as given
	cache  *taskCache      // the tasks GetTask read last

	stmts   []*sql.Stmt // every prepared statement, for Close
	queries []string    // their text, for the query plan test

	// Prepared statements, by role; each is prepared on the pool that
	// runs it (see the prepare functions next to their users).
	createTask, lastSeq                    *sql.Stmt
	putHistory, putChunks                  *multiInsert // a new task's rows (writer)
	getTask                                *sql.Stmt
	listActive, deleteFinished             *sql.Stmt
	list                                   [16]*sql.Stmt // by listFilter
	countRange                             [8]*sql.Stmt  // by listFilter, only those sqlstore.RangeCounted
	counter                                *sql.Stmt
	putConfig, getConfig                   *sql.Stmt
	listConfigs, deleteConfig, taskInScope *sql.Stmt
	markPush                               *sql.Stmt
	queueEvent, queueOne, dropQueued       *sql.Stmt // the push outbox (writer)
	suspend, unsuspend, deletePush         *sql.Stmt
	pushTargetsOf, nextPushTarget, pending *sql.Stmt // the push outbox (readers)
	resealBatch, resealOne                 *sql.Stmt // ResealPushConfigs
	getMessage, setReply                   *sql.Stmt
	insertMessage, getMessageW             *sql.Stmt // getMessageW runs on the writer
	deleteMessages                         *sql.Stmt
	probeWrite                             *sql.Stmt
	savepoint, release, rollbackTo         *sql.Stmt // group commit (writer)
	headSeq, headStatus, headTask, seqW    *sql.Stmt // Append (writer)
	addHistory, addHistoryIn, addChunk     *sql.Stmt
	replaceChunk, dropChunks               *sql.Stmt
	clearHistory, clearChunks              *sql.Stmt
	logRow, pruneTasks, pruneEvents        *sql.Stmt // the event log (writer)
	pruneLast, trimLast, pruneMark         *sql.Stmt
	getBase, putBase                       *sql.Stmt // timeline bases (writer)
	events, timelineBase                   *sql.Stmt // the event log (reader)
	pagePieces                             *sql.Stmt // ListTasks (reader)

	now func() time.Time // the clock of the event log and the outbox
	wal *walKeeper       // the writer goroutine's watch over the WAL

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

	// PushKeys, when set, encrypts the secrets of push configurations at
	// rest: the credentials of their authentication, their token and their
	// webhook URL, which may carry a secret too (spec §13.2: agents SHOULD
	// store push credentials securely). The first key
	// seals; every key opens, so keys can be rotated (see
	// Store.ResealPushConfigs). Without keys the secrets are stored as
	// given, and Open refuses a database that holds sealed secrets. Get
	// the keys from wherever you keep secrets and pass them to seal.New,
	// or read them as text with seal.Parse.
	PushKeys *seal.Keys

	// FileMode is the permission of the database files; zero means
	// DefaultFileMode (0600). It must grant the owner read and write and
	// nothing beyond 0666. A new database is created with exactly this
	// mode whatever the process umask, and SQLite gives its -wal and -shm
	// files the same. An existing file keeps only the bits it shares with
	// FileMode: Open narrows permissions, it never widens them.
	FileMode fs.FileMode
}

// Open opens or creates the database at path with default options; see
// OpenWith.
func Open(path string) (*Store, error) { return OpenWith(path, nil) }

// OpenWith opens or creates the database at path and brings its schema up to
// date. path must name a file; in-memory databases are not supported (use
// package memstore instead). opts may be nil.
//
// Open checks that the push keys can open every sealed secret in the
// database: it fails with ErrNoPushKey when the database holds sealed
// secrets and opts gives no keys, and with an error wrapping
// seal.ErrUnknownKey when they were sealed under a key opts does not hold.
func OpenWith(path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	sync := "NORMAL"
	if opts.FullSync {
		sync = "FULL"
	}
	mode := opts.FileMode
	if mode == 0 {
		mode = DefaultFileMode
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlitestore: %q is not a plain file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	if err := prepareFiles(abs, mode); err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	// A file: URI keeps characters such as '?' and '#' in the path intact.
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()

	s := &Store{sealer: sqlstore.Sealer{D: dialect, Keys: opts.PushKeys}, now: time.Now, cache: newTaskCache()}
	// secure_delete=FAST zeroes deleted and replaced row content within the
	// pages a write touches anyway, so that a secret sealed again, or a
	// configuration deleted, does not linger in the file's free space.
	// temp_store=MEMORY keeps statement journals (the savepoints of a
	// group commit, multi-row statements) in memory instead of temporary
	// files: in a profile of the write path, those files' page writes
	// were a fifth of the CPU time. The writer's page cache is 1 MiB
	// instead of SQLite's 2 MiB (writerCacheKiB). The writer checkpoints
	// the WAL at its budget (walBudget: walCheckpointPages pages instead of
	// SQLite's 1,000, less on a small volume) and truncates it back to
	// that length after a checkpoint. Pages are SQLite's default 4 KiB,
	// which the store never changes.
	total, _, _ := volumeSpace(filepath.Dir(abs))
	budget := walBudget(total, pageSize)
	s.wal = newWALKeeper(abs, budget, pageSize)
	s.writer, err = sql.Open("sqlite", base+"?_pragma=busy_timeout(10000)"+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+")&_pragma=foreign_keys(1)"+
		"&_pragma=secure_delete(FAST)&_pragma=temp_store(MEMORY)"+
		"&_pragma=wal_autocheckpoint("+strconv.FormatInt(budget, 10)+")"+
		"&_pragma=journal_size_limit("+strconv.FormatInt(budget*pageSize, 10)+")"+
		"&_pragma=cache_size(-"+strconv.Itoa(writerCacheKiB)+")&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	keepOpen(s.writer, 1)
	if err := s.setUp(); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	if err := s.checkPushKeys(context.Background()); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}

	s.reader, err = sql.Open("sqlite", base+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	keepOpen(s.reader, max(4, runtime.GOMAXPROCS(0)))
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

// writerCacheKiB is the writer connection's page cache. Its writes touch
// the newest rows (task ids are UUIDs of version 7, which grow with time:
// a2a.NewID) and the index pages they change; every other page it reads
// is in the operating system's cache of the file. Halving SQLite's default (2 MiB)
// took 2 MiB off the resident memory of `parley serve` under write load
// (41.3 to 39.4 MiB peak, 8 s and 30 s of SendMessage and 20-chunk
// streams at 64 clients) with no change in CPU per request beyond the
// machine's noise.
const writerCacheKiB = 1024

// pageSize is the database's page size: SQLite's default, which the store
// never changes.
const pageSize = 4096

// walCheckpointPages is the WAL's length, in pages, at which a commit
// checkpoints it into the database file, on a volume large enough
// (walBudget). A checkpoint writes each page the WAL holds once, however
// often it changed since the last one; the pages every send changes (the
// newest end of each index, the task counters) are few, so a longer WAL
// writes them back less often. 10,000 pages (about 40 MiB on disk;
// journal_size_limit truncates the file back to that) cost 4–6 % less CPU
// per SendMessage than SQLite's 1,000, side by side, and about 2 % less
// per 20-chunk stream.
const walCheckpointPages = 10000

// keepOpen sizes a pool to n connections that are never closed for age
// or idleness, so prepared statements stay prepared.
func keepOpen(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
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

func unmarshalTask(b []byte) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("sqlitestore: decode task: %w", err)
	}
	return t, nil
}

// wrap names the operation that failed with err, marking a failure that
// passes (Dialect.Unavailable over transient).
func wrap(op string, err error) error { return dialect.Wrap(op, err) }

// dialect is SQLite's side of what the two SQL stores share (package
// sqlstore): ? placeholders, booleans stored as the integers 0 and 1, a
// task's scope compared with =, and SQLite's failures that pass.
var dialect = &sqlstore.Dialect{
	Name:      "sqlitestore",
	False:     "0",
	NullBytes: "NULL",
	ScopeIs:   "=",
	NoRows:    sql.ErrNoRows,
	Transient: transient,
}
