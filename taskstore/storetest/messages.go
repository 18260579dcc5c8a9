package storetest

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/taskstore"
)

// messageChecks are the tests of the message records role.
var messageChecks = []check[MessageStore]{
	{"Messages", testMessages},
	{"DeleteMessagesBefore", testDeleteMessages},
	{"MessageScope", testMessageScope},
	{"MessageCopiesInAndOut", testMessageCopies},
}

// testMessages: PutMessage records a new id once and then returns the
// record unchanged; GetMessage and SetMessageReply find it by id.
func testMessages(t *testing.T, s MessageStore) {
	ctx := t.Context()
	first := &taskstore.MessageRecord{MessageID: "m1", Digest: "d1", TaskID: "t1", Created: at(10)}
	if old := putA(t, s, first); old != nil {
		t.Fatalf("PutMessage of a new id returned %+v, want nil", old)
	}
	old := putA(t, s, &taskstore.MessageRecord{MessageID: "m1", Digest: "d2", TaskID: "t9", Created: at(20)})
	if old == nil {
		t.Fatal("PutMessage of a known id returned nil, want the first record")
	}
	if old.MessageID != "m1" || old.Digest != "d1" || old.TaskID != "t1" || !old.Created.Equal(at(10)) || old.Reply != nil {
		t.Errorf("existing record %+v, want the first one unchanged", old)
	}

	if old := putA(t, s, &taskstore.MessageRecord{MessageID: "m2", Digest: "d", Created: at(30)}); old != nil {
		t.Fatalf("PutMessage(m2) returned %+v, want nil", old)
	}
	reply := message("r", "", "ctx", "direct answer")
	if err := s.SetMessageReply(ctx, scopeA, "m2", reply); err != nil {
		t.Fatalf("SetMessageReply: %v", err)
	}
	old = putA(t, s, &taskstore.MessageRecord{MessageID: "m2", Digest: "other", Created: at(40)})
	if old == nil || old.Digest != "d" || !old.Created.Equal(at(30)) {
		t.Fatalf("record after SetMessageReply: %+v", old)
	}
	wantEqual(t, "stored reply", old.Reply, reply)
	got, err := s.GetMessage(ctx, scopeA, "m2")
	if err != nil {
		t.Fatalf("GetMessage: %v", err)
	}
	if got.MessageID != "m2" || got.Digest != "d" || !got.Created.Equal(at(30)) || got.TaskID != "" {
		t.Errorf("GetMessage = %+v", got)
	}
	wantEqual(t, "reply from GetMessage", got.Reply, reply)
	got.Digest = "changed"
	got.Reply.Parts = nil
	if again, _ := s.GetMessage(ctx, scopeA, "m2"); again == nil || again.Digest != "d" || !proto.Equal(again.Reply, reply) {
		t.Errorf("record after the caller changed a returned record: %+v", again)
	}
	if got, err := s.GetMessage(ctx, scopeA, "m1"); err != nil || got.Digest != "d1" || got.TaskID != "t1" || got.Reply != nil {
		t.Errorf("GetMessage(m1) = %+v, %v", got, err)
	}
	_, err = s.GetMessage(ctx, scopeA, "missing")
	wantErr(t, "GetMessage of an unknown id", err, taskstore.ErrNotFound)
	err = s.SetMessageReply(ctx, scopeA, "missing", reply)
	wantErr(t, "SetMessageReply of an unknown id", err, taskstore.ErrNotFound)
	if _, err := s.GetMessage(ctx, scopeA, "missing"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("SetMessageReply of an unknown id created a record (GetMessage error %v)", err)
	}
}

// testDeleteMessages: DeleteMessagesBefore forgets the records created
// before the cut, in every scope, and keeps the one created at it.
func testDeleteMessages(t *testing.T, s MessageStore) {
	ctx := t.Context()
	putA(t, s, &taskstore.MessageRecord{MessageID: "m1", Digest: "d1", TaskID: "t1", Created: at(10)})
	putA(t, s, &taskstore.MessageRecord{MessageID: "m2", Digest: "d", Created: at(30)})
	if err := s.SetMessageReply(ctx, scopeA, "m2", message("r", "", "ctx", "direct answer")); err != nil {
		t.Fatalf("SetMessageReply: %v", err)
	}
	if old := putA(t, s, &taskstore.MessageRecord{MessageID: "m3", Digest: "d", Created: at(50)}); old != nil {
		t.Fatalf("PutMessage(m3) returned %+v, want nil", old)
	}
	if _, err := s.PutMessage(ctx, scopeC, &taskstore.MessageRecord{MessageID: "mc", Digest: "d", Created: at(0)}); err != nil {
		t.Fatalf("PutMessage in scope C: %v", err)
	}
	// Created at(10) and at(0) are before at(30); at(30) is not.
	n, err := s.DeleteMessagesBefore(ctx, at(30))
	if err != nil || n != 2 {
		t.Errorf("DeleteMessagesBefore = %d, %v; want 2, nil", n, err)
	}
	if _, err := s.GetMessage(ctx, scopeA, "m1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("GetMessage of a deleted record: %v, want ErrNotFound", err)
	}
	if old := putA(t, s, &taskstore.MessageRecord{MessageID: "m1", Digest: "new", Created: at(60)}); old != nil {
		t.Errorf("m1 survived DeleteMessagesBefore: %+v", old)
	}
	if old := putA(t, s, &taskstore.MessageRecord{MessageID: "m2", Digest: "x", Created: at(60)}); old == nil || old.Digest != "d" {
		t.Errorf("m2 (created at the cutoff) was removed: %+v", old)
	}
	if old, _ := s.PutMessage(ctx, scopeC, &taskstore.MessageRecord{MessageID: "mc", Digest: "new", Created: at(60)}); old != nil {
		t.Errorf("scope C's old record survived DeleteMessagesBefore: %+v", old)
	}
}

