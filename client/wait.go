package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"parley.dev/parley/a2a"
)

// WaitForCompletion follows a task until it is terminal (COMPLETED, FAILED,
// CANCELED, REJECTED) or interrupted (INPUT_REQUIRED, AUTH_REQUIRED), and
// returns it as GetTask reports it then.
//
// It never returns a state older than the last follow-up message this
// Client sent on the task. Accepting a follow-up does not change the
// task's status, so right after a follow-up sent with returnImmediately
// the task still says INPUT_REQUIRED; WaitForCompletion keeps following
// it until the agent answers. An interrupted state counts as the answer
// when its status message comes after the follow-up in the task's history,
// when its status timestamp is later than the status the follow-up found,
// or when the task was seen working since. (Against a server that stamps
// neither status messages nor timestamps, an agent that answers with a
// bare interrupted state before the follow-up's reply is built cannot be
// told from the old state: WaitForCompletion then waits for ctx.) A
// follow-up sent by another Client, or another process, is not known here.
//
// When the card declares streaming it subscribes to the task; a
// subscription that ends early (ErrStreamEnded, a broken connection) is
// followed by a GetTask and a new subscription, the recovery the spec's
// stream rules lead to (spec §3.1.2, §3.1.6). A subscription the server
// refuses with one of the two errors the spec gives SubscribeToTask
// (§3.1.6) is followed by a GetTask, which decides:
//
//   - UnsupportedOperationError: the task is terminal, or the server does
//     not stream after all;
//   - TaskNotFoundError: the task does not exist, or, on a server that
//     can only subscribe to a task it is executing right now (the official
//     Go SDK's), the task is finished or interrupted.
//
// When GetTask finds the task in a state to return, it is returned; when
// GetTask fails (TaskNotFoundError for a task that does not exist), that
// error is; otherwise the server will not stream this task, and
// WaitForCompletion polls it. Without streaming it polls from the start:
// GetTask with exponential backoff from Options.PollInterval up to 5 s.
// It returns when ctx is done, or with the first other error the server
// sends.
func (c *Client) WaitForCompletion(ctx context.Context, taskID string) (*a2a.Task, error) {
	streaming := c.card.GetCapabilities().GetStreaming()
	poll := c.poll
	for {
		if streaming {
			events, err := c.follow(ctx, taskID)
			refused := false
			switch {
			case err == nil, errors.Is(err, ErrStreamEnded):
				// settled, or the stream closed early: read the task
			case refusesSubscription(err):
				refused = true // GetTask tells why
			default:
				var te *TransportError
				if !errors.As(err, &te) {
					return nil, err
				}
				events = 0 // back off before subscribing again
			}
			t, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID})
			if err != nil {
				return nil, err
			}
			if c.notes.current(t) {
				return t, nil
			}
			if refused {
				streaming = false // the server will not stream this task: poll
				continue
			}
			if events > 0 {
				poll = c.poll // the stream was working: resubscribe at once
				continue
			}
			// Nothing came through the stream: do not spin on a server
			// that closes subscriptions at once, or refuses them.
			if err := sleep(ctx, jitter(poll)); err != nil {
				return nil, err
			}
			poll = min(poll*2, maxPollInterval)
			continue
		}
		t, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID})
		if err != nil {
			return nil, err
		}
		if c.notes.current(t) {
			return t, nil
		}
		if err := sleep(ctx, jitter(poll)); err != nil {
			return nil, err
		}
		poll = min(poll*2, maxPollInterval)
	}
}

// refusesSubscription reports whether err, from SubscribeToTask, is one of
// the refusals WaitForCompletion answers with GetTask (see there).
func refusesSubscription(err error) bool {
	return errors.Is(err, a2a.ErrUnsupportedOperation) || errors.Is(err, a2a.ErrTaskNotFound)
}

// follow subscribes to a task until the stream reports a terminal or
// interrupted state that WaitForCompletion may return (nil error), or ends
// otherwise. It returns how many events after the first snapshot it saw.
//
// The first event, a snapshot of the task, may still show the state that
// asked for the Client's last follow-up; every status update after it is
// newer than the follow-up (the subscription started after it was
// accepted), so it answers it.
func (c *Client) follow(ctx context.Context, taskID string) (int, error) {
	n := 0
	pending := c.notes.pendingOn(taskID)
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: taskID}) {
		if err != nil {
			return n, err
		}
		if t := ev.Response.GetTask(); t != nil {
			if c.notes.current(t) {
				return n, nil
			}
			continue
		}
		n++
		su := ev.Response.GetStatusUpdate()
		if su == nil {
			continue
		}
		c.notes.progressed(taskID, pending)
		if state := su.GetStatus().GetState(); a2a.IsTerminal(state) || a2a.IsInterrupted(state) {
			return n, nil
		}
	}
	return n, nil
}

// jitter returns d randomized between d/2 and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
