// Package pgstore is a durable taskstore.Store kept in PostgreSQL, through
// github.com/jackc/pgx/v5 and its connection pool.
//
// Open applies the schema's versioned migrations at start-up, in one
// transaction under a transaction-level advisory lock
// (pg_advisory_xact_lock), so that several processes starting together
// on one database migrate it once; a database whose schema version is
// newer than this package knows is refused (ErrNewerSchema). The tables
// live in the first schema of the connection's search_path (a URL may set
// it: postgres://…/db?search_path=parley).
//
// A task is kept in pieces, as in package sqlitestore's schema version 4,
// so that an event costs a few small writes whatever the size of the
// task: the tasks row is a small header (the ListTasks columns, the
// status, the last sequence number, whether the task ever had a push
// configuration, and the next history and chunk numbers); history
// messages, artifact chunks and logged events are rows of their own.
// An Append is the header UPDATE, which checks the scope and the
// sequence number in its WHERE clause (WHERE seq = n-1; no row is ErrSeq
// or ErrNotFound) and returns what the rest needs, and the small INSERTs
// it makes possible. The common events (a status update, an artifact
// chunk) and CreateTask are one statement each, of data-modifying CTEs;
// the rare ones (a Task event, a client message with an event) are a
// transaction of the UPDATE and one batch. The header row lock orders
// concurrent writers of one task. Payloads are protobuf binary (bytea).
//
// Group commit: those one-statement writes, and PutMessage's and
// SetMessageReply's, are sent by one goroutine per Store, as many as are
// waiting in one batch that PostgreSQL runs as one transaction, so that
// under load a request's writes share one round trip, one commit and one
// WAL flush with those of others; a write that finds none in flight goes at
// once. When one statement of a group fails, the group is rolled back and
// its writes run again one by one, so that each gets its own outcome. A
// write is acknowledged only after its group committed.
//
// Message records are keyed (tenant, owner, message_id), so the database
// decides which of two concurrent PutMessage calls with one id wins, on
// any number of processes.
//
// ListTasks pages with keyset conditions on (status_ms, id) over an index
// matching each filter. The total comes from counters (task_counts) that
// CreateTask's statement adds a new task to and a trigger keeps in step
// with every later change, split into 16 slots by task id so that
// concurrent writers of one scope rarely wait on the same counter row: one
// for the scope and one per state. With a context or a Since bound it is a
// COUNT over the matching index range.
//
// A task's history, chunk and event rows have no foreign key to its row
// (schema version 4): a statement adds them together with the task, or
// after updating the task's row, and DeleteFinished deletes them.
//
// The push outbox is the push_outbox table, filled in the transaction
// that records the event. PendingPush reads rows as they are, for one
// sender per database; with several processes, senders claim rows with
// ClaimPush (taskstore.OutboxClaims): the configuration row, locked FOR
// NO KEY UPDATE SKIP LOCKED, serializes the claimers of a configuration,
// and a claim on the oldest rows (holder, lease) bars the others until
// it is deleted or lapses.
//
// Several processes (replicas, Store.Join): each Joins with a lease, a row
// of parley_replicas whose epoch fences its task writes (the header UPDATE
// and the INSERT of a new task succeed only while the epoch's lease holds,
// at the database's clock) and is recorded as the task's runner, so that
// Replica.Orphans finds the active tasks of a replica whose lease lapsed.
// SharedKey keeps secrets the replicas share (the ListTasks cursor key).
//
// Every call is bounded by Options.Timeout: each statement, batch and
// transaction has a context deadline of it, new connections a connect
// timeout, PostgreSQL a statement_timeout, and the sockets TCP keepalive
// and (on Linux) TCP_USER_TIMEOUT; so a database cut off without a reset
// (a partition that drops packets) fails calls with an error matching
// taskstore.ErrUnavailable within the timeout instead of holding them.
//
// Push secrets are sealed as in package sqlitestore (Options.PushKeys,
// package taskstore/seal), with the same additional data, so sealed
// values are interchangeable between the two stores.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
	"parley.dev/parley/taskstore/seal"
)

// Store is a taskstore.Store backed by PostgreSQL. Create one with Open;
// it is safe for concurrent use by any number of goroutines and
// processes (the outbox through ClaimPush, see above).
type Store struct {
	pool   *pool           // with Options.Timeout on every call
	commit *committer      // the group commit of small writes
	sealer sqlstore.Sealer // seals push secrets; without keys stores them as given
	lock   *pgx.Conn       // holds the Exclusive lock; nil without it
	epoch  atomic.Int64    // the fence of task writes: the Replica's epoch, 0 before Join
}

var _ taskstore.Store = (*Store)(nil)