// testMessageScope: message ids are per scope; no scope reads or sets
// the reply of another's record.
func testMessageScope(t *testing.T, s MessageStore) {
	ctx := t.Context()
	if old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m", Digest: "da", TaskID: "ta", Created: at(1)}); old != nil || err != nil {
		t.Fatalf("PutMessage in A = %v, %v", old, err)
	}
	for _, sc := range others {
		old, err := s.PutMessage(ctx, sc, &taskstore.MessageRecord{MessageID: "m", Digest: "d-" + sc.Owner + sc.Tenant, Created: at(2)})
		if err != nil || old != nil {
			t.Errorf("PutMessage in scope %+v of an id known only in A = %+v, %v; want nil, nil", sc, old, err)
		}
	}
	if _, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m-only-a", Digest: "d", Created: at(1)}); err != nil {
		t.Fatalf("PutMessage: %v", err)
	}
	for _, sc := range others {
		_, err := s.GetMessage(ctx, sc, "m-only-a")
		wantErr(t, fmt.Sprintf("GetMessage in scope %+v of A's id", sc), err, taskstore.ErrNotFound)
		if got, err := s.GetMessage(ctx, sc, "m"); err != nil || got.Digest != "d-"+sc.Owner+sc.Tenant {
			t.Errorf("GetMessage in scope %+v = %+v, %v; want its own record", sc, got, err)
		}
	}
	err := s.SetMessageReply(ctx, scopeB, "m-only-a", message("r", "", "", "x"))
	wantErr(t, "SetMessageReply of an id unknown in the scope", err, taskstore.ErrNotFound)
	if err := s.SetMessageReply(ctx, scopeB, "m", message("rb", "", "", "b's reply")); err != nil {
		t.Fatalf("SetMessageReply in B: %v", err)
	}
	old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "m", Digest: "zz", Created: at(3)})
	if err != nil || old == nil || old.Digest != "da" || old.TaskID != "ta" || old.Reply != nil {
		t.Errorf("A's record after other scopes used the same id: %+v, %v", old, err)
	}
}

// testMessageCopies: the store keeps copies of the records and replies it
// is given and returns copies.
func testMessageCopies(t *testing.T, s MessageStore) {
	ctx := t.Context()
	rec := &taskstore.MessageRecord{MessageID: "msg", Digest: "d1", TaskID: "c1",
		Reply: message("r", "", "", "reply"), Created: at(0)}
	if old, err := s.PutMessage(ctx, scopeA, rec); err != nil || old != nil {
		t.Fatalf("PutMessage of a new id = %v, %v; want nil, nil", old, err)
	}
	rec.Digest = "d2"
	rec.Reply.Parts[0] = text("changed")
	old, err := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if err != nil || old == nil {
		t.Fatalf("PutMessage of a known id = %v, %v; want the record", old, err)
	}
	if old.Digest != "d1" {
		t.Errorf("record digest %q after the caller changed the put record, want d1", old.Digest)
	}
	wantEqual(t, "record reply after the caller changed the put record", old.Reply, message("r", "", "", "reply"))
	old.Digest = "d4"
	old.Reply.MessageId = "changed"
	old2, _ := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if old2 == nil || old2.Digest != "d1" {
		t.Fatalf("record after the caller changed a returned record: %+v, want digest d1", old2)
	}
	wantEqual(t, "record reply after the caller changed a returned record", old2.Reply, message("r", "", "", "reply"))

	reply := message("r2", "", "", "second reply")
	if err := s.SetMessageReply(ctx, scopeA, "msg", reply); err != nil {
		t.Fatalf("SetMessageReply: %v", err)
	}
	reply.Parts = nil
	old3, _ := s.PutMessage(ctx, scopeA, &taskstore.MessageRecord{MessageID: "msg", Digest: "d3", Created: at(5)})
	if old3 == nil {
		t.Fatal("record vanished after SetMessageReply")
	}
	wantEqual(t, "reply after the caller changed the set reply", old3.Reply, message("r2", "", "", "second reply"))
}

// putA records r in scope A and returns the existing record, failing the
// test on an error.
func putA(t *testing.T, s taskstore.Messages, r *taskstore.MessageRecord) *taskstore.MessageRecord {
	t.Helper()
	old, err := s.PutMessage(t.Context(), scopeA, r)
	if err != nil {
		t.Fatalf("PutMessage(%q): %v", r.MessageID, err)
	}
	return old
}
