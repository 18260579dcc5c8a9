package pgstore

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"parley.dev/parley/taskstore"
)

// transientCodes are the SQLSTATEs (PostgreSQL's error codes) of failures
// that pass, with nothing wrong with the statement or the data:
var transientCodes = map[string]bool{
	"40001": true, // serialization_failure: a conflict with a concurrent transaction
	"40P01": true, // deadlock_detected: PostgreSQL broke a lock cycle by failing this one
	"53000": true, // insufficient_resources
	"53100": true, // disk_full
	"53200": true, // out_of_memory
	"53300": true, // too_many_connections
	"55P03": true, // lock_not_available
	"57014": true, // query_canceled: statement_timeout (Options.Timeout) passed
	"57P01": true, // admin_shutdown: the server is shutting down
	"57P02": true, // crash_shutdown: another server process crashed
	"57P03": true, // cannot_connect_now: the server is starting up or in recovery
	"57P05": true, // idle_session_timeout
	"58000": true, // system_error: the operating system failed a call
	"58030": true, // io_error
	"25006": true, // read_only_sql_transaction: connected to a standby (a failover under way)
}

// transient reports whether err says PostgreSQL could not be reached or
// could not do the work now, while the same call may succeed later:
//
//   - an error PostgreSQL sent whose SQLSTATE is one of transientCodes,
//     or of class 08 (connection exception);
//   - no connection could be made (refused, reset, a timeout connecting,
//     DNS), unless the server refused it for a reason that does not pass
//     (bad credentials, an unknown database: a PostgreSQL error of
//     another class);
//   - the connection was lost or closed mid-way, or pgx reports the
//     statement was never sent (pgconn.SafeToRetry), or it timed out
//     (pgconn.Timeout);
//   - this replica's lease lapsed (taskstore.ErrFenced): another replica
//     may serve the call;
//   - the store was closed while the call waited.
//
// The store does not retry serialization failures and deadlocks itself
// (its group commit takes scope locks in one order, which makes them
// rare): the caller's retry is the retry.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errClosed) || errors.Is(err, taskstore.ErrFenced) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return transientCodes[pgErr.Code] || strings.HasPrefix(pgErr.Code, "08")
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var nerr net.Error
	return errors.As(err, &nerr)
}
