package check

import (
	"time"

	"parley.dev/parley/a2a"
)

// event is one event of a stream: a Server-Sent Event, or a message of a
// gRPC server-streaming call.
type event struct {
	ID    string // SSE: the value of the id: line
	HasID bool   // SSE: the event had an id: line
	Data  []byte
	At    time.Duration // when it arrived, from the start of the call

	Resp      *a2a.StreamResponse // decoded payload
	Err       *wireError          // an error carried by the event
	DecodeErr error               // the data could not be decoded
}

// kind names the payload of an event, for reports.
func (e *event) kind() string {
	switch {
	case e.Err != nil:
		return "error(" + e.Err.name() + ")"
	case e.DecodeErr != nil:
		return "undecodable"
	case e.Resp.GetTask() != nil:
		return "task(" + stateName(e.Resp.GetTask().GetStatus().GetState()) + ")"
	case e.Resp.GetStatusUpdate() != nil:
		return "status(" + stateName(e.Resp.GetStatusUpdate().GetStatus().GetState()) + ")"
	case e.Resp.GetArtifactUpdate() != nil:
		return "artifact(" + abridge(a2a.JoinText(e.Resp.GetArtifactUpdate().GetArtifact().GetParts()), 24) + ")"
	case e.Resp.GetMessage() != nil:
		return "message(" + abridge(a2a.JoinText(e.Resp.GetMessage().GetParts()), 24) + ")"
	}
	return "empty"
}

// state returns the task state an event reports, if any.
func (e *event) state() a2a.TaskState {
	if t := e.Resp.GetTask(); t != nil {
		return t.GetStatus().GetState()
	}
	return e.Resp.GetStatusUpdate().GetStatus().GetState()
}

// lastKind names the last event's payload, "none" without events.
func lastKind(evs []*event) string {
	if len(evs) == 0 {
		return "none"
	}
	return evs[len(evs)-1].kind()
}

// lastState is the task state of the last event (UNSPECIFIED without
// events).
func lastState(evs []*event) a2a.TaskState {
	if len(evs) == 0 {
		return a2a.TaskState_TASK_STATE_UNSPECIFIED
	}
	return evs[len(evs)-1].state()
}

// streamTaskID returns the id of the task a stream reports on.
func streamTaskID(evs []*event) string {
	for _, ev := range evs {
		if t := ev.Resp.GetTask(); t != nil {
			return t.GetId()
		}
		if s := ev.Resp.GetStatusUpdate(); s != nil {
			return s.GetTaskId()
		}
	}
	return ""
}

// tail lists the kinds of a subscription's events after its snapshot.
func tail(evs []*event) []string {
	var out []string
	for i, ev := range evs {
		if i == 0 && ev.Resp.GetTask() != nil {
			continue
		}
		out = append(out, ev.kind())
	}
	return out
}

// settledTerminal reports whether a stream has reached the point where it
// must close: a Message, a terminal state, or an error.
func settledTerminal(evs []*event) bool {
	if len(evs) == 0 {
		return false
	}
	last := evs[len(evs)-1]
	return last.Resp.GetMessage() != nil || a2a.IsTerminal(last.state()) || last.Err != nil
}
