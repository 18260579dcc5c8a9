package eventbus

import (
	"context"
	"iter"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// DefaultPoll is Follow's fallback poll interval.
const DefaultPoll = 2 * time.Second

// followBatch is how many events Follow reads from the log at once.
const followBatch = 256

// Follow yields the events of a task's log after sequence number after,
// in order, each once, as they are appended by any process: it reads the
// log, then waits for a wake-up from bus or for poll (DefaultPoll when
// not positive) to pass, and reads again. It ends after an event that
// leaves the task in a terminal state, when ctx ends (yielding ctx's
// error), or on an error of the store, yielded as is: taskstore.ErrPruned
// says the events after `after` are gone (start again from a snapshot),
// taskstore.ErrNotFound that the task is not in the scope.
func Follow(ctx context.Context, store taskstore.Tasks, bus Bus, sc taskstore.Scope, taskID string, after uint64, poll time.Duration) iter.Seq2[a2a.StreamEvent, error] {
	if poll <= 0 {
		poll = DefaultPoll
	}
	return func(yield func(a2a.StreamEvent, error) bool) {
		// Watch before the first read, so that an append between the
		// read and the wait still wakes it.
		wake, stop := bus.Watch(taskID)
		defer stop()
		timer := time.NewTimer(poll)
		defer timer.Stop()
		for {
			evs, err := store.Events(ctx, sc, taskID, after, followBatch)
			if err != nil {
				yield(a2a.StreamEvent{}, err)
				return
			}
			for _, ev := range evs {
				after = ev.Seq
				if !yield(ev, nil) || ends(ev.Response) {
					return
				}
			}
			if len(evs) == followBatch {
				continue // more may be waiting
			}
			timer.Reset(poll)
			select {
			case <-ctx.Done():
				yield(a2a.StreamEvent{}, ctx.Err())
				return
			case <-wake:
			case <-timer.C:
			}
		}
	}
}

// ends reports whether ev leaves its task in a terminal state.
func ends(ev *a2a.StreamResponse) bool {
	switch p := ev.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		return a2a.IsTerminal(p.StatusUpdate.GetStatus().GetState())
	case *a2a.StreamResponse_Task:
		return a2a.IsTerminal(p.Task.GetStatus().GetState())
	}
	return false
}
