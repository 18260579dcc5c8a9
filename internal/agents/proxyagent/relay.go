package proxyagent

import (
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// event relays one upstream event into the Parley task. done reports that
// nothing more is to be relayed: a direct reply, a terminal state, or
// INPUT_REQUIRED (which ends a stream); AUTH_REQUIRED keeps the upstream
// stream open, so relaying goes on (decision B2, spec §7.6.1).
func (rl *relay) event(ev a2a.StreamEvent) (done bool, err error) {
	rl.events++
	r := ev.Response
	switch ev.Kind() {
	case a2a.EventMessage:
		return true, rl.em.Reply(ownMessage(r.GetMessage()))
	case a2a.EventTask:
		t := r.GetTask()
		rl.a.ids.put(rl.req, t.GetId(), t.GetContextId())
		for _, art := range t.GetArtifacts() {
			if !rl.known(art.GetArtifactId()) {
				if err := rl.em.Artifact(art); err != nil {
					return true, err
				}
			}
		}
		if rl.stale(t.GetStatus().GetState()) {
			return false, nil
		}
		return rl.status(t.GetStatus())
	case a2a.EventStatusUpdate:
		u := r.GetStatusUpdate()
		rl.a.ids.put(rl.req, u.GetTaskId(), u.GetContextId())
		return rl.status(u.GetStatus())
	case a2a.EventArtifactUpdate:
		u := r.GetArtifactUpdate()
		rl.a.ids.put(rl.req, u.GetTaskId(), u.GetContextId())
		return false, rl.artifact(u)
	}
	return false, nil // an empty event: nothing to relay
}

// known reports whether the Parley task had the artifact before this
// message (a follow-up's snapshot repeats the task's old artifacts).
func (rl *relay) known(id string) bool {
	for _, a := range rl.req.Task.GetArtifacts() {
		if a.GetArtifactId() == id {
			return true
		}
	}
	return false
}

// stale reports whether the state of the Task that opens an upstream
// stream is not news: SUBMITTED (Parley's task starts with the next
// state, or with a SUBMITTED status update), or, on a follow-up, the
// interrupted state the follow-up answers.
func (rl *relay) stale(s a2a.TaskState) bool {
	if !rl.streaming {
		return false // a blocking answer is the task after the message
	}
	return s == a2a.TaskState_TASK_STATE_SUBMITTED || (rl.req.Task != nil && a2a.IsInterrupted(s))
}

// status relays a status; SUBMITTED is relayed only for a new task (a
// follow-up's task is already under way).
func (rl *relay) status(st *a2a.TaskStatus) (done bool, err error) {
	state := st.GetState()
	if state == a2a.TaskState_TASK_STATE_UNSPECIFIED || (state == a2a.TaskState_TASK_STATE_SUBMITTED && rl.req.Task != nil) {
		return false, nil
	}
	var m *a2a.Message
	if st.GetMessage() != nil {
		m = ownMessage(st.GetMessage())
		stamp(m, rl.upstreamTask(), rl.a.ids.context(rl.req.Context()))
	}
	if err := rl.em.Status(state, m); err != nil {
		return true, err
	}
	if a2a.IsTerminal(state) || a2a.IsInterrupted(state) {
		rl.settled = true
	}
	return a2a.IsTerminal(state) || state == a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil
}

// artifact relays an artifact chunk with its flags.
func (rl *relay) artifact(u *a2a.TaskArtifactUpdateEvent) error {
	art := u.GetArtifact()
	switch {
	case !u.GetAppend() && u.GetLastChunk():
		return rl.em.Artifact(art)
	case !u.GetAppend():
		return rl.em.StartArtifact(art)
	case u.GetLastChunk():
		return rl.em.FinishArtifact(art)
	}
	return rl.em.AppendArtifact(art)
}

// ownMessage is an upstream message without the upstream's task and
// context ids, which the core replaces with Parley's, and without a
// MetadataKey member: only the agent's own stamp is kept there.
func ownMessage(m *a2a.Message) *a2a.Message {
	m = proto.Clone(m).(*a2a.Message)
	m.TaskId, m.ContextId = "", ""
	unstamp(m)
	return m
}

// taskEvent wraps a task as a stream event.
func taskEvent(t *a2a.Task) a2a.StreamEvent {
	return a2a.StreamEvent{Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: t}}}
}
