package server

import (
	"context"
	"errors"
	"slices"
	"sync"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// run is the live state of one task in this process: its current snapshot,
// its subscribers and its active execution. The server keeps a run while
// anything refers to it (an execution, a stream, a waiting call) and drops
// it afterwards; the store stays the record of truth.
//
// Every change happens under mu, in this order: validate, persist, then
// publish. So a subscriber never sees an event a crash could take back, and
// every subscriber sees the same events in the same order.
type run struct {
	s     *Server
	id    string
	scope taskstore.Scope
	refs  int // guarded by s.mu

	mu     sync.Mutex
	loaded bool      // task was looked up (it may still be nil: new task)
	task   *a2a.Task // nil until the task exists
	seq    uint64    // sequence number of the last published event
	// entries counts the clients' messages entered as the task's log
	// events (entered): changes of the sequence that are not the agent's.
	entries uint64
	subs    map[*subscriber]struct{}
	waiters []chan struct{} // in-process callers woken on every change
	holds   int             // how many of them are long-poll holds (Server.hold)
	exec    *execution      // the active execution, if any
	reply   *a2a.Message    // that reply
	tail    *tail           // with Options.Cluster: the follower of the store's log (run.follow)
	// mayPush is false only while the task is known to have never had a
	// push configuration: a task this run created without one, which got
	// none since. Its events then skip the pusher's outbox lookup (see
	// run.queued). A task loaded from the store may have configurations.
	mayPush bool

	// Pipelined events (run.enqueue): numbered after seq, stored by a write
	// in flight or queued for the next, published once stored.
	queue    []*a2a.StreamResponse // events waiting for the next write
	inflight *pipeWrite            // the write in flight, nil when none
	writing  bool                  // the run's writer goroutine runs
	pipeErr  error                 // why a pipelined write failed, for the execution
	unmade   *a2a.Task             // the task the next write makes (queueCreate), or nil

	// The artifacts of task that are those of published events, shared
	// rather than copied (taskstore.ApplyBorrowing); kept for borrowedBy,
	// the task they were recorded for, and reset when task is another.
	borrowed   []*a2a.Artifact
	borrowedBy *a2a.Task

	// For a task that does not exist yet: what create needs.
	pendingMessage   *a2a.Message
	pendingContextID string
	pendingMessageID string
	pendingPush      *taskstore.PushConfig
}

// runKey identifies a run: the live-task registry is per scope, so a caller
// probing another scope's task id never touches that task's run
// (decision B12: another principal's task looks absent).
type runKey struct {
	scope taskstore.Scope
	id    string
}

// acquire returns the run for a task id, creating it if needed, and takes a
// reference that the caller must give back with release.
func (s *Server) acquire(id string, scope taskstore.Scope) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := runKey{scope, id}
	r := s.runs[k]
	if r == nil {
		// subs is made by the first subscriber: most runs serve a
		// blocking call, which waits (run.wait) without one.
		r = &run{s: s, id: id, scope: scope}
		s.runs[k] = r
	}
	r.refs++
	return r
}

// liveRuns returns the runs the server holds now.
func (s *Server) liveRuns() []*run {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make([]*run, 0, len(s.runs))
	for _, r := range s.runs {
		live = append(live, r)
	}
	return live
}

// ref takes one more reference on a run the caller already holds.
func (s *Server) ref(r *run) {
	s.mu.Lock()
	r.refs++
	s.mu.Unlock()
}

// release gives back a reference taken by acquire.
func (s *Server) release(r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.refs--
	if k := (runKey{r.scope, r.id}); r.refs == 0 && s.runs[k] == r {
		delete(s.runs, k)
	}
}

// releaseLocked releases a run whose lock the caller holds.
func (s *Server) releaseLocked(r *run) {
	r.mu.Unlock()
	s.release(r)
	r.mu.Lock()
}

// load reads the task from the store once. It returns TaskNotFoundError when
// the task does not exist in the run's scope. Callers hold r.mu.
func (r *run) load(ctx context.Context) error {
	if r.loaded {
		if r.task == nil {
			return taskNotFound(r.id)
		}
		return nil
	}
	t, seq, err := r.readTask(ctx)
	if err != nil {
		if errors.Is(err, taskstore.ErrNotFound) {
			return taskNotFound(r.id)
		}
		return a2a.Internal(err)
	}
	// The store's task may be shared (taskstore.Tasks.GetTask); the run
	// changes its own. The run's task carries no generation: r.seq is it
	// (taskstore.Generation), set on what a 1.1 caller is sent.
	t = a2a.CloneTask(t)
	t.Generation = 0
	r.task, r.seq, r.loaded, r.mayPush = t, seq, true, true
	return nil
}

