package server

import (
	"context"
	"testing"
	"time"
)

// A worker that finished its job waits for the next one, and stops
// waiting when the server stops.
func TestWorkersReuseAndStop(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	w := newWorkers(ctx)
	ran := make(chan int, 2)
	w.run(func() { ran <- 1 })
	<-ran
	// The worker now waits: a direct send reaches it (run would start a
	// new goroutine if none waited).
	handed := false
	for deadline := time.Now().Add(5 * time.Second); !handed && time.Now().Before(deadline); {
		select {
		case w.jobs <- func() { ran <- 2 }:
			handed = true
		case <-time.After(time.Millisecond):
		}
	}
	if !handed {
		t.Fatal("no worker waited for a second job")
	}
	if got := <-ran; got != 2 {
		t.Fatalf("ran job %d, want 2", got)
	}
	stop()
	time.Sleep(20 * time.Millisecond) // the worker sees the stop
	select {
	case w.jobs <- func() {}:
		t.Fatal("a worker still waited after the server stopped")
	case <-time.After(50 * time.Millisecond):
	}
}
