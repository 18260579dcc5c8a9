package sqlitestore

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// prepareMessages prepares the statements of the message records role.
func (s *Store) prepareMessages(p *preparer) {
	s.insertMessage = p.writer(`INSERT INTO messages (tenant, owner, message_id, digest, task_id, reply, created_ms)
		VALUES (?, ?, ?, ?, ?, ` + replyParam + `, ?) ON CONFLICT DO NOTHING`)
	s.getMessage = p.reader(dialect.GetMessageSQL())
	s.getMessageW = p.writer(dialect.GetMessageSQL())
	s.setReply = p.writer(`UPDATE messages SET reply = ` + replyParam + ` WHERE tenant = ? AND owner = ? AND message_id = ?`)
	s.deleteMessages = p.writer(`DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages
		WHERE created_ms < ?` + sqlstore.LimitBatch + `)`)
}

// replyParam takes two arguments, whether there is a reply and its
// encoding. The driver binds an empty []byte as NULL, so an empty reply
// message is turned back into an empty blob here, apart from no reply.
const replyParam = `CASE WHEN ? THEN coalesce(?, x'') END`

// PutMessage records r if its id is new in the scope and returns
// (nil, nil); otherwise it returns the existing record. The check and the
// insert are one transaction.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	reply, err := dialect.Reply(r.Reply)
	if err != nil {
		return nil, err
	}
	var old *taskstore.MessageRecord
	var opErr error // already wrapped
	err = s.write(ctx, func(w *wtx) error {
		old, opErr = nil, nil
		n, err := affected(w.exec(ctx, s.insertMessage, sc.Tenant, sc.Owner, r.MessageID,
			r.Digest, r.TaskID, r.Reply != nil, reply, r.Created.UnixMilli()))
		if err != nil {
			opErr = wrap("put message", err)
		} else if n == 0 {
			// Read the existing record on the writer's own connection,
			// inside the transaction, so that no cleanup can slip in
			// between.
			old, opErr = dialect.ScanMessage(w.queryRow(s.getMessageW, sc.Tenant, sc.Owner, r.MessageID), r.MessageID)
		}
		return opErr
	})
	if opErr != nil {
		return nil, opErr
	}
	if err != nil {
		return nil, wrap("put message", err)
	}
	return old, nil
}

// GetMessage returns the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return dialect.ScanMessage(s.getMessage.QueryRowContext(ctx, sc.Tenant, sc.Owner, messageID), messageID)
}

// SetMessageReply stores the direct reply of a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	data, err := dialect.Reply(reply)
	if err != nil {
		return err
	}
	var n int64
	err = s.write(ctx, func(w *wtx) (err error) {
		n, err = affected(w.exec(ctx, s.setReply, reply != nil, data, sc.Tenant, sc.Owner, messageID))
		return err
	})
	return dialect.Updated("set message reply", n, err)
}

// DeleteMessagesBefore forgets the records created before the time, in
// batches.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	return s.deleteBefore(ctx, "delete messages", s.deleteMessages, before)
}
