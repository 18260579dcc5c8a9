package server_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
)

// TestLoneSubscriberShedsTask: a task whose one SubscribeToTask stream is
// all its run serves is not kept in memory beside the store's copy; a
// follow-up loads it again, and the stream gets the follow-up's events,
// numbered on from its snapshot, to the end. A second stream on the task
// loads it for its snapshot and lets it go again.
func TestLoneSubscriberShedsTask(t *testing.T) {
	srv := benchServer(t, agents.Conformance(), 0)
	ctx := benchCtx(context.Background())
	resp, err := srv.SendMessage(ctx, benchSend("shed-1", "input-required"))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTask().GetId()
	// The answer comes once INPUT_REQUIRED is stored; the execution that
	// asked for it ends after. A stream that came before that end finds
	// the run still holding the task for it, and the run keeps it: the
	// stream waits for the run to be let go.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, live := srv.TaskLoaded(id); !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run of a task waiting for input was not let go")
		}
	}
	next, stop := iter.Pull2(srv.SubscribeToTask(benchCtx(context.Background()), &a2a.SubscribeToTaskRequest{Id: id}))
	defer stop()
	snap, err, _ := next()
	if err != nil || snap.Response.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("snapshot %v, %v", snap.Response, err)
	}
	if loaded, live := srv.TaskLoaded(id); !live || loaded {
		t.Fatalf("with one stream: live %v, task loaded %v; want a live run without the task", live, loaded)
	}

	// A second stream loads it for its snapshot, and lets it go again.
	next2, stop2 := iter.Pull2(srv.SubscribeToTask(benchCtx(context.Background()), &a2a.SubscribeToTaskRequest{Id: id}))
	if snap2, err, _ := next2(); err != nil || snap2.Seq != snap.Seq {
		t.Fatalf("second snapshot seq %d, %v; want %d", snap2.Seq, err, snap.Seq)
	}
	if loaded, _ := srv.TaskLoaded(id); loaded {
		t.Fatal("with two streams the task is loaded")
	}
	stop2()

	req := benchSend("shed-2", "done")
	req.Message.TaskId = id
	done := make(chan error, 1)
	go func() { _, err := srv.SendMessage(ctx, req); done <- err }()
	want := snap.Seq + 1 // the follow-up's own timeline entry, which no stream is sent
	var last a2a.StreamEvent
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want++
		if ev.Seq != want {
			t.Fatalf("event seq %d, want %d", ev.Seq, want)
		}
		last = ev
	}
	if st := last.Response.GetStatusUpdate().GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_COMPLETED || want != snap.Seq+4 {
		t.Fatalf("stream ended with %v after %d events; want COMPLETED after 3", last.Response, want-snap.Seq-1)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow-up did not return")
	}
}
