package pgstore

// Deadlines: a database that stops answering without closing anything (a
// network partition that drops packets, a server frozen) must not hold a
// caller for longer than it will wait. Every call of the store is bounded
// by Options.Timeout, in four layers:
//
//   - every statement, batch and transaction the store runs goes through
//     pool, which gives it a context deadline of the timeout (a
//     transaction one deadline for all its statements); pgx then breaks
//     off the connection when it passes, and the call fails with an error
//     that passes (taskstore.ErrUnavailable);
//   - new connections: connect_timeout, unless the URL sets it;
//   - the server's side: statement_timeout, unless the URL sets it, so that
//     PostgreSQL stops a statement whose caller gave up (lock waits are
//     part of a statement's time);
//   - the socket: TCP keepalive probes after the timeout of silence, and on
//     Linux TCP_USER_TIMEOUT, so that a connection whose peer went silent
//     fails even while nothing waits on it, and the pool drops it.
//
// Open's own work (the migrations, which may wait for another process's,
// and the push key check) is bounded by Open's context only.

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTimeout is Options.Timeout's default.
const DefaultTimeout = 5 * time.Second

// configure sets the connection settings of the deadlines on cfg: the
// connect timeout, statement_timeout and the dialer's keepalive and user
// timeout, each unless the URL chose its own.
func configure(cfg *pgxpool.Config, timeout time.Duration) {
	cc := &cfg.ConnConfig.Config
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = timeout
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	if _, ok := cc.RuntimeParams["statement_timeout"]; !ok {
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: timeout, Interval: timeout / 3, Count: 3},
		Control:         userTimeout(timeout),
	}
	cc.DialFunc = d.DialContext
}

// noDeadline marks a context whose calls are bounded by it alone (Open's).
type noDeadline struct{}

// pool is the store's connection pool with the store's deadline on every
// call. Its methods are those of pgxpool.Pool that the store uses.
type pool struct {
	*pgxpool.Pool
	timeout time.Duration
}

// bound returns ctx with the store's deadline, unless ctx is Open's.
func (p *pool) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(noDeadline{}) != nil {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.timeout)
}

func (p *pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.Pool.Exec(ctx, sql, args...)
}

func (p *pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	ctx, cancel := p.bound(ctx)
	rows, err := p.Pool.Query(ctx, sql, args...)
	return boundQuery(rows, err, cancel)
}

func (p *pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	ctx, cancel := p.bound(ctx)
	return boundRow{row: p.Pool.QueryRow(ctx, sql, args...), cancel: cancel}
}

func (p *pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	ctx, cancel := p.bound(ctx)
	return boundBatch{BatchResults: p.Pool.SendBatch(ctx, b), cancel: cancel}
}

// inTx runs fn in a transaction with opts, committing when it returns nil,
// under one deadline for the whole transaction. In Open's transactions the
// server's statement_timeout is lifted too.
func (p *pool) inTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return pgx.BeginTxFunc(ctx, p.Pool, opts, func(tx pgx.Tx) error {
		deadline, ok := ctx.Deadline()
		if !ok {
			if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', '0', true)`); err != nil {
				return err
			}
			return fn(tx)
		}
		return fn(boundTx{Tx: tx, deadline: deadline})
	})
}

// boundQuery ends the deadline of a query that failed, or else with its
// rows.
func boundQuery(rows pgx.Rows, err error, cancel context.CancelFunc) (pgx.Rows, error) {
	if err != nil {
		cancel()
		return nil, err
	}
	return &boundRows{Rows: rows, cancel: cancel}, nil
}

// boundRows ends the deadline of a query with its rows.
type boundRows struct {
	pgx.Rows
	cancel context.CancelFunc
}

func (r *boundRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.cancel()
	return false
}

func (r *boundRows) Close() {
	r.Rows.Close()
	r.cancel()
}

// boundRow ends the deadline of a query of one row once it is read.
type boundRow struct {
	row    pgx.Row
	cancel context.CancelFunc
}

func (r boundRow) Scan(dest ...any) error {
	defer r.cancel()
	return r.row.Scan(dest...)
}

// boundBatch ends the deadline of a batch when it is closed.
type boundBatch struct {
	pgx.BatchResults
	cancel context.CancelFunc
}

func (b boundBatch) Close() error {
	defer b.cancel()
	return b.BatchResults.Close()
}

// boundTx gives the statements of a transaction its deadline, whatever
// context they are run with.
type boundTx struct {
	pgx.Tx
	deadline time.Time
}

func (t boundTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx, cancel := context.WithDeadline(ctx, t.deadline)
	defer cancel()
	return t.Tx.Exec(ctx, sql, args...)
}

func (t boundTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	ctx, cancel := context.WithDeadline(ctx, t.deadline)
	rows, err := t.Tx.Query(ctx, sql, args...)
	return boundQuery(rows, err, cancel)
}

func (t boundTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	ctx, cancel := context.WithDeadline(ctx, t.deadline)
	return boundRow{row: t.Tx.QueryRow(ctx, sql, args...), cancel: cancel}
}

func (t boundTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	ctx, cancel := context.WithDeadline(ctx, t.deadline)
	return boundBatch{BatchResults: t.Tx.SendBatch(ctx, b), cancel: cancel}
}