// Options configure a Store.
type Options struct {
	// PushKeys, when set, encrypts the secrets of push configurations at
	// rest (webhook URL, token, credentials), as in package sqlitestore:
	// the first key seals, every key opens. Without keys the secrets are
	// stored as given, and Open refuses a database that holds sealed
	// ones.
	PushKeys *seal.Keys
	// MaxConns bounds the connection pool; zero means pgxpool's default
	// (the larger of 4 and the number of CPUs), or pool_max_conns in the
	// URL.
	MaxConns int32
	// Exclusive makes Open take a session advisory lock on the store's
	// schema, held by a connection of its own until Close, and fail with
	// ErrInUse when another Store holds it: for a program that assumes it
	// owns the database (a server without server.Options.Cluster fails
	// every active task at start, and sends push notifications without
	// claiming them). `parley serve` runs as a replica instead (Join). If
	// that connection is lost, so is the lock.
	Exclusive bool
	// Timeout bounds every call of the store: each statement, batch and
	// transaction, and the making of a connection (connect_timeout); it is
	// also PostgreSQL's statement_timeout and how long a silent connection
	// lives (TCP keepalive, and TCP_USER_TIMEOUT on Linux). Zero means
	// DefaultTimeout. A URL's own connect_timeout or statement_timeout
	// wins. A call past it fails with an error matching
	// taskstore.ErrUnavailable. Open's migrations are bounded by Open's
	// context only.
	Timeout time.Duration
}

// ErrInUse is returned (wrapped) by Open with Options.Exclusive when
// another exclusive Store has the database's schema open.
var ErrInUse = errors.New("another program holds this database exclusively")

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), applies the schema migrations and checks the push
// keys. opts may be nil.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	configure(cfg, timeout)
	pgxPool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	p := &pool{Pool: pgxPool, timeout: timeout}
	s := &Store{pool: p, sealer: sqlstore.Sealer{D: dialect, Keys: opts.PushKeys}, commit: newCommitter(p)}
	ctx = context.WithValue(ctx, noDeadline{}, true)
	if opts.Exclusive {
		if err := s.lockExclusive(ctx, cfg.ConnConfig); err != nil {
			s.Close()
			return nil, fmt.Errorf("pgstore: %w", err)
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := s.checkPushKeys(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return s, nil
}

// Pool returns the store's connection pool, for uses beside the store
// (such as LISTEN/NOTIFY on the same database). Its connections have
// Options.Timeout's connect timeout, statement_timeout and socket
// settings, but calls on it have only the deadlines of their contexts.
func (s *Store) Pool() *pgxpool.Pool { return s.pool.Pool }

// Close closes the pool's connections, waiting for those in use. It may
// be called more than once.
func (s *Store) Close() error {
	s.commit.close()
	s.pool.Close()
	if s.lock != nil {
		// Unlocked first, since the session's end (which would release
		// the lock too) may come after Close returns.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.lock.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		s.lock.Close(ctx)
		cancel()
	}
	return nil
}

// lockExclusive takes the Exclusive lock on a connection of its own: a
// session advisory lock keyed by the name of the schema the tables are in.
func (s *Store) lockExclusive(ctx context.Context, cc *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return err
	}
	var got bool
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext(current_schema()))`, int32(exclusiveLock)).Scan(&got)
	if err == nil && !got {
		err = ErrInUse
	}
	if err != nil {
		conn.Close(ctx)
		return err
	}
	s.lock = conn
	return nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.pool.inTx(ctx, pgx.TxOptions{}, fn)
}

// execGrouped runs a statement writing in the scope in the next group
// commit (committer) and returns the number of rows it affected.
func (s *Store) execGrouped(ctx context.Context, sc taskstore.Scope, sql string, args ...any) (int64, error) {
	var n int64
	err := s.grouped(ctx, sc, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		n = tag.RowsAffected()
		return err
	}, sql, args...)
	return n, err
}

// countGrouped runs a statement writing in the scope, whose one row is a
// count, in the next group commit, and returns the count.
func (s *Store) countGrouped(ctx context.Context, sc taskstore.Scope, sql string, args ...any) (int64, error) {
	var n int64
	err := s.grouped(ctx, sc, func(br pgx.BatchResults) error { return br.QueryRow().Scan(&n) }, sql, args...)
	return n, err
}

// grouped runs one statement writing in the scope in the next group
// commit, read back by read.
func (s *Store) grouped(ctx context.Context, sc taskstore.Scope, read func(pgx.BatchResults) error, sql string, args ...any) error {
	return s.commit.do(ctx, &write{scope: scopeKey(sc), queue: func(b *pgx.Batch) { b.Queue(sql, args...) }, read: read})
}

// querier runs a query of one row: a transaction, or the pool.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// affected returns the row count of an Exec.
func affected(tag pgconn.CommandTag, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// isNoRows reports whether err says a query returned no row.
func isNoRows(err error) bool { return dialect.IsNoRows(err) }

// wrap names the operation that failed with err, marking a failure that
// passes (Dialect.Unavailable over transient).
func wrap(op string, err error) error { return dialect.Wrap(op, err) }

// dialect is PostgreSQL's side of what the two SQL stores share (package
// sqlstore): numbered placeholders, real booleans, typed NULLs in the
// unions that read a task's pieces, a task's scope compared with IS NOT
// DISTINCT FROM (see taskByID), and PostgreSQL's failures that pass.
var dialect = &sqlstore.Dialect{
	Name:      "pgstore",
	Numbered:  true,
	False:     "false",
	NullBytes: "NULL::bytea",
	ScopeIs:   "IS NOT DISTINCT FROM",
	NoRows:    pgx.ErrNoRows,
	Transient: transient,
}
