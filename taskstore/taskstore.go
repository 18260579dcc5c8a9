// Package taskstore defines where Parley keeps tasks, push notification
// configurations, the push outbox and the message ids used for idempotent
// resends.
//
// A Store never decides access by itself. The server core decides who may
// see what before it calls a store, and passes the caller's Scope (tenant and
// owner) down as a filter that every method must apply. A store that forgets
// the filter fails the conformance suite in package taskstore/storetest, which
// every implementation, including a user's own, should run against itself.
//
// The push outbox lives in the store so that it shares the task writes'
// atomicity: a write that records a task event with Event.Push also
// queues the event for each active push configuration of the task, in the
// same transaction, and the push sender (package push) drains the queue.
// A crash therefore cannot record an event and lose its notifications.
//
// Values passed to and returned from a Store are owned by the caller: an
// implementation must copy what it keeps and return copies, so a caller may
// modify a returned task freely. All methods may be called concurrently.
package taskstore

import (
	"context"
	"errors"
	"time"

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

// Cursor is a position in the ListTasks order (status timestamp descending,
// then id descending). A page starting after a cursor holds only tasks that
// sort strictly after it.
type Cursor struct {
	Time time.Time
	ID   string
}

// ListQuery selects one page of tasks within a scope.
type ListQuery struct {
	// ContextID keeps only tasks of this context when non-empty.
	ContextID string
	// State keeps only tasks in this state when not TASK_STATE_UNSPECIFIED.
	State a2a.TaskState
	// Since keeps only tasks whose status timestamp is at or after it
	// (inclusive, brief §2.7 statusTimestampAfter) when non-zero.
	Since time.Time
	// After starts the page strictly after this position when non-nil.
	After *Cursor
	// Limit is the page size; it is always at least 1.
	Limit int
}

// ListResult is one page of tasks.
type ListResult struct {
	// Tasks in order: status timestamp descending, then id descending.
	Tasks []*a2a.Task
	// Total counts every task matching the filters (ignoring After and Limit).
	Total int
	// More reports whether tasks exist beyond this page.
	More bool
}

// Event is the change a write records: the task's event sequence number
// after the change and the event sent to the task's subscribers. The stored
// sequence number never decreases: a zero Seq (a change that produced no
// event, such as a client message appended to the history) keeps it.
type Event struct {
	Seq      uint64
	Response *a2a.StreamResponse
	// Push queues Response in the push outbox, in the same atomic write:
	// CreateTask and UpdateTask queue it once for every active (not
	// suspended) push configuration of the task, PutPushConfig once for
	// the configuration it writes. The server sets it only when push
	// delivery is on, so a store never fills an outbox nobody drains.
	Push bool
	// PushConfig, on CreateTask only, is a push configuration stored with
	// the new task in the same write (SendMessage's inline configuration),
	// so it is active for, and receives, the creation event.
	PushConfig *a2a.TaskPushNotificationConfig
}

// PushTarget names one push configuration as a destination of the outbox.
type PushTarget struct {
	Scope    Scope
	TaskID   string
	ConfigID string
}

// Notification is one queued push notification: a task event waiting to be
// posted to one configuration.
type Notification struct {
	// ID identifies the row in the store. IDs increase in the order rows
	// are queued and are never reused.
	ID     int64
	Target PushTarget
	// Config is the configuration as stored when the row was read.
	Config *a2a.TaskPushNotificationConfig
	// Seq is the task event's sequence number (for a snapshot queued by
	// PutPushConfig, that of the last event the snapshot includes).
	Seq   uint64
	Event *a2a.StreamResponse
}

// ScopedTask is a task together with the scope that owns it.
type ScopedTask struct {
	Scope Scope
	Task  *a2a.Task
}

// MessageRecord remembers the outcome of one client message, so that a
// resend with the same messageId returns the original result (DESIGN B14).
type MessageRecord struct {
	// MessageID is the client's messageId.
	MessageID string
	// Digest identifies the message content; a resend with the same id and
	// a different digest is refused.
	Digest string
	// TaskID is the task the message created or continued, if any.
	TaskID string
	// Reply is the agent's direct Message reply, when there was no task.
	Reply *a2a.Message
	// Created is when the message was first accepted.
	Created time.Time
}

// Store keeps tasks, push configurations and message records.
type Store interface {
	// CreateTask stores a new task and the event that created it. The id
	// must not exist in any scope.
	CreateTask(ctx context.Context, s Scope, t *a2a.Task, ev Event) error
	// UpdateTask replaces a stored task with the same id in the scope and
	// records the event that changed it, in one atomic write.
	UpdateTask(ctx context.Context, s Scope, t *a2a.Task, ev Event) error
	// GetTask returns the task with the id in the scope, or ErrNotFound.
	GetTask(ctx context.Context, s Scope, id string) (*a2a.Task, error)
	// LastSeq returns the sequence number of the task's last recorded
	// event, or ErrNotFound. Sequence numbers survive restarts, so stream
	// event ids keep increasing (the ground for lossless resume).
	LastSeq(ctx context.Context, s Scope, id string) (uint64, error)
	// ListTasks returns one page of the scope's tasks. Implementations must
	// use an index on the sort key, not scan every task, to find a page.
	ListTasks(ctx context.Context, s Scope, q ListQuery) (ListResult, error)
	// ListActive returns every task, in all scopes, whose state is
	// SUBMITTED or WORKING. The server uses it at start-up to find tasks
	// whose execution was lost in a crash.
	ListActive(ctx context.Context) ([]ScopedTask, error)
	// DeleteFinished removes tasks in a terminal state whose status
	// timestamp is before the given time, with their push configurations.
	// It returns how many tasks were removed.
	DeleteFinished(ctx context.Context, before time.Time) (int, error)

	// PutPushConfig creates or replaces the configuration with the same
	// task id and config id. The task must exist in the scope. Replacing a
	// configuration drops its queued notifications and lifts a suspension.
	// With ev.Push set, ev.Response is queued for this configuration, as
	// its first notification, in the same write.
	PutPushConfig(ctx context.Context, s Scope, c *a2a.TaskPushNotificationConfig, ev Event) error
	// GetPushConfig returns one configuration, or ErrNotFound.
	GetPushConfig(ctx context.Context, s Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error)
	// ListPushConfigs returns a task's configurations ordered by id.
	ListPushConfigs(ctx context.Context, s Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error)
	// DeletePushConfig removes one configuration and its queued
	// notifications; removing a missing one is not an error.
	DeletePushConfig(ctx context.Context, s Scope, taskID, id string) error

	// The push outbox. Rows are queued by the task writes above (see
	// Event.Push) and removed by DeletePush once delivered, by
	// SuspendPush, and with their configuration or task. Only the push
	// sender calls these methods; they look across scopes.

	// PushTargets returns the configurations that have queued
	// notifications, ordered by task id and config id: those of one task
	// when taskID is not empty, otherwise all of them.
	PushTargets(ctx context.Context, taskID string) ([]PushTarget, error)
	// PendingPush returns up to limit of a configuration's queued
	// notifications, oldest first. A target that does not match a stored
	// configuration exactly (scope included) has none.
	PendingPush(ctx context.Context, t PushTarget, limit int) ([]*Notification, error)
	// DeletePush removes notifications by id; missing ids are ignored.
	DeletePush(ctx context.Context, ids ...int64) error
	// SuspendPush marks a configuration suspended, recording why: its
	// queued notifications are dropped and no more are queued for it
	// until PutPushConfig replaces it. A missing configuration is not an
	// error.
	SuspendPush(ctx context.Context, t PushTarget, reason string) error

	// PutMessage records a message if its id is new in the scope and
	// returns (nil, nil). If a record exists it is returned unchanged.
	PutMessage(ctx context.Context, s Scope, r *MessageRecord) (*MessageRecord, error)
	// GetMessage returns the record of a message id in the scope, or
	// ErrNotFound.
	GetMessage(ctx context.Context, s Scope, messageID string) (*MessageRecord, error)
	// SetMessageReply stores the direct reply of a recorded message.
	SetMessageReply(ctx context.Context, s Scope, messageID string, reply *a2a.Message) error
	// DeleteMessagesBefore forgets message records created before the time.
	DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error)

	// Close releases the store's resources.
	Close() error
}
