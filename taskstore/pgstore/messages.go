package pgstore

import (
	"context"
	"fmt"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

const (
	// The primary key (tenant, owner, message_id) decides between
	// concurrent inserts of one id, in any process: the second waits for
	// the first to commit and then inserts nothing.
	sqlInsertMessage = `INSERT INTO messages (tenant, owner, message_id, digest, task_id, reply, created_ms, runner)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`
	// A message is taken over when it has no reply, its task was never
	// made, and the replica that recorded it holds no lease: the row's
	// lock decides between two replicas that try at once (the second
	// finds a live runner, itself).
	sqlClaimMessage = `UPDATE messages m SET runner = $4 WHERE tenant = $1 AND owner = $2 AND message_id = $3
		AND reply IS NULL
		AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.tenant = m.tenant AND t.owner = m.owner AND t.id = m.task_id)
		AND NOT EXISTS (SELECT 1 FROM parley_replicas r WHERE r.epoch = m.runner AND r.lease_until > now())`
	sqlSetReply = `UPDATE messages SET reply = $1 WHERE tenant = $2 AND owner = $3 AND message_id = $4`
)

var sqlGetMessage = dialect.GetMessageSQL()

var sqlDeleteMessages = `DELETE FROM messages WHERE (tenant, owner, message_id) IN (SELECT tenant, owner, message_id
	FROM messages WHERE created_ms < $1` + sqlstore.LimitBatch + `)`

// putAttempts bounds PutMessage's retries when the record it collided
// with is removed before it can be read.
const putAttempts = 3

// PutMessage records r if its id is new in the scope and returns
// (nil, nil); otherwise it returns the existing record.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	reply, err := dialect.Reply(r.Reply)
	if err != nil {
		return nil, err
	}
	for range putAttempts {
		n, err := s.execGrouped(ctx, sc, sqlInsertMessage, sc.Tenant, sc.Owner, r.MessageID, r.Digest, r.TaskID,
			reply, r.Created.UnixMilli(), s.epoch.Load())
		if err != nil {
			return nil, wrap("put message", err)
		}
		if n == 1 {
			return nil, nil
		}
		old, err := s.GetMessage(ctx, sc, r.MessageID)
		if err != taskstore.ErrNotFound {
			return old, err
		}
		// Removed (DeleteMessagesBefore) between the two statements:
		// try the insert again.
	}
	return nil, wrap("put message", fmt.Errorf("message %q: inserted and deleted concurrently too often", r.MessageID))
}

// GetMessage returns the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return dialect.ScanMessage(s.pool.QueryRow(ctx, sqlGetMessage, sc.Tenant, sc.Owner, messageID), messageID)
}

// SetMessageReply stores the direct reply of a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	data, err := dialect.Reply(reply)
	if err != nil {
		return err
	}
	n, err := s.execGrouped(ctx, sc, sqlSetReply, data, sc.Tenant, sc.Owner, messageID)
	return dialect.Updated("set message reply", n, err)
}

// DeleteMessagesBefore forgets the records created before the time, in
// batches.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	return s.deleteBefore(ctx, "delete messages", sqlDeleteMessages, before)
}

// ClaimMessage takes over, for this replica, a recorded message whose task
// was never made and whose recording replica holds no lease (it died
// before the agent's first update): true when this call took it, and the
// caller then runs the message as the task the record names. Only one
// replica's claim succeeds.
func (s *Store) ClaimMessage(ctx context.Context, sc taskstore.Scope, messageID string) (bool, error) {
	tag, err := s.pool.Exec(ctx, sqlClaimMessage, sc.Tenant, sc.Owner, messageID, s.epoch.Load())
	if err != nil {
		return false, wrap("claim message", err)
	}
	return tag.RowsAffected() == 1, nil
}
