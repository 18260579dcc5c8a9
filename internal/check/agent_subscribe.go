package check

import (
	"context"
	"slices"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// subscribe subscribes to a task.
func (f *streamFamily) subscribe(ctx context.Context, id string, ctl streamCtl) *result {
	return f.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{}, ctl)
}

// subscribeSnapshot subscribes to 0.7 s of work: a Task snapshot first, a
// terminal state, then the end of the stream.
func (f *streamFamily) subscribeSnapshot(ctx context.Context, r *rec) {
	t := f.sendTask(ctx, r, "slow 700", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	if t == nil {
		return
	}
	res := f.subscribe(ctx, t.GetId(), streamCtl{settle: settledTerminal, after: 2 * time.Second})
	if !r.gradable(res) {
		return
	}
	evs := res.ex.Events
	switch {
	case res.err != nil:
		r.fail("refused: %s", describeError(res.err))
	case len(evs) == 0 || evs[0].Resp.GetTask() == nil:
		r.fail("the first event is %s, not the Task", lastKind(evs[:min(1, len(evs))]))
	case !a2a.IsTerminal(lastState(evs)):
		r.fail("no terminal state (last event %s)", lastKind(evs))
	case !res.ex.Closed:
		r.fail("still open 2 s after %s", lastKind(evs))
	default:
		r.same().pass("%s first, closed after %s", evs[0].kind(), lastKind(evs))
	}
}

// subscribeTerminal subscribes to the completed task.
func (f *streamFamily) subscribeTerminal(ctx context.Context, r *rec) {
	if !r.needs(f.completed != nil, "no completed task") {
		return
	}
	res := f.subscribe(ctx, f.completed.GetId(), streamCtl{max: 5 * time.Second, settle: settledTerminal, after: time.Second})
	res.firstEventError()
	if res.err == nil && res.ok() && len(res.ex.Events) > 0 {
		r.saw(res).fail("a stream of %d events for a completed task", len(res.ex.Events))
	} else {
		r.expectSame(f.t.binding, res, a2a.CodeUnsupportedOperation)
	}
	f.probes["SubscribeToTask of a completed task"] = outcomeKey(res)
}

// fanout opens three subscriptions to 0.9 s of work; the first leaves
// after its first event, and the other two must see the same events to
// the end.
func (f *streamFamily) fanout(ctx context.Context, r *rec) {
	t := f.sendTask(ctx, r, "slow 900", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	if t == nil {
		return
	}
	var wg sync.WaitGroup
	out := make([]*result, 3)
	for i := range out {
		wg.Go(func() {
			ctl := streamCtl{settle: settledTerminal, after: 2 * time.Second}
			if i == 0 {
				ctl = streamCtl{stop: func([]*event) bool { return true }} // leaves after the snapshot
			}
			out[i] = f.subscribe(ctx, t.GetId(), ctl)
		})
	}
	wg.Wait()
	r.Sent = "three SubscribeToTask streams; the first closes after its first event: " + describeRequest(out[1].ex)
	r.Received = describeResponse(out[1]) + " | " + describeResponse(out[2])
	if out[1].failed() || out[2].failed() {
		r.skip("could not complete the requests")
		return
	}
	evs1, evs2 := out[1].ex.Events, out[2].ex.Events
	a, c := tail(evs1), tail(evs2)
	short, long := a, c
	if len(short) > len(long) {
		short, long = long, short
	}
	switch {
	case len(a) == 0 || len(c) == 0 || !a2a.IsTerminal(lastState(evs1)) || !a2a.IsTerminal(lastState(evs2)):
		r.fail("a remaining subscriber did not see the task end: %s | %s", lastKind(evs1), lastKind(evs2))
	case !slices.Equal(short, long[len(long)-len(short):]):
		r.fail("the subscribers saw different events: %v | %v", a, c)
	default:
		r.pass("both remaining subscribers saw %v", long)
	}
}
