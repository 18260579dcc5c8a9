package a2ahttp

import "testing"

// TestChargeAfterLeave: an answer made after its call left (an HTTP/2
// stream reset while the core worked) is charged nothing, since nothing
// would give it back; one made before is given back when the call leaves.
// Before, the late charge stayed with the caller for good and, with enough
// of them, refused its calls for ever.
func TestChargeAfterLeave(t *testing.T) {
	cs := newCallers(8, 4, 1<<20)
	key := callerID{principal: "alice"}
	keep, e := cs.admit(key) // a call in flight keeps the caller's entry
	if e != nil {
		t.Fatal(e)
	}
	for range 10 {
		cl, e := cs.admit(key)
		if e != nil {
			t.Fatalf("admit: %v", e)
		}
		cs.leave(cl)
		if !cs.chargeCall(cl, 512<<10) {
			t.Fatal("a late answer was refused")
		}
	}
	if a := cs.m[key].answering; a != 0 {
		t.Fatalf("the caller carries %d bytes of answers of calls that left", a)
	}
	cl, _ := cs.admit(key)
	if !cs.chargeCall(cl, 512<<10) || cs.m[key].answering != 512<<10 {
		t.Fatalf("an answer of a call in flight was not charged: %d", cs.m[key].answering)
	}
	cs.leave(cl)
	if a := cs.m[key].answering; a != 0 {
		t.Fatalf("leave gave back %d of 512 KiB", 512<<10-a)
	}
	cs.leave(keep)
}
