package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// prepareMessages prepares the statements of the message records role.
func (s *Store) prepareMessages(p *preparer) {
	s.insertMessage = p.writer(`INSERT INTO messages (tenant, owner, message_id, digest, task_id, reply, created_ms)
		VALUES (?, ?, ?, ?, ?, ` + replyParam + `, ?) ON CONFLICT DO NOTHING`)
	const getMessage = `SELECT digest, task_id, reply IS NOT NULL, reply, created_ms FROM messages
		WHERE tenant = ? AND owner = ? AND message_id = ?`
	s.getMessage = p.reader(getMessage)
	s.getMessageW = p.writer(getMessage)
	s.setReply = p.writer(`UPDATE messages SET reply = ` + replyParam + ` WHERE tenant = ? AND owner = ? AND message_id = ?`)
	s.deleteMessages = p.writer(`DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages
		WHERE created_ms < ? LIMIT ` + fmt.Sprint(deleteBatch) + `)`)
}

// replyParam takes two arguments, whether there is a reply and its
// encoding. The driver binds an empty []byte as NULL, so an empty reply
// message is turned back into an empty blob here, apart from no reply.
const replyParam = `CASE WHEN ? THEN coalesce(?, x'') END`

// PutMessage records r if its id is new in the scope and returns
// (nil, nil); otherwise it returns the existing record. The check and the
// insert are one transaction.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	var reply []byte
	if r.Reply != nil {
		var err error
		if reply, err = marshal(r.Reply); err != nil {
			return nil, err
		}
	}
	var old *taskstore.MessageRecord
	var opErr error // already wrapped
	err := s.write(ctx, func(w *wtx) error {
		old, opErr = nil, nil
		n, err := affected(w.exec(ctx, s.insertMessage, sc.Tenant, sc.Owner, r.MessageID,
			r.Digest, r.TaskID, r.Reply != nil, reply, r.Created.UnixMilli()))
		if err != nil {
			opErr = wrap("put message", err)
		} else if n == 0 {
			// Read the existing record on the writer's own connection,
			// inside the transaction, so that no cleanup can slip in
			// between.
			old, opErr = scanMessage(w.queryRow(s.getMessageW, sc.Tenant, sc.Owner, r.MessageID), r.MessageID)
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

// scanMessage reads one message record, or ErrNotFound.
func scanMessage(row *sql.Row, id string) (*taskstore.MessageRecord, error) {
	r := &taskstore.MessageRecord{MessageID: id}
	var reply []byte
	var hasReply bool
	var created int64
	err := row.Scan(&r.Digest, &r.TaskID, &hasReply, &reply, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get message", err)
	}
	r.Created = time.UnixMilli(created).UTC()
	if hasReply {
		r.Reply = new(a2a.Message)
		if err := proto.Unmarshal(reply, r.Reply); err != nil {
			return nil, wrap("decode message reply", err)
		}
	}
	return r, nil
}

// GetMessage returns the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return scanMessage(s.getMessage.QueryRowContext(ctx, sc.Tenant, sc.Owner, messageID), messageID)
}

// SetMessageReply stores the direct reply of a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	var data []byte
	if reply != nil {
		var err error
		if data, err = marshal(reply); err != nil {
			return err
		}
	}
	var n int64
	err := s.write(ctx, func(w *wtx) (err error) {
		n, err = affected(w.exec(ctx, s.setReply, reply != nil, data, sc.Tenant, sc.Owner, messageID))
		return err
	})
	if err != nil {
		return wrap("set message reply", err)
	}
	if n == 0 {
		return taskstore.ErrNotFound
	}
	return nil
}

// DeleteMessagesBefore forgets the records created before the time, in
// batches.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	n, err := deleteInBatches(ctx, s.deleteMessages, order.CeilMillis(before))
	if err != nil {
		return n, wrap("delete messages", err)
	}
	return n, nil
}
