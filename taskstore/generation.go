package taskstore

import "parley.dev/parley/a2a"

// A task's generation (the A2A 1.1 preview, spec §3.2.7 as the timeline
// change, PR #2129, words it) starts at 1 when the task is made and goes
// up by one with each change: a timeline entry appended — a status update
// (one that keeps the state included) or a client's message — and each
// artifact addition or update. Every such change is one event of the
// task's log, numbered from 1 by its sequence number: the Task that makes
// it, each status update, each artifact update, and each follow-up
// message of the client, logged as a ClientMessage (which the server
// sends to no subscriber: §3.2.7 lets a client message's entry reach
// subscribers as a gap they reconcile with GetTask). So a task's
// generation is the sequence number of its last event, and an event's is
// its own: no store keeps a counter of its own, a restart or a failover
// keeps it as it keeps the sequence, and the generation never rides in
// the shared events themselves (the core sets it on what a 1.1 caller is
// sent). Stores report it on the tasks they return (Task.generation). A
// direct reply (a Message answered instead of a task) is no event of any
// task's log.

// Generation returns the generation of a task whose last event has
// sequence number seq, which is also the generation that event carries.
func Generation(seq uint64) int64 { return int64(seq) }

// ClientMessage returns the logged event of a client's follow-up message
// m: a stream response holding the message, which Append logs (with m as
// Event.Message too, so that the history takes it) under the task's next
// sequence number. It is a timeline entry (spec §3.2.8), not an event a
// subscriber is sent (IsClientMessage).
func ClientMessage(m *a2a.Message) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: m}}
}

// IsClientMessage reports whether a logged event of a task is a client's
// message (ClientMessage): the only message a task's log holds. Readers
// that forward a task's log to its subscribers skip it, keeping its
// sequence number.
func IsClientMessage(ev *a2a.StreamResponse) bool { return ev.GetMessage() != nil }
