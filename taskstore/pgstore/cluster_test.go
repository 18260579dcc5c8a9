package pgstore

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestLeaseFence: a replica whose lease lapsed has its writes refused
// (ErrFenced) and its WORKING task listed as an orphan by another
// replica; Renew then reports the loss and joins again under a new epoch,
// whose writes go through.
func TestLeaseFence(t *testing.T) {
	a, b := openPair(t)
	ra, err := a.Join(t.Context(), "a", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Join(t.Context(), "b", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tk := newTask("t1", 0)
	if err := a.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	if o, err := rb.Orphans(t.Context()); err != nil || len(o) != 0 {
		t.Fatalf("orphans while a's lease holds: %v, %v", o, err)
	}
	time.Sleep(400 * time.Millisecond) // a's lease lapses
	o, err := rb.Orphans(t.Context())
	if err != nil || len(o) != 1 || o[0].Task.Id != "t1" || o[0].Scope != scope {
		t.Fatalf("orphans after a's lease lapsed: %v, %v; want t1", o, err)
	}
	if err := a.Append(t.Context(), scope, "t1", status("t1", 2, a2a.TaskState_TASK_STATE_COMPLETED)); !errors.Is(err, taskstore.ErrFenced) {
		t.Fatalf("append by a fenced replica: %v, want ErrFenced", err)
	}
	tk2 := newTask("t2", 0)
	if err := a.CreateTask(t.Context(), scope, tk2, snapshot(tk2)); !errors.Is(err, taskstore.ErrFenced) {
		t.Fatalf("create by a fenced replica: %v, want ErrFenced", err)
	}
	// b ends the orphan; a comes back under a new epoch.
	if err := b.Append(t.Context(), scope, "t1", status("t1", 2, a2a.TaskState_TASK_STATE_FAILED)); err != nil {
		t.Fatal(err)
	}
	old := ra.Epoch()
	lost, err := ra.Renew(t.Context())
	if err != nil || !lost || ra.Epoch() == old {
		t.Fatalf("Renew after the lapse: lost %v, err %v, epoch %d → %d", lost, err, old, ra.Epoch())
	}
	if err := a.Append(t.Context(), scope, "t1", status("t1", 2, a2a.TaskState_TASK_STATE_COMPLETED)); !errors.Is(err, taskstore.ErrSeq) {
		t.Fatalf("append of a taken sequence number: %v, want ErrSeq", err)
	}
	if err := a.CreateTask(t.Context(), scope, tk2, snapshot(tk2)); err != nil {
		t.Fatalf("create under the new epoch: %v", err)
	}
	if err := ra.Leave(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(t.Context(), scope, "t2", status("t2", 2, a2a.TaskState_TASK_STATE_COMPLETED)); !errors.Is(err, taskstore.ErrFenced) {
		t.Fatalf("append after Leave: %v, want ErrFenced", err)
	}
	if o, err := rb.Orphans(t.Context()); err != nil || len(o) != 1 || o[0].Task.Id != "t2" {
		t.Fatalf("orphans after a left: %v, %v; want t2", o, err)
	}
}

// TestSharedKey: the first store to ask makes the key; the other gets the
// same.
func TestSharedKey(t *testing.T) {
	a, b := openPair(t)
	ka, err := a.SharedKey(t.Context(), "cursor", 32)
	if err != nil || len(ka) != 32 {
		t.Fatalf("%x, %v", ka, err)
	}
	kb, err := b.SharedKey(t.Context(), "cursor", 32)
	if err != nil || !bytes.Equal(ka, kb) {
		t.Fatalf("b's key %x, a's %x, %v", kb, ka, err)
	}
}

// TestClaimPush: one holder at a time per configuration; a lapsed claim
// goes to another; RenewPush tells a holder its claim was taken.
func TestClaimPush(t *testing.T) {
	a, b := openPair(t)
	cfg := &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskId: "t1", Id: "c1", Url: "https://example.com/hook"}}
	tk := newTask("t1", 0)
	ev := snapshot(tk)
	ev.PushConfig, ev.Push = cfg, true
	if err := a.CreateTask(t.Context(), scope, tk, ev); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 4; seq++ {
		e := status("t1", seq, a2a.TaskState_TASK_STATE_WORKING)
		e.Push = true
		if err := a.Append(t.Context(), scope, "t1", e); err != nil {
			t.Fatal(err)
		}
	}
	target := taskstore.PushTarget{Scope: scope, TaskID: "t1", ConfigID: "c1"}
	got, err := a.ClaimPush(t.Context(), "A", target, 2, 300*time.Millisecond)
	if err != nil || len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Fatalf("A's claim: %v, %v; want seq 1 and 2", got, err)
	}
	if other, err := b.ClaimPush(t.Context(), "B", target, 16, time.Minute); err != nil || len(other) != 0 {
		t.Fatalf("B's claim while A holds the target: %v, %v; want none", other, err)
	}
	if ok, err := a.RenewPush(t.Context(), "A", got[0].ID, 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("A's renewal: %v, %v", ok, err)
	}
	if err := a.DeletePush(t.Context(), got[0].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // A's claim lapses
	other, err := b.ClaimPush(t.Context(), "B", target, 16, time.Minute)
	if err != nil || len(other) != 3 || other[0].Seq != 2 {
		t.Fatalf("B's claim after A's lapsed: %v, %v; want seq 2 to 4", other, err)
	}
	if ok, err := a.RenewPush(t.Context(), "A", got[1].ID, time.Minute); ok || err != nil {
		t.Fatalf("A's renewal of a row B took: %v, %v; want false", ok, err)
	}
}

// TestClaimMessage: a message recorded by a replica that dies before its
// task is made is claimed by exactly one other replica once the lease
// lapsed; not while it holds, not when the task or a reply exists.
func TestClaimMessage(t *testing.T) {
	a, b := openPair(t)
	if _, err := a.Join(t.Context(), "a", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rb, err := b.Join(t.Context(), "b", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	put := func(id, task string, reply *a2a.Message) {
		t.Helper()
		if _, err := a.PutMessage(t.Context(), scope, &taskstore.MessageRecord{MessageID: id, Digest: "d", TaskID: task,
			Reply: reply, Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	put("orphan", "never-made", nil)
	put("made", "t-made", nil)
	put("replied", "t-replied", a2a.AgentMessage("hi"))
	tk := newTask("t-made", 0)
	if err := a.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	if ok, err := rb.ClaimMessage(t.Context(), scope, "orphan"); err != nil || ok {
		t.Fatalf("claim while its recorder's lease holds: %v %v", ok, err)
	}
	time.Sleep(400 * time.Millisecond) // a's lease lapses
	if ok, err := rb.ClaimMessage(t.Context(), scope, "orphan"); err != nil || !ok {
		t.Fatalf("claim after the lapse: %v %v, want taken", ok, err)
	}
	if ok, err := rb.ClaimMessage(t.Context(), scope, "orphan"); err != nil || ok {
		t.Fatalf("second claim: %v %v; the first claimer's lease holds", ok, err)
	}
	for _, id := range []string{"made", "replied", "unknown"} {
		if ok, err := rb.ClaimMessage(t.Context(), scope, id); err != nil || ok {
			t.Errorf("claim of %s: %v %v, want not taken", id, ok, err)
		}
	}
}
