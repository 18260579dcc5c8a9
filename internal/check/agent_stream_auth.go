package check

import (
	"context"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// authStream is what B2.stream-auth-open saw for B2.stream-closes-on-cancel.
type authStream struct {
	res      *result
	canceled bool   // CANCELED arrived after AUTH_REQUIRED
	skip     string // why B2.stream-closes-on-cancel cannot be graded, if so
}

// authOpen streams "auth-required" and, 0.8 s after AUTH_REQUIRED,
// cancels the task: the stream must still be open then, and end with
// CANCELED (graded by closesOnCancel).
func (f *streamFamily) authOpen(ctx context.Context, r *rec) {
	var (
		once   sync.Once
		authAt time.Duration
		taskID string
		done   = make(chan struct{})
	)
	res := f.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: f.msg("auth-required")}, callOpts{},
		streamCtl{settle: settledTerminal, after: 2 * time.Second, max: 6 * time.Second, stop: func(evs []*event) bool {
			last := evs[len(evs)-1]
			if last.state() == a2a.TaskState_TASK_STATE_AUTH_REQUIRED {
				once.Do(func() {
					authAt, taskID = last.At, streamTaskID(evs)
					go func() {
						defer close(done)
						time.Sleep(800 * time.Millisecond)
						f.cancel(context.WithoutCancel(ctx), taskID)
					}()
				})
			}
			return false
		}})
	f.auth.res = res
	r.saw(res)
	if taskID != "" {
		<-done
	}
	evs := res.ex.Events
	switch {
	case res.failed() && taskID == "":
		r.skip("could not complete the request (%v)", res.ex.Err)
		f.auth.skip = "no stream"
		return
	case taskID == "":
		r.skip("the stream did not report AUTH_REQUIRED (last event %s): nothing to observe", lastKind(evs))
		f.auth.skip = "no AUTH_REQUIRED task"
		if id := streamTaskID(evs); id != "" {
			f.cancel(ctx, id)
		}
		return
	}
	for _, ev := range evs {
		if ev.At > authAt && ev.state() == a2a.TaskState_TASK_STATE_CANCELED {
			f.auth.canceled = true
		}
	}
	if res.ex.Closed && !f.auth.canceled && res.ex.Elapsed < authAt+800*time.Millisecond {
		r.differs("Parley keeps the stream open through AUTH_REQUIRED").warn("the stream closed at AUTH_REQUIRED")
		f.auth.skip = "the stream had already closed at AUTH_REQUIRED"
		return
	}
	r.same().pass("still open 0.8 s after AUTH_REQUIRED")
}

// closesOnCancel grades the end of the AUTH_REQUIRED stream after its task
// was canceled.
func (f *streamFamily) closesOnCancel(_ context.Context, r *rec) {
	res := f.auth.res
	r.saw(res)
	evs := res.ex.Events
	switch {
	case f.auth.skip != "":
		r.skip("%s", f.auth.skip)
	case f.auth.canceled && res.ex.Closed:
		r.pass("CANCELED, then closed")
	case f.auth.canceled:
		r.fail("CANCELED arrived but the stream stayed open")
	case res.ex.Closed:
		r.fail("the stream closed without reporting CANCELED (last event %s)", lastKind(evs))
	default:
		r.fail("no CANCELED event within the wait after CancelTask (last event %s)", lastKind(evs))
	}
}
