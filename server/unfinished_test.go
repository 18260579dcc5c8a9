package server_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// failingWrites is a memory store whose task writes fail while failing is
// set, as a full disk's would.
type failingWrites struct {
	*memstore.Store
	failing atomic.Bool
}

var errDiskFull = errors.New("disk full (injected)")

func (f *failingWrites) fault() error {
	if f.failing.Load() {
		return errDiskFull
	}
	return nil
}

func (f *failingWrites) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.CreateTask(ctx, sc, t, ev)
}

func (f *failingWrites) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.CreateTaskBatch(ctx, sc, t, evs)
}

func (f *failingWrites) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.Append(ctx, sc, id, ev)
}

func (f *failingWrites) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.AppendBatch(ctx, sc, id, evs)
}

// TestNoSilentTask: when the store stops taking a running task's writes,
// its stream ends with an error instead of waiting for events that will not
// come, a blocking send gets an error instead of a task that looks alive,
// and once the store writes again the task ends FAILED saying why, and a
// resume of its stream answers the events it missed, FAILED last.
func TestNoSilentTask(t *testing.T) {
	t.Parallel()
	st := &failingWrites{Store: memstore.New()}
	srv := newServer(t, server.Options{Store: st})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	var streamed string
	var streamErr error
	var last uint64 // the last event the stream got
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range srv.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 100000 every 5")}) {
			if err != nil {
				streamErr = err
				return
			}
			last = ev.Seq
			if streamed == "" {
				streamed = ev.TaskID()
				st.failing.Store(true) // the disk fills up under the running task
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of a task whose writes fail did not end")
	}
	if streamErr == nil {
		t.Fatal("the stream ended without an error")
	}
	_, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("slow 50")})
	if err == nil {
		t.Error("a blocking send succeeded while no write did")
	}
	if tk, err := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: streamed}); err != nil || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_WORKING {
		t.Fatalf("while writes fail the stored task is %v %v, want WORKING", tk.GetStatus().GetState(), err)
	}

	st.failing.Store(false) // space is back
	for {
		tk, err := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: streamed})
		if err != nil {
			t.Fatal(err)
		}
		if a2a.IsTerminal(tk.GetStatus().GetState()) {
			msg := tk.GetStatus().GetMessage().GetParts()[0].GetText()
			if tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(msg, "could not record") {
				t.Fatalf("the task ended %v %q, want FAILED saying the store could not record it", tk.GetStatus().GetState(), msg)
			}
			// Ended: resuming its stream answers what it missed, FAILED last.
			resumed := as(t, "", func(ci *a2a.CallInfo) { ci.LastEventID = strconv.FormatUint(last, 10) })
			evs, err := collect(srv.SubscribeToTask(resumed, &a2a.SubscribeToTaskRequest{Id: streamed}))
			if err != nil || len(evs) == 0 || evs[0].Seq != last+1 ||
				evs[len(evs)-1].Response.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED {
				t.Fatalf("resuming the ended task after event %d: %d events, %v; want from %d, FAILED last", last, len(evs), err, last+1)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the task was not ended once the store wrote again")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (f *failingWrites) SetMessageReply(ctx context.Context, sc taskstore.Scope, id string, reply *a2a.Message) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.SetMessageReply(ctx, sc, id, reply)
}

// TestReplyStoredBeforeSeen: a direct reply the store does not take is
// not given to the caller (who gets the error); a resend once the store
// writes again is answered with a reply, recorded this time.
func TestReplyStoredBeforeSeen(t *testing.T) {
	t.Parallel()
	st := &failingWrites{Store: memstore.New()}
	srv := newServer(t, server.Options{Store: st})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	msg := a2a.UserMessage("message") // the conformance agent replies "pong"
	st.failing.Store(true)
	if resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); err == nil {
		t.Fatalf("a reply the store did not take was answered: %v", resp)
	}
	st.failing.Store(false)
	for range 2 {
		resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil || resp.GetMessage() == nil {
			t.Fatalf("resend once the store writes: %v %v, want the reply", resp, err)
		}
	}
	rec, err := st.GetMessage(ctx, taskstore.Scope{}, msg.MessageId)
	if err != nil || rec.Reply == nil {
		t.Fatalf("the reply is not recorded: %v %v", rec, err)
	}
}
