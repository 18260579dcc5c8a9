package pgstore

// Group commit: the small writes of many callers (Append's one-statement
// events, CreateTask, PutMessage) share one transaction and one round
// trip. Under load a request's writes then cost PostgreSQL a share of one
// commit, one WAL flush and one wake-up instead of one each, and the
// process a share of one network write and read.

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"parley.dev/parley/taskstore"
)

// maxGroup bounds the writes in one transaction.
const maxGroup = 128

// scopeLocks is the first key of the transaction-level advisory locks a
// group takes on its writes' scopes (the second is the scope's hash).
//
// A group's statements lock rows that other groups lock too: above all
// the ListTasks counters of the scope (task_counts, which every new task
// and state change updates), in whatever order its writes come, and
// holds them until it commits. Two groups in flight at once, from two
// replicas, could each wait for a counter the other holds: a deadlock,
// which PostgreSQL breaks after deadlock_timeout (1 s) by failing one.
// So a group first takes a lock on each of its scopes, in one order for
// every group; groups of one scope then take turns, and groups of
// different scopes, which share no counters, do not wait for each other.
// Append's transactions (its rare events) take the lock of their scope
// too.
const scopeLocks = 0x73636f70 // "scop"

// sqlLockScopes takes the locks of the scope keys $2, in their order.
const sqlLockScopes = `SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::integer[]) AS k`

// errClosed is the error of a write submitted after Close.
var errClosed = errors.New("pgstore: the store is closed")

// A write is one caller's part of a group: statements it queues on the
// group's batch, and how it reads their results back, in order, every
// one. Both may run more than once (see flush), so they must not change
// anything outside the write.
type write struct {
	scope int32 // scopeKey of the write's scope
	queue func(b *pgx.Batch)
	read  func(br pgx.BatchResults) error
	err   error
	done  chan struct{}
}

// committer sends writes in groups, one group at a time, from a goroutine
// of its own. One at a time keeps its groups from waiting on each
// other's row locks (the ListTasks counters, which every status change
// touches); a group forms while the one before it is in flight, so its
// size follows the load, and a write that finds nothing in flight goes at
// once.
//
// A group's round trip is bounded by the store's timeout (type pool):
// a write that joined a group waits for its outcome whatever its caller's
// context says (see do), so that a database that stopped answering fails
// the group's writes, with an outcome unknown, instead of holding them,
// and Close, forever.
type committer struct {
	pool *pool

	mu      sync.Mutex
	pending []*write
	closed  bool
	wake    chan struct{} // holds one token while writes are pending
	stopped chan struct{} // closed when run returns

	rollbacks atomic.Int64 // groups rolled back by a failed statement (tests)
}

func newCommitter(p *pool) *committer {
	c := &committer{pool: p, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.run()
	return c
}

// do runs w in the next group and returns its error once the group's
// transaction has ended. A write that has joined a group is waited for
// even when ctx ends meanwhile: its outcome is then known.
func (c *committer) do(ctx context.Context, w *write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.done = make(chan struct{})
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return dialect.Unavailable(errClosed)
	}
	c.pending = append(c.pending, w)
	select { // under mu, so that close cannot close wake meanwhile
	case c.wake <- struct{}{}:
	default:
	}
	c.mu.Unlock()
	<-w.done
	return dialect.Unavailable(w.err)
}

// close lets the pending writes finish, then stops the goroutine; writes
// submitted after it fail with errClosed.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.wake)
	}
	c.mu.Unlock()
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	for range c.wake {
		for {
			c.mu.Lock()
			n := min(len(c.pending), maxGroup)
			group := c.pending[:n:n]
			c.pending = c.pending[n:]
			c.mu.Unlock()
			if n == 0 {
				break
			}
			c.flush(group)
		}
	}
}

// flush runs a group in one transaction: every write's statements in one
// batch with one Sync, which PostgreSQL runs as one implicit transaction.
// When a statement fails, the transaction is rolled back whole, and each
// write is run again alone, so that the failure is only its own. An
// error that is not PostgreSQL's (a connection lost mid-way) may have
// come after the commit, so it is every write's outcome as it is.
func (c *committer) flush(group []*write) {
	err := c.send(group)
	var pgErr *pgconn.PgError
	if err != nil && len(group) > 1 && errors.As(err, &pgErr) {
		c.rollbacks.Add(1)
		for _, w := range group {
			c.flush([]*write{w})
		}
		return
	}
	for _, w := range group {
		if err != nil {
			w.err = err
		}
		close(w.done)
	}
}

// send runs the writes' statements as one batch, has each read its
// results, and returns the batch's error: that of the first statement
// that failed, or of the commit.
func (c *committer) send(group []*write) error {
	keys := make([]int32, len(group))
	for i, w := range group {
		keys[i] = w.scope
	}
	slices.Sort(keys)
	b := &pgx.Batch{}
	b.Queue(sqlLockScopes, int32(scopeLocks), slices.Compact(keys))
	for _, w := range group {
		w.queue(b)
	}
	br := c.pool.SendBatch(context.Background(), b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	for _, w := range group {
		w.err = w.read(br)
	}
	return br.Close()
}

// scopeKey returns the second key of a scope's advisory lock: a hash, so
// that scopes that share one take turns.
func scopeKey(sc taskstore.Scope) int32 {
	h := fnv.New32a()
	h.Write([]byte(sc.Tenant))
	h.Write([]byte{0})
	h.Write([]byte(sc.Owner))
	return int32(h.Sum32())
}
