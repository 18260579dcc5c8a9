package loadgen

import (
	"testing"
	"time"
)

// TestDialGate: while no attempt failed, every attempt goes; from a
// failure on, attempts asked for every millisecond go at most
// maxDialRate a second (and one), and all go again a failWindow after
// the last failure.
func TestDialGate(t *testing.T) {
	var g dialGate
	t0 := time.Unix(1000, 0)
	for i := range 1000 {
		if !g.take(t0.Add(time.Duration(i) * time.Microsecond)) {
			t.Fatalf("attempt %d held back while none failed", i)
		}
	}
	t1 := t0.Add(time.Second)
	g.fail(t1)
	allowed := 0
	for ms := range 2000 {
		now := t1.Add(time.Duration(ms) * time.Millisecond)
		if ms%100 == 0 && ms < 900 {
			g.fail(now) // failures go on for most of the first second
		}
		if g.take(now) {
			allowed++
		}
	}
	// Failing from t1 to t1+0.8 s, so paced until t1+1.8 s, then free
	// for the last 0.2 s (200 attempts).
	if paced := allowed - 200; paced > 1+maxDialRate*18/10 || paced < maxDialRate {
		t.Errorf("%d attempts went in the 1.8 s after failures, want about %d and at most %d", paced, maxDialRate*18/10, 1+maxDialRate*18/10)
	}
}

// TestNextPause: the pause doubles from dialPauseMin up to dialPauseMax.
func TestNextPause(t *testing.T) {
	p, got := time.Duration(0), []time.Duration{}
	for range 9 {
		p = nextPause(p)
		got = append(got, p)
	}
	want := []time.Duration{10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("pauses %v, want %v ms", got, want)
		}
	}
}
