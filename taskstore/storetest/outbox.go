package storetest

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// outboxChecks are the tests of the push outbox.
var outboxChecks = []check[OutboxStore]{
	{"PushOutbox", testPushOutbox},
	{"PushOutboxLifecycle", testPushOutboxLifecycle},
	{"PushOutboxAtomicCreate", testPushOutboxAtomicCreate},
}

// outboxFixture is what fillOutbox queues: task o1 has the configurations
// inline (stored with the task, registered over v0.3), b and c, and events created (seq 1) and
// working (seq 2) are queued for inline; queued is its queue.
type outboxFixture struct {
	o1               *a2a.Task
	created, working *a2a.StreamResponse
	inline           *taskstore.PushConfig
	queued           []*taskstore.Notification
}

// testPushOutbox: what the task writes queue, in what order, and how rows
// are read and acknowledged.
func testPushOutbox(t *testing.T, s OutboxStore) {
	f := fillOutbox(t, s)
	checkOutboxReads(t, s, f)
	checkOutboxAcks(t, s, f)
}

// fillOutbox queues notifications with every kind of write and checks the
// queues they fill.
func fillOutbox(t *testing.T, s OutboxStore) outboxFixture {
	ctx := t.Context()
	o1 := task("o1", "c", submitted, at(1))
	created := snapshotEvent(o1)
	inline := hook("o1", "inline")
	inline.Version = "0.3"
	if err := s.CreateTask(ctx, scopeA, o1, taskstore.Event{Seq: 1, Response: created, Push: true, PushConfig: inline}); err != nil {
		t.Fatalf("CreateTask with an inline config: %v", err)
	}
	if got, err := s.GetPushConfig(ctx, scopeA, "o1", "inline"); err != nil {
		t.Fatalf("GetPushConfig of the inline config: %v", err)
	} else {
		wantConfig(t, "inline config stored by CreateTask", got, inline)
	}
	// A task without configurations queues nothing.
	if err := s.CreateTask(ctx, scopeA, task("o2", "c", submitted, at(1)), taskstore.Event{Seq: 1, Response: created, Push: true}); err != nil {
		t.Fatal(err)
	}
	wantQueue(t, s, target(scopeA, "o1", "inline"), inline, []uint64{1}, created)
	wantTargets(t, s, "", target(scopeA, "o1", "inline"))

	// A configuration put with Push gets its first event; one without gets
	// nothing yet.
	snap := snapshotEvent(o1)
	if err := s.PutPushConfig(ctx, scopeA, hook("o1", "b"), taskstore.Event{Seq: 1, Response: snap, Push: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, scopeA, hook("o1", "c"), taskstore.Event{Seq: 1, Response: snap}); err != nil {
		t.Fatal(err)
	}
	workingEv := statusEvent("o1", working)
	o1.Status.State = working
	if err := s.Append(ctx, scopeA, "o1", taskstore.Event{Seq: 2, Response: workingEv, Push: true}); err != nil {
		t.Fatal(err)
	}
	// Without Push, nothing is queued.
	if err := s.Append(ctx, scopeA, "o1", taskstore.Event{Seq: 3, Response: statusEvent("o1", inputRequired)}); err != nil {
		t.Fatal(err)
	}
	// Nor with a message, which is no event.
	if err := s.Append(ctx, scopeA, "o1", taskstore.Event{Message: message("m-o1", "o1", "c", "more"), Push: true}); err != nil {
		t.Fatal(err)
	}
	wantQueue(t, s, target(scopeA, "o1", "b"), hook("o1", "b"), []uint64{1, 2}, snap, workingEv)
	wantQueue(t, s, target(scopeA, "o1", "c"), hook("o1", "c"), []uint64{2}, workingEv)
	ns := wantQueue(t, s, target(scopeA, "o1", "inline"), inline, []uint64{1, 2}, created, workingEv)
	all := []taskstore.PushTarget{target(scopeA, "o1", "b"), target(scopeA, "o1", "c"), target(scopeA, "o1", "inline")}
	wantTargets(t, s, "", all...)
	wantTargets(t, s, "o1", all...)
	wantTargets(t, s, "o2")
	wantTargets(t, s, "nope")
	return outboxFixture{o1: o1, created: created, working: workingEv, inline: inline, queued: ns}
}

// checkOutboxReads: PendingPush honours its limit and returns copies, and
// another scope can neither read nor suspend a queue.
func checkOutboxReads(t *testing.T, s OutboxStore, f outboxFixture) {
	ctx := t.Context()
	inline, created, workingEv, ns := f.inline, f.created, f.working, f.queued
	// limit.
	if got, err := s.PendingPush(ctx, target(scopeA, "o1", "inline"), 1); err != nil || len(got) != 1 || got[0].ID != ns[0].ID {
		t.Errorf("PendingPush with limit 1 = %d rows, %v; want the oldest", len(got), err)
	}
	// Copies out.
	got := pending(t, s, target(scopeA, "o1", "inline"))
	got[0].Event.GetTask().Id = "changed"
	got[0].Config.Url = "changed"
	wantQueue(t, s, target(scopeA, "o1", "inline"), inline, []uint64{1, 2}, created, workingEv)

	// Another scope cannot read or suspend the queue.
	for _, sc := range others {
		if ns := pending(t, s, target(sc, "o1", "inline")); len(ns) != 0 {
			t.Errorf("PendingPush from scope %+v: %d rows, want none", sc, len(ns))
		}
		if err := s.SuspendPush(ctx, target(sc, "o1", "inline"), "x"); err != nil {
			t.Errorf("SuspendPush from another scope: %v", err)
		}
	}
	wantQueue(t, s, target(scopeA, "o1", "inline"), inline, []uint64{1, 2}, created, workingEv)
}

// checkOutboxAcks: DeletePush removes rows by id, ignores unknown ids, and
// ids keep increasing after deletions.
func checkOutboxAcks(t *testing.T, s OutboxStore, f outboxFixture) {
	ctx := t.Context()
	inline, workingEv, ns := f.inline, f.working, f.queued
	// Acknowledgement removes rows by id; unknown ids are ignored.
	if err := s.DeletePush(ctx, ns[0].ID, 1<<40); err != nil {
		t.Fatalf("DeletePush: %v", err)
	}
	if err := s.DeletePush(ctx, ns[0].ID); err != nil {
		t.Fatalf("DeletePush again: %v", err)
	}
	if err := s.DeletePush(ctx); err != nil {
		t.Fatalf("DeletePush of nothing: %v", err)
	}
	wantQueue(t, s, target(scopeA, "o1", "inline"), inline, []uint64{2}, workingEv)
	// Ids keep increasing after deletions.
	last := pending(t, s, target(scopeA, "o1", "c"))[0].ID
	if err := s.DeletePush(ctx, last); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, scopeA, "o1", taskstore.Event{Seq: 4, Response: workingEv, Push: true}); err != nil {
		t.Fatal(err)
	}
	if ns := pending(t, s, target(scopeA, "o1", "c")); len(ns) != 1 || ns[0].ID <= last {
		t.Errorf("a row queued after deletions: %+v; want one row with an id above %d", ns, last)
	}
}

