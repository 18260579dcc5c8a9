package a2ahttp

import (
	"testing"
	"time"

	"parley.dev/parley/server"
)

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

// TestBoundsResolvedWithTheDefaults: the per-caller bounds are resolved
// with the other bounds' defaults, in the handler's options: zero is the
// default, negative no bound (0), a value itself; the counts use what the
// options show.
func TestBoundsResolvedWithTheDefaults(t *testing.T) {
	type bounds struct {
		calls, streams int
		budget         int64
		write          time.Duration
	}
	for _, c := range []struct {
		name     string
		in, want bounds
	}{
		{"zero", bounds{}, bounds{DefaultMaxCalls, DefaultMaxStreams, DefaultAnswerBudget, DefaultWriteTimeout}},
		{"negative", bounds{-1, -1, -1, -1}, bounds{}},
		{"set", bounds{9, 3, 1000, time.Second}, bounds{9, 3, 1000, time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ifaces, err := Interfaces("http://127.0.0.1:1")
			if err != nil {
				t.Fatal(err)
			}
			h := matrixHandler(t, ifaces, &server.Options{Agent: bigAgent()},
				Options{MaxCalls: c.in.calls, MaxStreams: c.in.streams, AnswerBudget: c.in.budget, WriteTimeout: c.in.write})
			got := bounds{h.opts.MaxCalls, h.opts.MaxStreams, h.opts.AnswerBudget, h.opts.WriteTimeout}
			if got != c.want {
				t.Errorf("New(%+v).opts = %+v, want %+v", c.in, got, c.want)
			}
			counted := bounds{h.callers.maxCalls, h.callers.maxStreams, h.callers.budget, got.write}
			if counted != got {
				t.Errorf("the counts use %+v, the options show %+v", counted, got)
			}
		})
	}
}
