package sqlstore

import (
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// GetMessageSQL reads a message record by its key, in the columns that
// ScanMessage reads.
func (d *Dialect) GetMessageSQL() string {
	return d.Bind(`SELECT digest, task_id, reply IS NOT NULL, reply, created_ms FROM messages
		WHERE tenant = ? AND owner = ? AND message_id = ?`)
}

// ScanMessage reads the record of the message id from a row of
// GetMessageSQL: taskstore.ErrNotFound without one.
func (d *Dialect) ScanMessage(row Row, id string) (*taskstore.MessageRecord, error) {
	r := &taskstore.MessageRecord{MessageID: id}
	var reply []byte
	var hasReply bool
	var created int64
	err := row.Scan(&r.Digest, &r.TaskID, &hasReply, &reply, &created)
	if d.IsNoRows(err) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, d.Wrap("get message", err)
	}
	r.Created = time.UnixMilli(created).UTC()
	if hasReply {
		r.Reply = new(a2a.Message)
		if err := proto.Unmarshal(reply, r.Reply); err != nil {
			return nil, d.Wrap("decode message reply", err)
		}
	}
	return r, nil
}

// Reply encodes a message's direct reply, nil for none.
func (d *Dialect) Reply(m *a2a.Message) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	return d.Marshal(m)
}