// testPushOutboxLifecycle: delete, replace, suspend and task removal drop
// queued rows; a suspended configuration gets nothing until replaced.
func testPushOutboxLifecycle(t *testing.T, s OutboxStore) {
	ctx := t.Context()
	tk := task("l1", "c", working, at(1))
	if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: snapshotEvent(tk)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := s.PutPushConfig(ctx, scopeA, hook("l1", id), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	ev := func(seq uint64) {
		t.Helper()
		if err := s.Append(ctx, scopeA, "l1", taskstore.Event{Seq: seq, Response: statusEvent("l1", working), Push: true}); err != nil {
			t.Fatal(err)
		}
	}
	ev(2)
	ev(3)

	// Delete drops the rows; the same id put again starts empty.
	if err := s.DeletePushConfig(ctx, scopeA, "l1", "a"); err != nil {
		t.Fatal(err)
	}
	wantTargets(t, s, "l1", target(scopeA, "l1", "b"), target(scopeA, "l1", "c"))
	if err := s.PutPushConfig(ctx, scopeA, hook("l1", "a"), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if ns := pending(t, s, target(scopeA, "l1", "a")); len(ns) != 0 {
		t.Errorf("re-created config has %d old rows, want none", len(ns))
	}

	// Replace drops the rows too, and queues the new first event.
	repl := hook("l1", "b")
	repl.Url = "https://new.example/b"
	snap := snapshotEvent(tk)
	if err := s.PutPushConfig(ctx, scopeA, repl, taskstore.Event{Seq: 3, Response: snap, Push: true}); err != nil {
		t.Fatal(err)
	}
	wantQueue(t, s, target(scopeA, "l1", "b"), repl, []uint64{3}, snap)

	// Suspend drops the rows and stops queueing, for that config only.
	if err := s.SuspendPush(ctx, target(scopeA, "l1", "c"), "receiver answered 500 ten times"); err != nil {
		t.Fatalf("SuspendPush: %v", err)
	}
	if err := s.SuspendPush(ctx, target(scopeA, "l1", "missing"), "x"); err != nil {
		t.Errorf("SuspendPush of a missing config: %v, want nil", err)
	}
	ev(4)
	if ns := pending(t, s, target(scopeA, "l1", "c")); len(ns) != 0 {
		t.Errorf("suspended config has %d rows, want none", len(ns))
	}
	wantQueue(t, s, target(scopeA, "l1", "a"), hook("l1", "a"), []uint64{4}, statusEvent("l1", working))
	if err := s.PutPushConfig(ctx, scopeA, hook("l1", "c"), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	ev(5)
	wantQueue(t, s, target(scopeA, "l1", "c"), hook("l1", "c"), []uint64{5}, statusEvent("l1", working))

	// Removing the task removes everything queued for it.
	if err := s.Append(ctx, scopeA, "l1", taskstore.Event{Seq: 6, Response: statusEvent("l1", completed), Push: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteFinished(ctx, at(2)); err != nil || n != 1 {
		t.Fatalf("DeleteFinished = %d, %v; want 1", n, err)
	}
	wantTargets(t, s, "")
	mustCreate(t, s, scopeA, task("l1", "c", working, at(10)))
	if err := s.PutPushConfig(ctx, scopeA, hook("l1", "c"), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if ns := pending(t, s, target(scopeA, "l1", "c")); len(ns) != 0 {
		t.Errorf("config of a re-created task has %d rows, want none", len(ns))
	}
}

// testPushOutboxAtomicCreate: a CreateTask refused for a duplicate id
// stores neither the inline configuration nor any row.
func testPushOutboxAtomicCreate(t *testing.T, s OutboxStore) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("x1", "c", working, at(1)))
	err := s.CreateTask(ctx, scopeA, task("x1", "c", submitted, at(2)),
		taskstore.Event{Seq: 1, Response: statusEvent("x1", submitted), Push: true, PushConfig: hook("x1", "p")})
	if !errors.Is(err, taskstore.ErrExists) {
		t.Fatalf("CreateTask of an existing id = %v, want ErrExists", err)
	}
	if _, err := s.GetPushConfig(ctx, scopeA, "x1", "p"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("inline config of a refused CreateTask: %v, want ErrNotFound", err)
	}
	wantTargets(t, s, "")
}

// statusEvent returns a status update event of a task.
func statusEvent(taskID string, st a2a.TaskState) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: taskID, ContextId: "c", Status: &a2a.TaskStatus{State: st}}}}
}

