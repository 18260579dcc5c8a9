// This file holds Bus, the cross-replica wake-up on PostgreSQL's
// LISTEN/NOTIFY: the processes sharing a pgstore database wake each
// other's followers when a task's log grows. A notification carries the
// task id only; the log in the database is what followers read.
//
// NOTIFY is delivered to every listening session of the database, after
// the notifying transaction commits, in commit order; it is not kept for
// a session that is not listening. When the listening connection drops,
// the bus connects again and wakes every watcher but those of request
// keys (eventbus.RequestKey), since notifications may have been missed
// meanwhile; the followers' fallback poll covers the rest. A watcher so
// woken reads the store: the wake-up says nothing by itself.

package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parley.dev/parley/internal/eventbus"
)

// DefaultBusChannel is the notification channel a Bus uses when none is
// given.
const DefaultBusChannel = "parley_events"

// Bus is a server.Bus (server.Cluster.Bus) on one PostgreSQL database. Create it with NewBus
// and Close it when done.
type Bus struct {
	pool    *pgxpool.Pool
	channel string
	reg     eventbus.Registry

	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	listening bool // a LISTEN session is up
}

var _ eventbus.Bus = (*Bus)(nil)

// NewBus starts a bus on the pool's database, listening on channel
// (DefaultBusChannel when empty) with a connection taken from the pool for
// good. It returns once the first LISTEN is in place, so a notification
// sent after NewBus returns is received.
func NewBus(ctx context.Context, pool *pgxpool.Pool, channel string) (*Bus, error) {
	if channel == "" {
		channel = DefaultBusChannel
	}
	conn, err := listenBus(ctx, pool, channel)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	b := &Bus{pool: pool, channel: channel, cancel: cancel, done: make(chan struct{}), listening: true}
	go b.run(lctx, conn)
	return b, nil
}

// listenBus takes a connection out of the pool and runs LISTEN on it.
func listenBus(ctx context.Context, pool *pgxpool.Pool, channel string) (*pgx.Conn, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// run receives notifications until ctx ends, connecting again when the
// connection fails; the watchers rely on their poll meanwhile.
func (b *Bus) run(ctx context.Context, conn *pgx.Conn) {
	defer close(b.done)
	for {
		b.receive(ctx, conn) // returns when the connection fails or ctx ends
		conn.Close(context.Background())
		b.setListening(false)
		if conn = b.reconnect(ctx); conn == nil {
			return
		}
		b.setListening(true)
		b.reg.WakeAll() // what was notified while no one listened
	}
}

// reconnect listens again, pausing between attempts (from 50 ms, doubling
// up to five seconds); nil when ctx ended first.
func (b *Bus) reconnect(ctx context.Context) *pgx.Conn {
	pause := 50 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		if conn, err := listenBus(ctx, b.pool, b.channel); err == nil {
			return conn
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// receive wakes the watchers of each notification until the connection
// fails or ctx ends.
func (b *Bus) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		b.reg.Wake(n.Payload)
	}
}

func (b *Bus) setListening(on bool) {
	b.mu.Lock()
	b.listening = on
	b.mu.Unlock()
}

// Listening reports whether the bus's LISTEN session is up (it is down
// between a dropped connection and the next one).
func (b *Bus) Listening() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.listening
}

// Notify sends the task id on the channel (pg_notify), to every process
// listening on the database, this one included.
func (b *Bus) Notify(ctx context.Context, taskID string, _ uint64) error {
	if _, err := b.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, b.channel, taskID); err != nil {
		return errors.Join(errors.New("pgstore: bus notify"), err)
	}
	return nil
}

// NotifyMany sends each task id on the channel, in one statement.
func (b *Bus) NotifyMany(ctx context.Context, taskIDs []string) error {
	if _, err := b.pool.Exec(ctx, `SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, b.channel, taskIDs); err != nil {
		return errors.Join(errors.New("pgstore: bus notify"), err)
	}
	return nil
}

var _ eventbus.ManyNotifier = (*Bus)(nil)

// Watch returns a wake-up channel for the task; see server.Bus.
func (b *Bus) Watch(taskID string) (<-chan struct{}, func()) { return b.reg.Add(taskID) }

// Close stops listening and closes the listening connection. The pool is
// the caller's.
func (b *Bus) Close() error {
	b.cancel()
	<-b.done
	return nil
}
