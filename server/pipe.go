package server

// Pipelined events. Every store writes several events of a task at once
// (taskstore.BatchAppender), so an event that neither ends nor
// interrupts the task (an artifact chunk, a SUBMITTED or WORKING status,
// and the event that makes the task, queueCreate) is validated and
// queued, and the agent goes on at once. A writer goroutine of the run
// stores the queue in one write and publishes it once stored; the status
// that ends or interrupts the agent's work takes the queue into its own
// write (append). So an agent that emits several events without pausing
// costs a few writes, not one per event (one, task included, when it
// answers without pausing), and its subscribers receive the events of one
// write together (one flush).
//
// The run's rule holds: an event is published only once stored, every
// event in order. A task whose making is queued does not exist yet for
// anyone: GetTask does not find it, and a returnImmediately answer waits
// until it is stored. Before anything else is written for the task (a
// status that settles it, a push configuration) or the execution ends,
// the queue is stored and published first (drain). The agent learns that
// a queued event could not be stored from its next call of the Emitter,
// which fails with the error; the events queued after it are dropped,
// never stored nor published, and the task ends FAILED when the execution
// does (made FAILED, if its making was what failed).
//
// With Options.Cluster a write may lose its first sequence number to
// another replica (ErrSeq), as one event's may (run.append): the run
// reads what the other wrote, and the agent's next call fails with
// ErrTaskClosed (the task ended there) or ErrTaskTaken (the other
// replica runs it now, and this execution gave way).

