package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// The message records (taskstore.Messages) have a bound of their own:
// the store keeps at most Options.MaxMessages of them, and the one that
// would pass it makes the oldest go, in the order they were recorded. A
// resend of a message whose record went is run as a new message, as one
// whose idempotency window has passed (spec §3.3.1: SendMessage MAY be
// idempotent); at the default bound that takes 100,000 newer messages.
// Without it, an agent that answers with messages (direct replies, which
// make no task for MaxTasks to count) would grow the store by a record per
// message for the whole idempotency window, and so would the records that
// outlive their evicted tasks (TaskEvicted). The bound is not MaxTasks
// itself: those records must outlive their tasks.
//
// A record is kept small (some 360 bytes with a direct reply): the reply
// encoded (a decoded Message is some ten objects), the time in
// milliseconds, and the message id copied: the request decoder makes
// short strings in shared blocks (a2a's JSON arena), and the id as given
// would keep its request's block alive.

// record is the store's form of a taskstore.MessageRecord.
type record struct {
	in      *scopeRecords // the scope's records, nil once the record is removed
	id      string
	digest  string
	taskID  string
	reply   []byte // the direct reply, protobuf binary; nil for none
	created int64  // milliseconds since the epoch
	evicted bool   // MessageRecord.TaskEvicted
}

// scopeRecords are the records of one scope, by message id.
type scopeRecords struct {
	scope taskstore.Scope
	byID  map[string]*record
}

// export returns r as a MessageRecord of the caller's.
func (r *record) export() (*taskstore.MessageRecord, error) {
	out := &taskstore.MessageRecord{MessageID: r.id, Digest: r.digest, TaskID: r.taskID,
		Created: time.UnixMilli(r.created).UTC(), TaskEvicted: r.evicted}
	if r.reply != nil {
		out.Reply = new(a2a.Message)
		if err := proto.Unmarshal(r.reply, out.Reply); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// encodeReply encodes a direct reply for a record; nil stays nil.
func encodeReply(m *a2a.Message) ([]byte, error) {
	if m == nil {
		return nil, nil
	}
	b, err := proto.Marshal(m)
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// PutMessage records r if its message id is new in the scope and returns
// (nil, nil); otherwise it returns a copy of the existing record. A new
// record that passes the bound removes the oldest.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reply, err := encodeReply(r.Reply)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.messages[sc]
	if in == nil {
		in = &scopeRecords{scope: taskstore.Scope{Tenant: strings.Clone(sc.Tenant), Owner: strings.Clone(sc.Owner)},
			byID: make(map[string]*record)}
		s.messages[sc] = in
	}
	if old, ok := in.byID[r.MessageID]; ok {
		return old.export()
	}
	// Kept at the durable stores' precision.
	c := &record{in: in, id: strings.Clone(r.MessageID), digest: r.Digest, taskID: r.TaskID, reply: reply,
		created: r.Created.UnixMilli(), evicted: r.TaskEvicted}
	in.byID[c.id] = c
	s.records = append(s.records, c)
	s.linkRecord(sc, c)
	for s.maxRecords > 0 && len(s.records) > s.maxRecords {
		s.removeRecord(s.records[0])
		s.records[0] = nil
		s.records = s.records[1:]
	}
	return nil, nil
}

// removeRecord takes r out of its scope's records (but not out of
// s.records). Callers hold the write lock.
func (s *Store) removeRecord(r *record) {
	delete(r.in.byID, r.id)
	if len(r.in.byID) == 0 && s.messages[r.in.scope] == r.in {
		delete(s.messages, r.in.scope)
	}
	r.in = nil
}

// GetMessage returns a copy of the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	in := s.messages[sc]
	if in == nil || in.byID[messageID] == nil {
		return nil, taskstore.ErrNotFound
	}
	return in.byID[messageID].export()
}

// SetMessageReply stores a copy of the reply on a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := encodeReply(reply)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.messages[sc]
	if in == nil || in.byID[messageID] == nil {
		return taskstore.ErrNotFound
	}
	in.byID[messageID].reply = b
	return nil
}

// DeleteMessagesBefore forgets the records created before the time.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := order.CeilMillis(before)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.records)
	s.records = slices.DeleteFunc(s.records, func(r *record) bool {
		if r.created >= cut {
			return false
		}
		s.removeRecord(r)
		return true
	})
	return n - len(s.records), nil
}
