package storetest

import (
	"testing"
	"time"

	"parley.dev/parley/taskstore"
)

// claimChecks are the tests of taskstore.OutboxClaims, for the stores
// that implement it (skipped for the others: it is optional).
var claimChecks = []check[taskstore.Store]{
	{"PushClaims", testPushClaims},
}

// RunClaims runs the tests of taskstore.OutboxClaims on stores that
// implement it; open is called once per subtest, as for Run.
func RunClaims(t *testing.T, open func(t *testing.T) taskstore.Store) {
	runChecks(t, open, claimChecks)
}

// testPushClaims: one holder at a time per configuration, oldest rows
// first; claiming again extends; a lapsed claim goes to another holder,
// and the first learns it from RenewPush.
func testPushClaims(t *testing.T, store taskstore.Store) {
	s, ok := store.(taskstore.OutboxClaims)
	if !ok {
		t.Skip("the store does not implement taskstore.OutboxClaims (optional: one push sender per store)")
	}
	ctx := t.Context()
	const lease = 300 * time.Millisecond
	tk := task("k1", "c", submitted, at(1))
	if err := store.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: snapshotEvent(tk), Push: true, PushConfig: hook("k1", "h")}); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 4; seq++ {
		if err := store.Append(ctx, scopeA, "k1", taskstore.Event{Seq: seq, Response: statusEvent("k1", working), Push: true}); err != nil {
			t.Fatal(err)
		}
	}
	tg := target(scopeA, "k1", "h")
	seqs := func(ns []*taskstore.Notification) []uint64 {
		var out []uint64
		for _, n := range ns {
			out = append(out, n.Seq)
		}
		return out
	}
	want := func(what string, got []*taskstore.Notification, err error, seq ...uint64) {
		t.Helper()
		if err != nil || len(got) != len(seq) {
			t.Fatalf("%s: %v, %v; want seq %v", what, seqs(got), err, seq)
		}
		for i, n := range got {
			if n.Seq != seq[i] || n.Target != tg {
				t.Fatalf("%s: %v (target %v); want seq %v", what, seqs(got), n.Target, seq)
			}
		}
	}
	a, err := s.ClaimPush(ctx, "A", tg, 2, lease)
	want("A's claim", a, err, 1, 2)
	other, err := s.ClaimPush(ctx, "B", tg, 16, lease)
	want("B's claim while A holds the configuration", other, err)
	more, err := s.ClaimPush(ctx, "A", tg, 16, lease)
	want("A claiming again", more, err, 1, 2, 3, 4)
	if ok, err := s.RenewPush(ctx, "B", a[0].ID, lease); ok || err != nil {
		t.Fatalf("B renewing A's row: %v, %v; want false", ok, err)
	}
	if ok, err := s.RenewPush(ctx, "A", a[0].ID, lease); !ok || err != nil {
		t.Fatalf("A renewing its row: %v, %v; want true", ok, err)
	}
	if err := store.DeletePush(ctx, a[0].ID, a[1].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease + 100*time.Millisecond)
	other, err = s.ClaimPush(ctx, "B", tg, 16, time.Minute)
	want("B's claim once A's lapsed", other, err, 3, 4)
	if ok, err := s.RenewPush(ctx, "A", more[2].ID, lease); ok || err != nil {
		t.Fatalf("A renewing a row B took: %v, %v; want false", ok, err)
	}
	none, err := s.ClaimPush(ctx, "A", target(scopeB, "k1", "h"), 16, lease)
	want("a claim in another scope", none, err)
}
