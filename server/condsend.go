package server

// The conditional send of the A2A 1.1 preview (spec dev-1.1 §3.2.2,
// §3.2.7): a follow-up whose configuration.ifGenerationMatch is not the
// task's current generation is refused with TaskGenerationMismatchError;
// on a message that makes a new task the field is ignored (startTask never
// reads it). Calls served in 1.0 or 0.3 never get here with the field set:
// checkSend clears it (internal/version.ClearRequest).
//
// The check and the write are one step. A follow-up's message is added to
// the history without an event (taskstore.Event.Message), which would
// leave the generation where it was: two sends expecting generation G
// would both match, on two replicas as in one process. So a conditional
// follow-up's acceptance is itself a change of the task, the one the spec
// counts (§3.2.7: a TaskState transition): the core writes the message
// together with a WORKING status update (the task takes the input and
// works on it) in one Append numbered G+1, which the store fences by
// sequence number (taskstore.ErrSeq), as it fences every event. Hence:
//
//   - in one process, the check (r.seq under r.mu) and the write happen
//     under the run's lock, which every writer of the task holds: of N
//     sends expecting G, the first to take the lock writes G+1, and the
//     others find G+1 and are refused;
//   - across replicas (Options.Cluster), a run may lag the store's log,
//     so a mismatch is decided only after the run read the log up to
//     its end (run.catchUp), and a match is decided by the store itself:
//     of two replicas that both matched G, the store takes one Append
//     G+1 and refuses the other (ErrSeq), which then reads the log and
//     answers the mismatch with the generation it found. Nothing is
//     written for the refused send.
//
// A refused send does not use up its messageId: the check comes before
// the message is recorded (taskstore.Messages), and a conditional
// follow-up records its messageId only once its Append won. The cost of
// that order is a window without a record between the Append and
// PutMessage: a process that stops inside it leaves the message in the
// history with no record, and a resend of it is then refused as stale
// (the generation moved) rather than answered as a resend. A follow-up
// sent without ifGenerationMatch is recorded and written as before, with
// no event of its own.

import (
	"context"
	"errors"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// expectedGeneration returns the generation a send's configuration
// expects of the task it continues (ifGenerationMatch), if it names one.
func expectedGeneration(cfg *a2a.SendMessageConfiguration) (int64, bool) {
	if cfg == nil || cfg.IfGenerationMatch == nil {
		return 0, false
	}
	return *cfg.IfGenerationMatch, true
}

// checkGeneration refuses a follow-up whose expected generation (cfg's
// ifGenerationMatch) is not the task's, before anything is written. With
// Options.Cluster the run reads the store's log first, so that a run
// behind another replica's writes does not refuse a send that matches
// the stored task. Callers hold r.mu and have loaded the task.
func (r *run) checkGeneration(ctx context.Context, cfg *a2a.SendMessageConfiguration) error {
	want, ok := expectedGeneration(cfg)
	if !ok || want == taskstore.Generation(r.seq) {
		return nil
	}
	if r.s.opts.Cluster != nil {
		if err := r.catchUp(ctx); err != nil {
			return a2a.Internal(err)
		}
		if want == taskstore.Generation(r.seq) {
			return nil
		}
	}
	return a2a.GenerationMismatch(r.id, want, taskstore.Generation(r.seq))
}

// acceptConditional writes a conditional follow-up's message with the
// WORKING status update that its acceptance is, in one Append numbered
// after the generation the send expected (checkGeneration found it
// current), and publishes the update. When the store refuses the number
// (another replica wrote it first) it reads what was written and returns
// the mismatch, having written nothing. Callers hold r.mu.
func (r *run) acceptConditional(ctx context.Context, msg *a2a.Message) error {
	expected := taskstore.Generation(r.seq)
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: r.id, ContextId: r.task.ContextId,
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Timestamp: a2a.Timestamp(r.s.now())},
	}}}
	err := r.s.store.Append(ctx, r.scope, r.id, taskstore.Event{Seq: r.seq + 1, Message: msg, Response: ev, Push: r.s.delivering()})
	if errors.Is(err, taskstore.ErrSeq) {
		if err := r.catchUp(ctx); err != nil {
			return a2a.Internal(err)
		}
		return a2a.GenerationMismatch(r.id, expected, taskstore.Generation(r.seq))
	}
	if err != nil {
		return a2a.Internal(err)
	}
	r.task.History = append(r.task.History, msg)
	r.s.announce(r.id)
	r.published(ev)
	return nil
}
