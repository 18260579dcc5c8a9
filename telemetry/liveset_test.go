package telemetry

import (
	"context"
	"testing"
)

// The active executions are those whose context is not done, counted
// exactly whenever the metrics are collected; between collections the set
// stays within twice the executions running (or 64), however many come
// and go.
func TestLiveSet(t *testing.T) {
	var l liveSet
	var running []context.CancelFunc
	for i := range 10000 {
		ctx, cancel := context.WithCancel(context.Background())
		l.add(ctx)
		if i%100 == 0 {
			running = append(running, cancel) // one in a hundred keeps running
		} else {
			cancel()
		}
		if n := len(l.ctxs); n > max(2*len(running), 64)+1 {
			t.Fatalf("after %d executions, %d running: the set holds %d", i+1, len(running), n)
		}
	}
	if got := l.count(); got != len(running) {
		t.Fatalf("count = %d, want %d", got, len(running))
	}
	for _, cancel := range running[:50] {
		cancel()
	}
	if got := l.count(); got != len(running)-50 {
		t.Fatalf("count after 50 ended = %d, want %d", got, len(running)-50)
	}
}
