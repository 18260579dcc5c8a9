// Package eventbus is the beginning of cross-replica fan-out: how one
// process learns that a task's event log grew in another.
//
// A Bus carries wake-ups, never events: the event log in the store
// (taskstore.Tasks.Events) is the truth, and a wake-up only says "read
// the log after what you have". So a lost or duplicated wake-up costs a
// delay or a read, never an event, and a subscriber that resumes with
// Last-Event-ID on any replica reads the same log. Follow tails a task's
// log that way, with a fallback poll for wake-ups that never came (a
// dropped connection, a process that died between its commit and its
// notification).
//
// Local is the in-process Bus; pgstore.Bus (package taskstore/pgstore) is one on
// PostgreSQL's LISTEN/NOTIFY. A NATS JetStream bus, or any other, would
// implement the same two methods. The server uses one with
// server.Options.Cluster: a process feeds the streams of the tasks it runs
// in memory, and follows the others' with Follow. A key need not be a task
// id: the server also wakes a task's runner under "cancel:" and the id.
package eventbus

import (
	"context"
	"sync"
)

// Bus tells the processes sharing a store that a task's log grew. All
// methods may be called concurrently.
type Bus interface {
	// Notify announces that the log of task taskID now ends at seq. Call
	// it after the append committed.
	Notify(ctx context.Context, taskID string, seq uint64) error
	// Watch returns a channel that receives a value, coalesced, when
	// the log of task taskID may have grown, and stop, which ends the
	// watch (the channel is then no longer written).
	Watch(taskID string) (wake <-chan struct{}, stop func())
}

// ManyNotifier is a Bus that can announce the logs of several tasks at
// once, in one round trip (pgstore.Bus does). Callers that have many to
// announce use it when the Bus has it.
type ManyNotifier interface {
	// NotifyMany is Notify for each task id.
	NotifyMany(ctx context.Context, taskIDs []string) error
}

// Local is a Bus within one process: Notify wakes the Watch channels of
// the task. The zero value is ready to use.
type Local struct {
	watchers Registry
}

var _ Bus = (*Local)(nil)

// Notify wakes every watcher of the task.
func (l *Local) Notify(_ context.Context, taskID string, _ uint64) error {
	l.watchers.Wake(taskID)
	return nil
}

// Watch returns a wake-up channel for the task.
func (l *Local) Watch(taskID string) (<-chan struct{}, func()) {
	return l.watchers.Add(taskID)
}

// Registry is the wake-up bookkeeping a Bus implementation needs: Add
// for Watch, Wake when a notification for a task arrives, WakeAll when
// notifications may have been missed. The zero value is ready to use.
type Registry struct {
	mu   sync.Mutex
	byID map[string]map[chan struct{}]struct{}
}

// Add registers a watcher of taskID and returns its channel and remover;
// see Bus.Watch.
func (r *Registry) Add(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	if r.byID == nil {
		r.byID = make(map[string]map[chan struct{}]struct{})
	}
	set := r.byID[taskID]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		r.byID[taskID] = set
	}
	set[ch] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.byID[taskID], ch)
			if len(r.byID[taskID]) == 0 {
				delete(r.byID, taskID)
			}
			r.mu.Unlock()
		})
	}
}

// Wake signals the watchers of taskID without blocking.
func (r *Registry) Wake(taskID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch := range r.byID[taskID] {
		signal(ch)
	}
}

// WakeAll signals every watcher, for a bus that may have missed
// notifications (after a reconnection).
func (r *Registry) WakeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, set := range r.byID {
		for ch := range set {
			signal(ch)
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
