package taskstore

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// Messages remembers the client messages the server accepted, so that a
// resend with the same messageId returns the original result (spec
// §3.3.1, decision B14). The server core calls it when a message arrives,
// when a direct reply is known, and in its periodic cleanup
// (DeleteMessagesBefore). All methods may be called concurrently; PutMessage
// is the atomic check-and-insert that decides which of two concurrent resends
// runs.
type Messages interface {
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
}

// MessageRecord remembers the outcome of one client message.
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
	// TaskEvicted is set by a store that removed the task named by TaskID
	// to stay under a bound on the tasks it keeps (memstore's MaxTasks),
	// whatever the task's age. A resend of the message then answers that
	// the task is not found (spec §3.3.2 lets a purged task be not found)
	// and is never run again: the message was answered once (§3.3.1).
	// Durable stores remove tasks by age only and never set it.
	TaskEvicted bool
}
