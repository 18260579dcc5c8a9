package taskstore

// A task's generation (the A2A 1.1 preview, spec §3.2.7) starts at 1 when
// the task is made and goes up by one with each change, each change being
// one emitted event that carries the generation after it; no two events of
// a task share one. Every event a store logs for a task is such a change —
// the Task that makes it, each status update (one that keeps the state is
// an emitted event all the same: counting it keeps events' generations
// distinct), each artifact addition or update — numbered from 1 by its
// sequence number, and a follow-up message or a direct reply is not logged
// as an event (a conditional follow-up, whose acceptance must be a change,
// is written with a WORKING status update, which is one). So a task's generation is the sequence number of its last
// event, and an event's is its own: no store keeps a counter of its own,
// a restart or a failover keeps it as it keeps the sequence, and the
// generation never rides in the shared events themselves (the core sets it
// on what a 1.1 caller is sent). Stores report it on the tasks they return
// (Task.generation). A rule that counted otherwise (the timeline the
// specification is discussing, one generation per timeline entry) would
// change this function, and make stores keep it beside the sequence.

// Generation returns the generation of a task whose last event has
// sequence number seq, which is also the generation that event carries.
func Generation(seq uint64) int64 { return int64(seq) }
