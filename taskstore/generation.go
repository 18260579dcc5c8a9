package taskstore

import "parley.dev/parley/a2a"

// A task's generation (the A2A 1.1 preview, spec §3.2.7) counts the
// changes that each emit one event: 1 when the task is made, then one more
// per change, carried by the event of the change as the generation after
// it, so that no two events of a task carry the same one. The core stamps
// every event it writes with NextGeneration before handing it over; a
// store keeps the generation of the last event it applied (Apply), with
// the task, and returns it with the task.

// NextGeneration returns the generation of a task after the event ev,
// given its generation before (0 for a task not made yet). It is the one
// rule of what counts as a change: the event that makes the task; every
// status update (a change of state, spec §3.2.7, or a status that keeps
// the state but is an emitted event all the same: counting it keeps the
// rule that no two events share a generation); every artifact addition or
// update (each chunk). A direct reply (a Message) is not a change of a
// task. The timeline the specification is discussing (one generation per
// timeline entry) would change this function only.
func NextGeneration(prev int64, ev *a2a.StreamResponse) int64 {
	switch ev.GetPayload().(type) {
	case *a2a.StreamResponse_Task, *a2a.StreamResponse_StatusUpdate, *a2a.StreamResponse_ArtifactUpdate:
		return prev + 1
	}
	return prev
}

// Stamp sets on ev the generation after it (NextGeneration of prev) and
// returns it. Events are immutable once handed over: Stamp is for an
// event its maker has not yet given to a store or a subscriber.
func Stamp(prev int64, ev *a2a.StreamResponse) int64 {
	g := NextGeneration(prev, ev)
	if g == prev {
		return g
	}
	switch p := ev.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		p.Task.Generation = g
	case *a2a.StreamResponse_StatusUpdate:
		p.StatusUpdate.Generation = g
	case *a2a.StreamResponse_ArtifactUpdate:
		p.ArtifactUpdate.Generation = g
	}
	return g
}

// GenerationOf returns the generation an event carries: 0 for an event
// without one (a Message, or an event written before generations were
// kept).
func GenerationOf(ev *a2a.StreamResponse) int64 {
	switch p := ev.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		return p.Task.GetGeneration()
	case *a2a.StreamResponse_StatusUpdate:
		return p.StatusUpdate.GetGeneration()
	case *a2a.StreamResponse_ArtifactUpdate:
		return p.ArtifactUpdate.GetGeneration()
	}
	return 0
}