// snapshotEvent returns a Task event holding tk.
func snapshotEvent(tk *a2a.Task) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(tk).(*a2a.Task)}}
}

// hook returns a configuration of the task with a token and credentials,
// registered over v1.0.
func hook(taskID, id string) *taskstore.PushConfig {
	return v10(&a2a.TaskPushNotificationConfig{Id: id, TaskId: taskID, Url: "https://hooks.example/" + id, Token: "tok-" + id,
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-" + id}})
}

// target names a configuration as an outbox target.
func target(sc taskstore.Scope, taskID, id string) taskstore.PushTarget {
	return taskstore.PushTarget{Scope: sc, TaskID: taskID, ConfigID: id}
}

// pending reads every queued notification of a target.
func pending(t *testing.T, s taskstore.Outbox, tg taskstore.PushTarget) []*taskstore.Notification {
	t.Helper()
	ns, err := s.PendingPush(t.Context(), tg, 1000)
	if err != nil {
		t.Fatalf("PendingPush(%+v): %v", tg, err)
	}
	return ns
}

// wantQueue checks a target's queue holds these events, in order, with
// these sequence numbers, ids increasing, and the configuration attached.
func wantQueue(t *testing.T, s taskstore.Outbox, tg taskstore.PushTarget, cfg *taskstore.PushConfig, seqs []uint64, events ...*a2a.StreamResponse) []*taskstore.Notification {
	t.Helper()
	ns := pending(t, s, tg)
	if len(ns) != len(events) {
		t.Fatalf("PendingPush(%s/%s) = %d notifications, want %d", tg.TaskID, tg.ConfigID, len(ns), len(events))
	}
	for i, n := range ns {
		if i > 0 && n.ID <= ns[i-1].ID {
			t.Errorf("PendingPush(%s/%s): id %d after %d, want increasing ids", tg.TaskID, tg.ConfigID, n.ID, ns[i-1].ID)
		}
		if n.Target != tg {
			t.Errorf("PendingPush(%s/%s)[%d].Target = %+v, want %+v", tg.TaskID, tg.ConfigID, i, n.Target, tg)
		}
		if n.Seq != seqs[i] {
			t.Errorf("PendingPush(%s/%s)[%d].Seq = %d, want %d", tg.TaskID, tg.ConfigID, i, n.Seq, seqs[i])
		}
		wantEqual(t, "queued event", n.Event, events[i])
		wantConfig(t, "configuration of a queued event", n.Config, cfg)
	}
	return ns
}

// wantTargets checks PushTargets(taskID) returns exactly want, in order.
func wantTargets(t *testing.T, s taskstore.Outbox, taskID string, want ...taskstore.PushTarget) {
	t.Helper()
	got, err := s.PushTargets(t.Context(), taskID)
	if err != nil {
		t.Fatalf("PushTargets(%q): %v", taskID, err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("PushTargets(%q):\n got  %+v\n want %+v", taskID, got, want)
	}
}
