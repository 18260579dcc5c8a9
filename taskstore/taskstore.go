// Package taskstore defines where Parley keeps its state: tasks, push
// notification configurations, the push outbox and the message records
// used for idempotent resends. It holds the interfaces and the value types
// only; package memstore and package sqlitestore implement them.
//
// The interfaces are split by role, so that code names only what it uses:
// Tasks, PushConfigs, Outbox and Messages. Store embeds all four, plus
// Close, and is what the server takes.
//
// A store never decides access by itself. The server core decides who may
// see what before it calls a store, and passes the caller's Scope (tenant and
// owner) down as a filter that every scoped method must apply. A store that
// forgets the filter fails the conformance suite in package
// taskstore/storetest, which every implementation, including a user's own,
// should run against itself.
//
// The push outbox lives in the store so that it shares the task writes'
// atomicity: a write that records a task event with Event.Push also
// queues the event for each active push configuration of the task, in the
// same transaction, and the push sender (package push) drains the queue.
// A crash therefore cannot record an event and lose its notifications.
//
// Values passed to and returned from a store are owned by the caller: an
// implementation must copy what it keeps and return copies, so a caller may
// modify a returned task freely. Stream events are the exception: an event
// (an *a2a.StreamResponse and everything it points to) is immutable once
// made, so the event given to CreateTask or Append, the one published to
// subscribers and the ones Events returns may be the same value, shared
// without copies; nobody modifies an event after handing it over. Every method of every role may be called
// concurrently with any other.
package taskstore

import (
	"context"
	"errors"

	"parley.dev/parley/a2a"
)

// ErrNotFound is returned when no record matches the id within the scope.
var ErrNotFound = errors.New("taskstore: not found")

// ErrExists is returned by CreateTask when the id is already taken
// (in any scope: task ids are unique across the whole store).
var ErrExists = errors.New("taskstore: already exists")

// Scope is the access boundary of one caller: every read and write is
// limited to records whose tenant and owner equal these values exactly.
// The empty owner is the shared scope used when authentication is off.
type Scope struct {
	Tenant string
	Owner  string
}

// Store keeps tasks, push configurations, the push outbox and message
// records: every role in one value, as the server needs it. All methods
// may be called concurrently.
type Store interface {
	Tasks
	PushConfigs
	Outbox
	Messages

	// Close releases the store's resources.
	Close() error
}

// WriteProber is a Store that can check it is able to write, as its
// writes do (a transaction that commits, synced as they are): a readiness
// check that only reads would miss a full disk. A store without it is
// checked with a read.
type WriteProber interface {
	ProbeWrite(ctx context.Context) error
}

// ErrPruned is returned by Events when the events asked for are no longer
// kept (the resume window passed); the caller starts from a snapshot.
var ErrPruned = errors.New("taskstore: events pruned")

// ErrSeq is returned by Append when the event's sequence number does not
// follow the task's last one: another writer got there first.
var ErrSeq = errors.New("taskstore: event out of sequence")

// ErrFenced is returned by the writes of a store that several processes
// share when this process's lease on it lapsed: the others may have taken
// over its tasks (ended them FAILED), so it may write them no more.
var ErrFenced = errors.New("taskstore: this replica's lease lapsed: its writes are refused")

// ErrUnavailable matches (with errors.Is) a store failure that passes: the
// store could not read or write now but may soon, and the call can be
// repeated as it is — a full disk, an I/O error, a database that refuses
// or lost the connection, a lock or serialization conflict the store's own
// retries did not resolve, a lapsed lease (ErrFenced), a store closed
// under a call. Each store decides which of its failures are such
// (Unavailable marks them); any other failure is a bug or damage and
// stays an internal error.
//
// ErrUnavailable is an *a2a.Error of code CodeUnavailable, so the server
// answers a call that met such a failure with UnavailableError (HTTP 503
// with Retry-After, gRPC UNAVAILABLE with RetryInfo; spec §3.3.2 files it
// under system errors) without knowing the store: a2a.Internal and
// a2a.AsError turn a chain holding it into that error, with the chain
// kept as the cause for logs. Its message is all a caller is told.
var ErrUnavailable error = &a2a.Error{Code: a2a.CodeUnavailable, Message: "the task store is unavailable; retry later"}

// Unavailable returns err marked as a store failure that passes:
// errors.Is(result, ErrUnavailable) holds, and so does errors.Is (and
// errors.As) of everything err's chain matches; its text is err's. nil
// and errors already marked are returned as they are.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return unavailable{err}
}

// unavailable is an error marked by Unavailable.
type unavailable struct{ err error }

func (u unavailable) Error() string   { return u.err.Error() }
func (u unavailable) Unwrap() []error { return []error{u.err, ErrUnavailable} }
