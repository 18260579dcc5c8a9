package a2a

// EventKind names the payload a StreamEvent carries. Its values are the
// member names of a StreamResponse on the wire (§4.2 of the A2A
// specification), so they print the way the JSON reads.
type EventKind string

// The kinds of stream event.
const (
	// EventNone is the kind of an event with no payload (a zero StreamEvent).
	EventNone EventKind = ""
	// EventTask is a Task: a snapshot of the task as it stands.
	EventTask EventKind = "task"
	// EventStatusUpdate is a TaskStatusUpdateEvent: the task changed state.
	EventStatusUpdate EventKind = "statusUpdate"
	// EventArtifactUpdate is a TaskArtifactUpdateEvent: an artifact, or a
	// chunk of one.
	EventArtifactUpdate EventKind = "artifactUpdate"
	// EventMessage is a Message: the agent's whole answer, with no task (a
	// message-only stream).
	EventMessage EventKind = "message"
)

// Kind returns which payload the event carries, so a consumer can switch
// on one value instead of testing four getters.
func (e StreamEvent) Kind() EventKind {
	switch e.Response.GetPayload().(type) {
	case *StreamResponse_Task:
		return EventTask
	case *StreamResponse_StatusUpdate:
		return EventStatusUpdate
	case *StreamResponse_ArtifactUpdate:
		return EventArtifactUpdate
	case *StreamResponse_Message:
		return EventMessage
	}
	return EventNone
}

// TaskID returns the id of the task the event is about: the Task's id, the
// update's taskId, or the message's taskId ("" for a message outside any
// task).
func (e StreamEvent) TaskID() string {
	r := e.Response
	switch e.Kind() {
	case EventTask:
		return r.GetTask().GetId()
	case EventStatusUpdate:
		return r.GetStatusUpdate().GetTaskId()
	case EventArtifactUpdate:
		return r.GetArtifactUpdate().GetTaskId()
	case EventMessage:
		return r.GetMessage().GetTaskId()
	}
	return ""
}

// ContextID returns the contextId the event carries, whatever its kind.
func (e StreamEvent) ContextID() string {
	r := e.Response
	switch e.Kind() {
	case EventTask:
		return r.GetTask().GetContextId()
	case EventStatusUpdate:
		return r.GetStatusUpdate().GetContextId()
	case EventArtifactUpdate:
		return r.GetArtifactUpdate().GetContextId()
	case EventMessage:
		return r.GetMessage().GetContextId()
	}
	return ""
}

// State returns the task state the event reports: a Task's or a status
// update's. It is StateUnspecified for an artifact update and for a
// message, which report no state.
//
// A Task event is a snapshot (see Snapshot): its state may be one the
// consumer has already seen.
func (e StreamEvent) State() TaskState {
	switch e.Kind() {
	case EventTask:
		return e.Response.GetTask().GetStatus().GetState()
	case EventStatusUpdate:
		return e.Response.GetStatusUpdate().GetStatus().GetState()
	}
	return StateUnspecified
}

// Snapshot reports whether the event is a Task: the task as it stands when
// the stream starts, not a change. A stream about an existing task (a
// follow-up sent with SendStreamingMessage, or SubscribeToTask) begins with
// one, and it still shows the state the task was in: after answering a
// question the first event says INPUT_REQUIRED again. A loop that prompts
// the user on INPUT_REQUIRED must skip snapshots, or it asks twice:
//
//	if ev.State() == a2a.StateInputRequired && !ev.Snapshot() { … }
func (e StreamEvent) Snapshot() bool {
	return e.Kind() == EventTask
}

// Final reports whether the event brings the task to a stop: a terminal
// state, an interrupted state (INPUT_REQUIRED, AUTH_REQUIRED) reported as
// news rather than in a Snapshot, or a Message, the whole of a message-only
// stream. A snapshot of an interrupted task is not final: the follow-up it
// answers is being worked on.
//
// A stream need not end at every final event: Parley's SendStreamingMessage
// stays open through AUTH_REQUIRED, and SubscribeToTask through both
// interrupted states, until a terminal one.
func (e StreamEvent) Final() bool {
	if e.Kind() == EventMessage {
		return true
	}
	s := e.State()
	return IsTerminal(s) || (IsInterrupted(s) && !e.Snapshot())
}

// Message returns the message the event brings: a Message payload, or the
// message of the status a Task or a status update reports (what the agent
// says with the state, such as the question of an INPUT_REQUIRED). It is
// nil for an artifact update and for a status without a message.
func (e StreamEvent) Message() *Message {
	r := e.Response
	switch e.Kind() {
	case EventMessage:
		return r.GetMessage()
	case EventTask:
		return r.GetTask().GetStatus().GetMessage()
	case EventStatusUpdate:
		return r.GetStatusUpdate().GetStatus().GetMessage()
	}
	return nil
}

// Artifact returns the artifact, or the chunk of one, an artifact update
// carries; nil for any other event. To put chunks back together use an
// ArtifactAssembler.
func (e StreamEvent) Artifact() *Artifact {
	return e.Response.GetArtifactUpdate().GetArtifact()
}

// Generation returns the task generation the event carries (the A2A 1.1
// preview, spec §3.2.7): the generation of the task after the change the
// event reports, on a Task, a status update or an artifact update sent to
// a 1.1 caller; 0 for a direct reply (a Message) and for an event without
// one (every event sent to a 1.0 caller).
func (e StreamEvent) Generation() int64 {
	switch p := e.Response.GetPayload().(type) {
	case *StreamResponse_Task:
		return p.Task.GetGeneration()
	case *StreamResponse_StatusUpdate:
		return p.StatusUpdate.GetGeneration()
	case *StreamResponse_ArtifactUpdate:
		return p.ArtifactUpdate.GetGeneration()
	}
	return 0
}
