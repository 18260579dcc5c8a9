package server

// The conditional send of the A2A 1.1 preview (spec dev-1.1 §3.2.2,
// §3.2.7): a follow-up whose configuration.ifGenerationMatch is not the
// task's current generation is refused with TaskGenerationMismatchError;
// on a message that makes a new task the field is ignored (startTask never
// reads it). Calls served in 1.0 or 0.3 never get here with the field set:
// checkSend clears it (internal/version.ClearRequest).
//
// The check and the write are one step. Under the timeline's counting
// rule (spec PR #2129 §3.2.7, §3.2.8) every follow-up message is a
// timeline entry that advances the generation by one: the core logs it
// as an event of its own (entered, below), numbered G+1, which the store
// fences by sequence number (taskstore.ErrSeq) as it fences every event.
// Hence:
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
// sent without ifGenerationMatch is recorded first and then written the
// same way.

import (
	"context"
	"errors"
	"slices"

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

// enterFollowUp writes an accepted follow-up's message as the task's next
// timeline entry (taskstore.ClientMessage): logged under the sequence
// number after the run's last one, so that it advances the generation
// (spec PR #2129 §3.2.7), and added to the history. It is no stream
// event: subscribers see the gap in the generations and reconcile with
// GetTask (§3.2.7 "Event Ordering"). When the store refuses the number
// (another replica wrote the task since the run last read it), the run
// reads what was written; a conditional follow-up (expected set) then
// answers the mismatch, having written nothing. Any other one is refused
// when what was written holds another client's message (a follow-up
// given to another replica at the same moment won: its agent works on
// it, as one process refuses a second follow-up while the first's agent
// works), and is otherwise checked again (refuseFollowUp) and written
// after it. Callers hold r.mu.
func (r *run) enterFollowUp(ctx context.Context, msg *a2a.Message, conditional bool) error {
	expected := taskstore.Generation(r.seq)
	if busy, err := r.inputPending(ctx, msg, conditional); err != nil || busy {
		if err == nil {
			err = busyWith(r.id)
		}
		return err
	}
	for {
		ev := taskstore.ClientMessage(msg)
		err := r.s.store.Append(ctx, r.scope, r.id, taskstore.Event{Seq: r.seq + 1, Message: msg, Response: ev})
		if err == nil {
			r.entered(msg)
			r.s.announce(r.id) // to the replicas that follow the task
			return nil
		}
		if !errors.Is(err, taskstore.ErrSeq) {
			return a2a.Internal(err)
		}
		seen := len(r.task.History)
		if err := r.catchUp(ctx); err != nil {
			return a2a.Internal(err)
		}
		if conditional {
			return a2a.GenerationMismatch(r.id, expected, taskstore.Generation(r.seq))
		}
		if slices.ContainsFunc(r.task.History[min(seen, len(r.task.History)):], func(m *a2a.Message) bool { return m.GetRole() == a2a.Role_ROLE_USER }) {
			return busyWith(r.id)
		}
		if err := r.refuseFollowUp(msg); err != nil {
			return err
		}
	}
}

// inputPending reports, with Options.Cluster, whether the task's last
// logged event is a client's message: another replica took a follow-up
// whose agent has not written yet (it works on it, and is the one to
// answer it), so this one is refused as busy, as one process refuses a
// second follow-up while the first's agent works. On one process the
// run's execution says so (refuseFollowUp).
//
// The run first reads the log to its end (catchUp): a run that has
// applied another replica's follow-up but not yet the status its agent
// wrote after it (INPUT_REQUIRED, asking for this very message) would
// otherwise take that follow-up for one still being worked on. When the
// log had more, the follow-up is checked again against the task as it
// now is: a conditional one (its generation was checked against the run's
// older view) is refused with the generation found, any other one by
// refuseFollowUp. Callers hold r.mu.
func (r *run) inputPending(ctx context.Context, msg *a2a.Message, conditional bool) (bool, error) {
	if r.s.opts.Cluster == nil || r.seq == 0 {
		return false, nil
	}
	expected := taskstore.Generation(r.seq)
	if err := r.catchUp(ctx); err != nil {
		return false, a2a.Internal(err)
	}
	if now := taskstore.Generation(r.seq); now != expected {
		if conditional {
			return false, a2a.GenerationMismatch(r.id, expected, now)
		}
		if err := r.refuseFollowUp(msg); err != nil {
			return false, err
		}
	}
	return r.followUpLogged(ctx)
}

// followUpLogged reports whether the task's last logged event is a
// client's message: a follow-up taken, on this replica or another, whose
// agent has not written yet. Callers hold r.mu and have read the log to
// its end.
func (r *run) followUpLogged(ctx context.Context) (bool, error) {
	evs, err := r.s.store.Events(ctx, r.scope, r.id, r.seq-1, 1)
	switch {
	case errors.Is(err, taskstore.ErrPruned):
		return false, nil
	case err != nil:
		return false, a2a.Internal(err)
	}
	return len(evs) == 1 && taskstore.IsClientMessage(evs[0].Response), nil
}

// entered applies a client message logged as a timeline entry to the run:
// the history takes it and the generation moves on, which wakes a long
// poll; no subscriber is sent anything. It announces nothing: the replica
// that wrote the message does (enterFollowUp), and one that read it from
// the log (absorb) would only have every follower read the log again.
// Callers hold r.mu.
func (r *run) entered(msg *a2a.Message) {
	r.task.History = append(r.task.History, msg)
	r.seq++
	r.entries++
	r.wake()
}
