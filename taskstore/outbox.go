package taskstore

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// Outbox is the push outbox: notifications waiting to be posted. Rows are
// queued by the task writes (see Event.Push) and removed by DeletePush once
// delivered, by SuspendPush, and with their configuration or task. Only
// the push sender (package push) calls these methods; unlike the other
// roles they look across scopes. All methods may be called concurrently.
type Outbox interface {
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
	// Config is the configuration as stored when the row was read, with
	// the version it was registered in.
	Config *PushConfig
	// Seq is the task event's sequence number (for a snapshot queued by
	// PutPushConfig, that of the last event the snapshot includes).
	Seq   uint64
	Event *a2a.StreamResponse
}

// OutboxClaims is what push senders in several processes need to share
// one outbox: a configuration's queued notifications are claimed by one
// holder at a time, for a lease, so that one delivery per configuration
// is in flight across every process and its order holds, and a holder
// that dies leaves its rows to another once the lease lapsed. A store
// that only one process uses need not implement it (package push then
// reads with PendingPush). All methods may be called concurrently.
type OutboxClaims interface {
	// ClaimPush claims for holder, until lease from now, up to limit of
	// the target's oldest queued notifications, and returns them, oldest
	// first, as PendingPush does. It returns none while another holder's
	// claim on any of the target's rows has not lapsed, or while another
	// ClaimPush of the target is running. Claiming again what the holder
	// already holds extends the lease.
	ClaimPush(ctx context.Context, holder string, t PushTarget, limit int, lease time.Duration) ([]*Notification, error)
	// RenewPush extends holder's claim on a notification to lease from
	// now. It reports false when the notification is gone or claimed by
	// another holder (whose delivery the caller must not duplicate).
	RenewPush(ctx context.Context, holder string, id int64, lease time.Duration) (bool, error)
}
