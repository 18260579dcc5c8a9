package keyrate

import (
	"context"
	"testing"
	"time"
)

// TestLimiter: each key has its own bucket of the limiter's rate and
// burst; Allow takes a token or says how long until one comes, taking
// nothing; Wait waits for one, or for its context; buckets full again with
// nobody waiting are forgotten once the map passes its sweep size; a nil
// Limiter limits nothing. Times are relative to t0.
func TestLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	type step struct {
		op    string // "allow", "wait" (with a context that ends after 50 ms)
		key   string
		at    time.Duration // allow: when
		ok    bool
		delay time.Duration // allow: the wait said, when refused
	}
	for _, c := range []struct {
		name       string
		nilLimiter bool
		perSecond  float64
		burst      int
		sweepAt    int // nextSweep, when set
		steps      []step
		buckets    int // kept at the end
	}{
		{name: "burst, then the rate", perSecond: 10, burst: 2, steps: []step{
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "a", delay: 100 * time.Millisecond},
			{op: "allow", key: "a", at: 50 * time.Millisecond, delay: 50 * time.Millisecond}, // the refusal took nothing
			{op: "allow", key: "a", at: 100 * time.Millisecond, ok: true},
		}, buckets: 1},
		{name: "keys apart", perSecond: 1, burst: 1, steps: []step{
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "a", delay: time.Second},
			{op: "allow", key: "b", ok: true},
		}, buckets: 2},
		{name: "wait", perSecond: 1000, burst: 1, steps: []step{
			{op: "wait", key: "a", ok: true},
			{op: "wait", key: "a", ok: true}, // 1 ms later
		}, buckets: 1},
		{name: "wait past its context", perSecond: 1, burst: 1, steps: []step{
			{op: "wait", key: "a", ok: true},
			{op: "wait", key: "a"}, // a token comes in 1 s, the context ends in 50 ms
		}, buckets: 1},
		{name: "sweep forgets the full idle buckets", perSecond: 1000, burst: 1, sweepAt: 3, steps: []step{
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "b", ok: true},
			{op: "allow", key: "c", ok: true},
			{op: "allow", key: "d", at: time.Second, ok: true}, // a, b, c full again by then
		}, buckets: 1},
		{name: "sweep keeps the buckets not full", perSecond: 1, burst: 1, sweepAt: 3, steps: []step{
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "b", ok: true},
			{op: "allow", key: "c", ok: true},
			{op: "allow", key: "d", at: 10 * time.Millisecond, ok: true},
			{op: "allow", key: "a", at: 10 * time.Millisecond, delay: 990 * time.Millisecond}, // a is remembered
		}, buckets: 4},
		{name: "nil limits nothing", nilLimiter: true, steps: []step{
			{op: "allow", key: "a", ok: true},
			{op: "allow", key: "a", ok: true},
			{op: "wait", key: "a", ok: true},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var l *Limiter[string]
			if !c.nilLimiter {
				l = New[string](c.perSecond, c.burst)
				if c.sweepAt > 0 {
					l.nextSweep = c.sweepAt
				}
			}
			for i, s := range c.steps {
				switch s.op {
				case "allow":
					ok, d := l.Allow(s.key, t0.Add(s.at))
					if ok != s.ok || d != s.delay {
						t.Errorf("step %d: Allow(%q, t0+%v) = %v, %v; want %v, %v", i, s.key, s.at, ok, d, s.ok, s.delay)
					}
				case "wait":
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
					err := l.Wait(ctx, s.key)
					cancel()
					if (err == nil) != s.ok {
						t.Errorf("step %d: Wait(%q) = %v, want ok %v", i, s.key, err, s.ok)
					}
				}
			}
			if l != nil {
				if n := l.Len(); n != c.buckets {
					t.Errorf("%d buckets kept, want %d", n, c.buckets)
				}
			}
		})
	}
}