import (
	"context"
	"errors"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// maxQueued bounds how many events an agent may queue ahead of the store:
// the one that reaches it waits until the queue is stored.
const maxQueued = 256

// pipeWrite is one write of queued events.
type pipeWrite struct {
	create  *a2a.Task // the task the write makes, with evs[0], or nil
	evs     []taskstore.Event
	done    chan struct{} // closed when the store answered
	err     error         // its answer, set before done is closed
	settled bool          // its outcome was applied to the run (settle)
}

// queueCreate queues the event that makes the run's task, before the
// agent's first update: the task is stored by the next write, with the
// events queued after it (CreateTaskBatch). Until then the task does not
// exist, for this process as for any other (r.task is nil); only the
// agent's execution, which knows its id, can reach it. Callers hold r.mu.
func (r *run) queueCreate() {
	t, made := r.newTask()
	r.unmade = t
	r.queue = append(r.queue, made.Response)
}

// creating reports whether the run's task is being made: queued
// (queueCreate) or in a write in flight. Callers hold r.mu.
func (r *run) creating() bool {
	return r.unmade != nil || (r.inflight != nil && r.inflight.create != nil)
}

// enqueue queues a validated event for the next write, and makes sure the
// run's writer will store it. Callers hold r.mu.
func (r *run) enqueue(ctx context.Context, ev *a2a.StreamResponse) {
	r.queue = append(r.queue, ev)
	if len(r.queue) >= maxQueued {
		r.drain(ctx) // the agent is far ahead of the store: wait for it
		return
	}
	if !r.writing {
		r.writing = true
		r.s.ref(r)
		r.s.wg.Add(1)
		ctx := uncancelled(ctx)
		r.s.workers.run(func() { r.writeQueued(ctx) })
	}
}

// writeQueued is the run's writer: it stores the queue in one write,
// publishes it once stored, and repeats until the queue is empty. It takes
// the queue only when it runs, so the events an agent emits without
// pausing are stored together, or with the status that settles the task.
func (r *run) writeQueued(ctx context.Context) {
	defer r.s.wg.Done()
	r.mu.Lock()
	for r.inflight == nil && len(r.queue) > 0 && r.pipeErr == nil {
		w := r.nextWrite(nil)
		r.mu.Unlock()
		w.err = r.write(ctx, w)
		close(w.done)
		r.mu.Lock()
		r.settle(w)
	}
	r.writing = false
	r.mu.Unlock()
	r.s.release(r)
}

// nextWrite takes the queue, followed by tail when not nil, as the write
// in flight. Callers hold r.mu and have settled the previous write.
func (r *run) nextWrite(tail *a2a.StreamResponse) *pipeWrite {
	w := &pipeWrite{evs: make([]taskstore.Event, 0, len(r.queue)+1), done: make(chan struct{})}
	push := r.s.delivering()
	for i, ev := range r.queue {
		w.evs = append(w.evs, taskstore.Event{Seq: r.seq + 1 + uint64(i), Response: ev, Push: push})
	}
	if tail != nil {
		w.evs = append(w.evs, taskstore.Event{Seq: r.seq + 1 + uint64(len(r.queue)), Response: tail, Push: push})
	}
	if r.unmade != nil {
		w.create, r.unmade = r.unmade, nil
		w.evs[0].PushConfig = r.pendingPush
	}
	clear(r.queue)
	r.queue = r.queue[:0]
	r.inflight = w
	return w
}

// write stores w's events, making the task first when w does.
func (r *run) write(ctx context.Context, w *pipeWrite) error {
	if w.create != nil {
		return r.s.store.CreateTaskBatch(ctx, r.scope, w.create, w.evs)
	}
	return r.s.store.AppendBatch(ctx, r.scope, r.id, w.evs)
}

// settle waits for w's answer and, the first time, applies it: the
// events are published, or the failure recorded and the queue dropped.
// Callers hold r.mu.
func (r *run) settle(w *pipeWrite) {
	<-w.done
	if w.settled {
		return
	}
	w.settled = true
	r.inflight = nil
	if w.err != nil {
		clear(r.queue)
		r.queue = r.queue[:0]
		r.pipeErr = r.lostSeq(context.Background(), w.err)
		if r.pipeErr == nil {
			r.pipeErr = w.err // another replica wrote, yet runs nothing here: the events are lost all the same
		}
		if r.pipeErr == w.err {
			r.s.log.Error("could not store the agent's events: its next call fails", "task", r.id, "err", w.err)
		}
		return
	}
	evs := w.evs
	if w.create != nil {
		r.made(w.create, evs[0].Response)
		evs = evs[1:]
	} else {
		r.s.announce(r.id)
	}
	for _, ev := range evs {
		r.published(ev.Response)
	}
}

// uncancelled returns ctx without its cancellation: ctx itself when it
// has none (an execution's stored context), so that no context is made
// for each write.
func uncancelled(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// pipeFailure is what the agent's call returns once a pipelined write
// failed.
func (r *run) pipeFailure() error {
	if errors.Is(r.pipeErr, ErrTaskClosed) || errors.Is(r.pipeErr, ErrTaskTaken) {
		return r.pipeErr
	}
	return a2a.Internal(r.pipeErr)
}

// settleInflight waits for the write in flight, if any, applies its
// outcome, and returns its error. Callers hold r.mu.
func (r *run) settleInflight() error {
	w := r.inflight
	if w == nil {
		return nil
	}
	r.settle(w)
	return w.err
}

// drain stores and publishes every queued event, waiting for the write in
// flight first. The write is not canceled with ctx. Callers hold r.mu.
func (r *run) drain(ctx context.Context) {
	r.settleInflight()
	if len(r.queue) > 0 {
		r.writeNow(uncancelled(ctx), nil)
	}
}

// writeNow stores the queue followed by tail (when not nil) in one write,
// publishing the queued events when it succeeds, and returns its error.
// The tail is the caller's to publish. Callers hold r.mu and have settled
// the write in flight.
func (r *run) writeNow(ctx context.Context, tail *a2a.StreamResponse) error {
	w := r.nextWrite(tail)
	w.err = r.write(ctx, w)
	close(w.done)
	if tail != nil {
		w.evs = w.evs[:len(w.evs)-1]
	}
	r.settle(w)
	return w.err
}
