package memstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// TestMaxMessagesBound: the store keeps at most MaxMessages records, the
// newest, with their replies, whether they hold a direct reply or name a
// task, and in whatever scope; a resend of a kept one finds it and counts
// nothing; records removed by DeleteMessagesBefore make room.
func TestMaxMessagesBound(t *testing.T) {
	const bound = 10
	s := memstore.NewWith(&memstore.Options{MaxMessages: bound})
	ctx := t.Context()
	scopes := []taskstore.Scope{evictScope, {Tenant: "t", Owner: "p"}}
	reply := func(i int) *a2a.Message {
		return &a2a.Message{MessageId: fmt.Sprintf("r-%d", i), Role: a2a.Role_ROLE_AGENT,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: fmt.Sprintf("answer %d", i)}}}}
	}
	put := func(i int) {
		t.Helper()
		sc := scopes[i%2]
		r := &taskstore.MessageRecord{MessageID: fmt.Sprintf("m-%d", i), Digest: "d", TaskID: fmt.Sprintf("task-%d", i),
			Created: evictBase.Add(time.Duration(i) * time.Millisecond)}
		if old, err := s.PutMessage(ctx, sc, r); err != nil || old != nil {
			t.Fatalf("PutMessage(m-%d): %v, %v", i, old, err)
		}
		if i%3 != 0 { // the others name a task and have no reply
			if err := s.SetMessageReply(ctx, sc, r.MessageID, reply(i)); err != nil {
				t.Fatalf("SetMessageReply(m-%d): %v", i, err)
			}
		}
		// A resend finds the record and adds none.
		if old, err := s.PutMessage(ctx, sc, r); err != nil || old == nil {
			t.Fatalf("PutMessage(m-%d) again: %v, %v", i, old, err)
		}
	}
	// kept checks that exactly the records from..to-1 are kept, whole.
	kept := func(from, to int) {
		t.Helper()
		for i := range to + 3 {
			r, err := s.GetMessage(ctx, scopes[i%2], fmt.Sprintf("m-%d", i))
			switch {
			case i < from || i >= to:
				if !errors.Is(err, taskstore.ErrNotFound) {
					t.Errorf("record m-%d: %v, %v; want it gone", i, r, err)
				}
			case err != nil:
				t.Errorf("record m-%d: %v; want it kept", i, err)
			case i%3 != 0 && !proto.Equal(r.Reply, reply(i)):
				t.Errorf("record m-%d reply %v, want %v", i, r.Reply, reply(i))
			case i%3 == 0 && r.Reply != nil:
				t.Errorf("record m-%d reply %v, want none", i, r.Reply)
			case r.TaskID != fmt.Sprintf("task-%d", i) || !r.Created.Equal(evictBase.Add(time.Duration(i)*time.Millisecond)):
				t.Errorf("record m-%d: %+v", i, r)
			}
		}
	}
	for i := range 25 {
		put(i)
	}
	kept(25-bound, 25)
	// The oldest four kept go by age; four more records fit without
	// removing any other.
	n, err := s.DeleteMessagesBefore(ctx, evictBase.Add(19*time.Millisecond))
	if err != nil || n != 4 {
		t.Fatalf("DeleteMessagesBefore = %d, %v; want 4", n, err)
	}
	for i := 25; i < 29; i++ {
		put(i)
	}
	kept(19, 29)
	put(29)
	kept(20, 30)
}
