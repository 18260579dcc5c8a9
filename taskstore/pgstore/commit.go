package pgstore

// Group commit: the small writes of many callers (Append's one-statement
// events, CreateTask, PutMessage) share one transaction and one round
// trip. Under load a request's writes then cost PostgreSQL a share of one
// commit, one WAL flush and one wake-up instead of one each, and the
// process a share of one network write and read.

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxGroup bounds the writes in one transaction.
const maxGroup = 128

// errClosed is the error of a write submitted after Close.
var errClosed = errors.New("pgstore: the store is closed")

// A write is one caller's part of a group: statements it queues on the
// group's batch, and how it reads their results back, in order, every
// one. Both may run more than once (see flush), so they must not change
// anything outside the write.
type write struct {
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
type committer struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pending []*write
	closed  bool
	wake    chan struct{} // holds one token while writes are pending
	stopped chan struct{} // closed when run returns
}

func newCommitter(pool *pgxpool.Pool) *committer {
	c := &committer{pool: pool, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
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
		return errClosed
	}
	c.pending = append(c.pending, w)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-w.done
	return w.err
}

// close lets the pending writes finish, then stops the goroutine; writes
// submitted after it fail with errClosed.
func (c *committer) close() {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if !already {
		close(c.wake)
	}
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
	b := &pgx.Batch{}
	for _, w := range group {
		w.queue(b)
	}
	br := c.pool.SendBatch(context.Background(), b)
	for _, w := range group {
		w.err = w.read(br)
	}
	return br.Close()
}
