package share

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Reads of different keys run at once; the calls for one key that come
// while it is read share that read.
func TestGroupReads(t *testing.T) {
	var g Group[string, int]
	var begun sync.WaitGroup
	begun.Add(2)
	both := make(chan struct{})
	go func() { begun.Wait(); close(both) }()
	var reads atomic.Int32
	read := func(v int) func() (*int, bool, error) {
		return func() (*int, bool, error) {
			reads.Add(1)
			begun.Done()
			select {
			case <-both:
			case <-time.After(5 * time.Second):
				return nil, false, errors.New("the other key's read did not begin meanwhile")
			}
			return &v, true, nil
		}
	}
	var wg sync.WaitGroup
	got := make([]*int, 6)
	for i := range got {
		key := []string{"a", "b"}[i%2]
		wg.Go(func() {
			v, err := g.Do(t.Context(), key, read(i%2))
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
		if i < 2 {
			time.Sleep(10 * time.Millisecond) // the first two calls read, the others join them
		}
	}
	wg.Wait()
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads for 2 keys, want 2", n)
	}
	for i, v := range got {
		if v != got[i%2] {
			t.Errorf("call %d got its own value, not its key's one read", i)
		}
	}
}

// A held value is shared while a caller holds it, and not after; a value
// read with hold false is not; Forget ends the sharing of a read in
// progress; a waiter whose context ends stops waiting.
func TestGroupHoldForget(t *testing.T) {
	var g Group[string, int]
	ctx := context.Background()
	one := 1
	v, _ := g.Do(ctx, "k", func() (*int, bool, error) { return &one, true, nil })
	if w, _ := g.Do(ctx, "k", func() (*int, bool, error) { return new(int), true, nil }); w != v {
		t.Fatal("a value a caller holds was not shared")
	}
	runtime.KeepAlive(v)
	v = nil
	runtime.GC()
	runtime.GC()
	if g.Held("k") {
		t.Fatal("a value no caller holds is kept")
	}
	kept, _ := g.Do(ctx, "n", func() (*int, bool, error) { return new(int), false, nil })
	if g.Held("n") {
		t.Fatal("a value read with hold false is kept")
	}
	runtime.KeepAlive(kept)

	reading, release := make(chan struct{}), make(chan struct{})
	go g.Do(ctx, "f", func() (*int, bool, error) { close(reading); <-release; return new(int), true, nil })
	<-reading
	g.Forget("f")
	fresh := new(int)
	if got, _ := g.Do(ctx, "f", func() (*int, bool, error) { return fresh, true, nil }); got != fresh {
		t.Fatal("a call after Forget joined the read from before it")
	}
	close(release)

	waiting, hold := make(chan struct{}), make(chan struct{})
	defer close(hold)
	go g.Do(ctx, "w", func() (*int, bool, error) { close(waiting); <-hold; return new(int), true, nil })
	<-waiting
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.Do(cctx, "w", func() (*int, bool, error) { return new(int), true, nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter whose context ended: %v, want DeadlineExceeded", err)
	}
}