// subscribe registers a subscriber, which has been given (as a snapshot or
// from the log) every event up to now. Callers hold r.mu.
func (r *run) subscribe() *subscriber {
	store, scope, id := r.s.store, r.scope, r.id
	sub := newSubscriber(r.seq, id, func(ctx context.Context, after uint64, limit int) ([]a2a.StreamEvent, error) {
		return store.Events(ctx, scope, id, after, limit)
	})
	if r.subs == nil {
		r.subs = map[*subscriber]struct{}{}
	}
	r.subs[sub] = struct{}{}
	return sub
}

// shed drops the run's copy of the task when all the run serves is
// streams and long-poll holds, which need nothing of it until the task
// changes: a task with idle subscribers or holds then costs them and the
// run, not a second copy of the task beside the store's (the aim: an idle
// stream or a hold costs what it holds, not the size of the task it
// watches; one per task as well as many on one). Whatever changes the task
// next loads it again (run.load), and the store has it as it was: every
// change is stored before it is published, and with nothing running or
// pending here, and no other replica (Options.Cluster), nothing else
// writes it. Callers hold r.mu.
func (r *run) shed() {
	if r.s.opts.Cluster != nil || r.task == nil || len(r.subs)+r.holds == 0 || len(r.waiters) > r.holds ||
		r.exec != nil || r.tail != nil || r.reply != nil || r.writing || r.inflight != nil ||
		len(r.queue) > 0 || r.unmade != nil || r.pendingMessage != nil {
		return
	}
	r.loaded, r.task = false, nil
}

// subscribeIf subscribes when want is true, and returns nil otherwise.
// Callers hold r.mu.
func (r *run) subscribeIf(want bool) *subscriber {
	if !want {
		return nil
	}
	return r.subscribe()
}

// unsubscribe removes a subscriber (idempotent).
func (r *run) unsubscribe(sub *subscriber) {
	r.mu.Lock()
	delete(r.subs, sub)
	r.unfollowIfIdle()
	r.mu.Unlock()
	sub.close(nil)
}

// wait returns a channel that is signalled after every change of the run.
// Unlike a subscriber it carries no events and is never cut off, so a
// blocking call can never miss the state it waits for. Callers hold r.mu
// and must call unwait.
func (r *run) wait() chan struct{} {
	ch := make(chan struct{}, 1)
	r.waiters = append(r.waiters, ch)
	return ch
}

// unwait removes a waiter.
func (r *run) unwait(ch chan struct{}) {
	r.mu.Lock()
	if i := slices.Index(r.waiters, ch); i >= 0 {
		last := len(r.waiters) - 1
		r.waiters[i], r.waiters[last] = r.waiters[last], nil
		r.waiters = r.waiters[:last]
	}
	r.unfollowIfIdle()
	r.mu.Unlock()
}

// wake signals every waiter. Callers hold r.mu.
func (r *run) wake() {
	for _, ch := range r.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// streamBudget is how many events may wait for a task's streams together,
// in Options.SubscriberBuffer: a lone stream takes a burst of 16 times
// that without reading the log back, while each of many streams on one
// task still holds up to SubscriberBuffer (what one event costs them is a
// slot, the event being shared).
const streamBudget = 16

// publish sends an event to every subscriber without blocking (a
// subscriber that lags reads it from the log later). Callers hold r.mu.
func (r *run) publish(resp *a2a.StreamResponse, withSeq bool) {
	defer r.wake()
	ev := a2a.StreamEvent{Response: resp}
	if len(r.subs) > 1 {
		// The streams share one encoding of the event per wire format;
		// a lone stream encodes it itself, as before, into its own buffer.
		ev.Cache = a2a.NewEventCache(resp)
	}
	if withSeq {
		r.seq++
		ev.Seq = r.seq
	}
	limit := max(r.s.opts.SubscriberBuffer, streamBudget*r.s.opts.SubscriberBuffer/max(len(r.subs), 1))
	for sub := range r.subs {
		sub.offer(ev, limit)
	}
}

// snapshot returns the task as a stream's first event, numbered with the
// sequence number of the last event it reflects. Callers hold r.mu and have
// loaded the task.
func (r *run) snapshot() a2a.StreamEvent {
	return a2a.StreamEvent{Seq: r.seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: a2a.CloneTask(r.task)}}}
}
