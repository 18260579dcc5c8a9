package server_test

import (
	"context"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
)

// TestEventCacheShared: an event published to several subscribers carries
// one a2a.EventCache, the same for all of them, made for the Response they
// share; a lone subscriber's events carry none (it encodes them itself), nor
// does the snapshot that starts a SubscribeToTask stream (a copy of its
// own).
func TestEventCacheShared(t *testing.T) {
	for _, subs := range []int{1, 3} {
		srv := benchServer(t, agents.Conformance(), 0)
		ctx := benchCtx(context.Background())
		resp, err := srv.SendMessage(ctx, benchSend("cache-1", "input-required"))
		if err != nil {
			t.Fatal(err)
		}
		id := resp.GetTask().GetId()
		got := make([][]a2a.StreamEvent, subs)
		done := make(chan int)
		started := make(chan struct{})
		for i := range subs {
			go func() {
				defer func() { done <- i }()
				first := true
				for ev, err := range srv.SubscribeToTask(benchCtx(context.Background()), &a2a.SubscribeToTaskRequest{Id: id}) {
					if err != nil {
						t.Error(err)
						return
					}
					if first {
						first = false
						started <- struct{}{}
					}
					got[i] = append(got[i], ev)
				}
			}()
		}
		for range subs {
			<-started
		}
		req := benchSend("cache-2", "done")
		req.Message.TaskId = id
		if _, err := srv.SendMessage(ctx, req); err != nil {
			t.Fatal(err)
		}
		for range subs {
			<-done
		}
		for i, evs := range got {
			if len(evs) != 4 { // the snapshot, WORKING, the artifact, COMPLETED
				t.Fatalf("%d subscribers: stream %d got %d events, want 4", subs, i, len(evs))
			}
			if evs[0].Cache != nil {
				t.Errorf("%d subscribers: the snapshot carries a cache", subs)
			}
			for j, ev := range evs[1:] {
				switch {
				case subs == 1 && ev.Cache != nil:
					t.Errorf("a lone subscriber's event %d carries a cache", j+1)
				case subs > 1 && (!ev.Cache.Holds(ev.Response) || ev.Cache != got[0][j+1].Cache || ev.Response != got[0][j+1].Response):
					t.Errorf("%d subscribers: stream %d, event %d: cache %p for %p, stream 0's %p for %p", subs, i, j+1,
						ev.Cache, ev.Response, got[0][j+1].Cache, got[0][j+1].Response)
				}
			}
		}
	}
}
