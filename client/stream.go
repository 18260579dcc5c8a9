package client

import (
	"context"
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
)

// ErrStreamEnded matches (with errors.Is) the error that ends a task
// stream which closed too early: SendStreamingMessage before a terminal or
// interrupted state (or a direct Message), SubscribeToTask before a
// terminal state. The Task snapshot that starts a follow-up stream does not
// count: its interrupted state is the one the follow-up answers. The error is a *StreamEndedError carrying the last task
// id and state seen, so the caller can GetTask and, if the task goes on,
// SubscribeToTask again (spec §3.1.2, §3.1.6: the end of the stream is the
// only completion signal, and servers disagree on when they close).
var ErrStreamEnded = errors.New("a2a client: the stream ended before the task settled")

// StreamEndedError is the last item of a task stream that ended too early
// (see ErrStreamEnded).
type StreamEndedError struct {
	// TaskID is the task the stream was about ("" if no event named one).
	TaskID string
	// State is the last state the stream reported (TASK_STATE_UNSPECIFIED
	// if none).
	State a2a.TaskState
	// Err is the transport failure that cut the stream; nil when the
	// server closed it.
	Err error
}

// Error implements the error interface.
func (e *StreamEndedError) Error() string {
	msg := fmt.Sprintf("%v (task %q, last state %s)", ErrStreamEnded, e.TaskID, e.State)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrStreamEnded) true.
func (e *StreamEndedError) Is(target error) bool { return target == ErrStreamEnded }

// Unwrap returns the transport failure, if any.
func (e *StreamEndedError) Unwrap() error { return e.Err }

// streamTracker follows a stream's task to judge its end.
type streamTracker struct {
	send     bool // SendStreamingMessage: an interrupted state is a proper end
	followUp bool // ... of a message on an existing task
	taskID   string
	state    a2a.TaskState
	message  bool
	// snapshot is set while the last state seen is a follow-up stream's
	// first Task: the state that asked for the follow-up, not an answer.
	snapshot bool
}

// observe records what an event says about the task.
func (s *streamTracker) observe(ev a2a.StreamEvent) {
	switch {
	case ev.Response.GetTask() != nil:
		t := ev.Response.GetTask()
		s.taskID, s.state = t.GetId(), t.GetStatus().GetState()
		s.snapshot = s.followUp
	case ev.Response.GetStatusUpdate() != nil:
		su := ev.Response.GetStatusUpdate()
		if su.GetTaskId() != "" {
			s.taskID = su.GetTaskId()
		}
		s.state = su.GetStatus().GetState()
		s.snapshot = false
	case ev.Response.GetArtifactUpdate() != nil:
		if id := ev.Response.GetArtifactUpdate().GetTaskId(); id != "" {
			s.taskID = id
		}
	case ev.Response.GetMessage() != nil:
		s.message = true
	}
}

// settled reports whether the stream may end here.
func (s *streamTracker) settled() bool {
	if a2a.IsTerminal(s.state) {
		return true
	}
	return s.send && (s.message || (a2a.IsInterrupted(s.state) && !s.snapshot))
}

// over reports whether the task settled as far as resuming goes: a
// terminal or interrupted state (not a follow-up's starting snapshot), or
// a direct message. A stream broken after that is not resumed.
func (s *streamTracker) over() bool {
	return a2a.IsTerminal(s.state) || s.message || (a2a.IsInterrupted(s.state) && !s.snapshot)
}

// closesSend reports whether a SendStreamingMessage stream closes here
// (decision B2): a terminal state, INPUT_REQUIRED (not a
// follow-up's starting snapshot) or a direct message.
func (s *streamTracker) closesSend() bool {
	return a2a.IsTerminal(s.state) || s.message ||
		(s.state == a2a.TaskState_TASK_STATE_INPUT_REQUIRED && !s.snapshot)
}

// resumed notes that the stream goes on as a subscription after a break: a
// Task arriving now is the task as it stands, not the state a follow-up
// answers.
func (s *streamTracker) resumed() { s.followUp = false }

// end returns the error for a stream the server closed: nil when the task
// settled, a *StreamEndedError otherwise.
func (s *streamTracker) end() error {
	if s.settled() {
		return nil
	}
	return &StreamEndedError{TaskID: s.taskID, State: s.state}
}

// cut returns the error for a stream that failed after it started: an error
// the server sent, or the context's error, as they are; a transport failure
// wrapped in a *StreamEndedError.
func (s *streamTracker) cut(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var te *TransportError
	if errors.As(err, &te) {
		return &StreamEndedError{TaskID: s.taskID, State: s.state, Err: err}
	}
	return err
}
