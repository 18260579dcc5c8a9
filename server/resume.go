package server

// Resuming a stream from the task's event log: a SubscribeToTask that
// names the last event it received gets exactly the events after it, then
// live ones.

import (
	"context"
	"errors"
	"strconv"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
	"parley.dev/parley/taskstore"
)

// resumePage is how many logged events one store read returns while a
// resumed stream catches up.
const resumePage = 256

// lastEventField names the resume position in violations: it is a header
// (HTTP) or metadata (gRPC), not a request field.
const lastEventField = streamctx.LastEventIDHeader

// resumePosition returns the Last-Event-ID the call carries: ok is false
// when it carries none. A value that is not a decimal sequence number is
// InvalidParams; whether the number belongs to the task is checked later.
func resumePosition(ctx context.Context) (after uint64, ok bool, err error) {
	ci := a2a.CallInfoFrom(ctx)
	if ci == nil || ci.LastEventID == "" {
		return 0, false, nil
	}
	n, perr := strconv.ParseUint(ci.LastEventID, 10, 64)
	if perr != nil {
		return 0, false, a2a.InvalidParams(a2a.FieldViolation{Field: lastEventField,
			Description: "must be the decimal id of an event of this task's stream"})
	}
	return n, true, nil
}

// resume is the plan of a resumed stream, made under r.mu: the logged
// events after `after` up to `upto` come from the store, then the
// subscriber's live ones (nil when the task is terminal). When the events
// are gone, snap is the task at upto instead.
type resume struct {
	after, upto uint64
	first       []a2a.StreamEvent // the first page, read under r.mu
	snap        *a2a.StreamEvent  // set when the events after `after` were pruned
	sub         *subscriber
}

// planResume checks the position against the task and reads the first page
// of missed events. Callers hold r.mu and have loaded the task.
func (r *run) planResume(ctx context.Context, after uint64) (*resume, error) {
	if after == 0 || after > r.seq {
		return nil, a2a.InvalidParams(a2a.FieldViolation{Field: lastEventField, Description: "is " +
			strconv.FormatUint(after, 10) + ", which is no event of task " + strconv.Quote(r.id) +
			": its events are numbered 1 to " + strconv.FormatUint(r.seq, 10)})
	}
	p := &resume{after: after, upto: r.seq}
	if after < r.seq {
		evs, err := r.s.store.Events(ctx, r.scope, r.id, after, min(resumePage, int(r.seq-after)))
		switch {
		case errors.Is(err, taskstore.ErrPruned):
			// The missed events are no longer kept: a snapshot first, as a
			// fresh subscriber gets.
			snap := r.snapshot()
			p.snap = &snap
		case err != nil:
			return nil, storeErr(err, r.id)
		default:
			p.first = evs
		}
	}
	if !a2a.IsTerminal(r.task.GetStatus().GetState()) {
		p.sub = r.subscribe()
		r.follow()
	}
	return p, nil
}

// replay yields the planned events: the snapshot or the logged events up to
// p.upto (read page by page after the first), then the live ones. It
// reports whether the caller should go on.
func (r *run) replay(ctx context.Context, p *resume, yield func(a2a.StreamEvent, error) bool) {
	if p.snap != nil {
		if !yield(*p.snap, nil) {
			return
		}
	} else {
		next, evs := p.after, p.first
		for {
			for _, ev := range evs {
				if !taskstore.IsClientMessage(ev.Response) && !yield(ev, nil) {
					return
				}
				next = ev.Seq
			}
			if next >= p.upto {
				break
			}
			var err error
			evs, err = r.s.store.Events(ctx, r.scope, r.id, next, min(resumePage, int(p.upto-next)))
			if err == nil && len(evs) == 0 {
				err = errors.New("the event log ended early")
			}
			if err != nil {
				// Pruned (or lost) between two pages: the caller resumes
				// again from the last event it got, and gets a snapshot.
				yield(a2a.StreamEvent{}, a2a.NewError(a2a.CodeInternal,
					"resuming task %q: %v; resume again after event %d", r.id, err, next).
					WithMeta("taskId", r.id).WithMeta("lastEventId", strconv.FormatUint(next, 10)))
				return
			}
		}
	}
	if p.sub != nil {
		pump(ctx, p.sub, nil, false, yield)
	}
}
