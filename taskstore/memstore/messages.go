package memstore

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

func cloneRecord(r *taskstore.MessageRecord) *taskstore.MessageRecord {
	c := *r
	if r.Reply != nil {
		c.Reply = a2a.CloneMessage(r.Reply)
	}
	return &c
}

// PutMessage records r if its message id is new in the scope and returns
// (nil, nil); otherwise it returns a copy of the existing record.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := cloneRecord(r)
	// Keep the same precision as the durable stores.
	c.Created = time.UnixMilli(r.Created.UnixMilli()).UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[sc]
	if m == nil {
		m = make(map[string]*taskstore.MessageRecord)
		s.messages[sc] = m
	}
	if old, ok := m[c.MessageID]; ok {
		return cloneRecord(old), nil
	}
	m[c.MessageID] = c
	s.linkRecord(sc, c)
	return nil, nil
}

// GetMessage returns a copy of the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.messages[sc][messageID]
	if !ok {
		return nil, taskstore.ErrNotFound
	}
	return cloneRecord(r), nil
}

// SetMessageReply stores a copy of the reply on a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var c *a2a.Message
	if reply != nil {
		c = a2a.CloneMessage(reply)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.messages[sc][messageID]
	if !ok {
		return taskstore.ErrNotFound
	}
	r.Reply = c
	return nil
}

// DeleteMessagesBefore forgets the records created before the time.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := order.CeilMillis(before)
	n := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc, m := range s.messages {
		for id, r := range m {
			if r.Created.UnixMilli() < cut {
				delete(m, id)
				n++
			}
		}
		if len(m) == 0 {
			delete(s.messages, sc)
		}
	}
	return n, nil
}
