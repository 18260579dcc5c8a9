package a2a_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"parley.dev/parley/a2a"
)

// TestEventCache: a value is made once for its key, whatever the number of
// concurrent callers; a failed make is not kept; another Response, or a
// nil cache, gets its own value, made every time.
func TestEventCache(t *testing.T) {
	resp := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: a2a.AgentMessage("hi")}}
	c := a2a.NewEventCache(resp)
	if !c.Holds(resp) || c.Holds(&a2a.StreamResponse{}) || c.Holds(nil) || (*a2a.EventCache)(nil).Holds(resp) {
		t.Fatal("Holds: wrong answer")
	}
	var made atomic.Int32
	encode := func() ([]byte, error) { made.Add(1); return a2a.AppendJSON(nil, resp) }
	want, _ := a2a.AppendJSON(nil, resp)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			got, err := c.LoadBytes(resp, "json", encode)
			if err != nil || string(got) != string(want) {
				t.Errorf("LoadBytes = %q, %v; want %q", got, err, want)
			}
		})
	}
	wg.Wait()
	if n := made.Load(); n != 1 {
		t.Fatalf("encoded %d times, want once", n)
	}

	// Failures are not kept; each key has its own value, past the four
	// kept inline too.
	boom := errors.New("boom")
	if _, err := c.Load(resp, "other", func() (any, error) { return nil, boom }); err != boom {
		t.Fatalf("Load error = %v, want %v", err, boom)
	}
	for i, k := range []string{"other", "k2", "k3", "k4", "k5", "k6"} {
		v, err := c.Load(resp, k, func() (any, error) { return i, nil })
		if err != nil || v != i {
			t.Fatalf("Load(%q) = %v, %v; want %d", k, v, err, i)
		}
	}
	for i, k := range []string{"other", "k2", "k3", "k4", "k5", "k6"} {
		if v, _ := c.Load(resp, k, func() (any, error) { return -1, nil }); v != i {
			t.Fatalf("Load(%q) again = %v, want the kept %d", k, v, i)
		}
	}

	// Another Response (a middleware's, a trimmed copy) and a nil cache
	// keep nothing.
	other := &a2a.StreamResponse{}
	for _, cc := range []*a2a.EventCache{c, nil} {
		made.Store(0)
		for range 2 {
			cc.LoadBytes(other, "json", encode)
		}
		if n := made.Load(); n != 2 {
			t.Fatalf("encoded %d times without a cache for the Response, want 2", n)
		}
	}
}
