package server

// Pipelined artifact chunks. When the store writes several events of a
// task at once (taskstore.BatchAppender) and the server runs alone, an
// agent's artifact chunk is validated, queued and handed to a write while
// the agent goes on: the chunks queued while one write commits go in the
// next, so a fast stream costs a few writes, not one per chunk, and its
// subscribers receive the chunks of a write together (one flush).
//
// The run's rule holds: an event is published only once stored, every
// event in order. A chunk is published when its write commits; before
// anything else is written for the task (a status, a push configuration)
// or its execution ends, the queue is written and published first
// (drain). The agent learns that a chunk could not be stored from its
// next call of the Emitter, which fails with the error; the chunks queued
// after it are dropped, never stored nor published, and the task ends
// FAILED when the execution does.

import (
	"context"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// maxQueued bounds how many chunks an agent may queue ahead of the store:
// the next one waits for the write in flight.
const maxQueued = 256

// pipeWrite is one write of queued chunks.
type pipeWrite struct {
	evs     []taskstore.Event
	done    chan struct{} // closed when the store answered
	err     error         // its answer, set before done is closed
	settled bool          // its outcome was applied to the run (settle)
}

// queueChunk queues an artifact chunk for the next write, and starts that
// write when none is in flight. Callers hold r.mu.
func (r *run) queueChunk(ctx context.Context, ev *a2a.StreamResponse) {
	r.queue = append(r.queue, ev)
	if w := r.inflight; w != nil {
		if len(r.queue) < maxQueued {
			return
		}
		r.settle(w) // the agent is far ahead: wait for the store
	}
	if r.inflight == nil && len(r.queue) > 0 {
		w := r.nextWrite(nil)
		r.s.ref(r)
		r.s.wg.Add(1)
		go r.writeQueued(ctx, w)
	}
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
	clear(r.queue)
	r.queue = r.queue[:0]
	r.inflight = w
	return w
}

// writeQueued stores w, then the chunks queued meanwhile, until the queue
// is empty; each write's chunks are published as it commits.
func (r *run) writeQueued(ctx context.Context, w *pipeWrite) {
	defer r.s.wg.Done()
	for w != nil {
		w.err = r.s.batcher.AppendBatch(ctx, r.scope, r.id, w.evs)
		close(w.done)
		r.mu.Lock()
		r.settle(w)
		w = nil
		if r.inflight == nil && len(r.queue) > 0 && r.pipeErr == nil {
			w = r.nextWrite(nil)
		}
		r.mu.Unlock()
	}
	r.s.release(r)
}

// settle waits for w's answer and, the first time, applies it: the
// chunks are published, or the failure recorded and the queue dropped.
// Callers hold r.mu.
func (r *run) settle(w *pipeWrite) {
	<-w.done
	if w.settled {
		return
	}
	w.settled = true
	r.inflight = nil
	if w.err != nil {
		r.pipeErr = w.err
		clear(r.queue)
		r.queue = r.queue[:0]
		r.s.log.Error("could not store artifact chunks: the agent's next call fails", "task", r.id, "err", w.err)
		return
	}
	for _, ev := range w.evs {
		r.published(ev.Response)
	}
}

// drain stores and publishes every queued chunk, waiting for the write in
// flight first. The write is not canceled with ctx. Callers hold r.mu.
func (r *run) drain(ctx context.Context) {
	if r.inflight != nil {
		r.settle(r.inflight)
	}
	if len(r.queue) > 0 {
		r.writeNow(context.WithoutCancel(ctx), nil)
	}
}

// writeNow stores the queue followed by tail (not nil) in one write,
// publishing the queued chunks when it succeeds, and returns its error.
// Callers hold r.mu and have settled the write in flight.
func (r *run) writeNow(ctx context.Context, tail *a2a.StreamResponse) error {
	w := r.nextWrite(tail)
	w.err = r.s.batcher.AppendBatch(ctx, r.scope, r.id, w.evs)
	close(w.done)
	if tail == nil {
		r.settle(w)
		return w.err
	}
	// The tail is the caller's to publish.
	w.evs = w.evs[:len(w.evs)-1]
	r.settle(w)
	return w.err
}
