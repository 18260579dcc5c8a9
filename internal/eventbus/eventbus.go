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
//
// A wake-up is a hint to read the store, and a bus may send one without a
// notification: after a reconnection it wakes every watcher, since
// notifications may have been missed meanwhile. So a watcher acts on what
// the store says, never on the wake-up itself; the one exception is a
// request key (RequestKey), whose watchers are woken by a Notify of that
// key only, and whose sender repeats it until it sees its effect in the
// store, since a request sent while a watcher's bus was reconnecting is
// lost.
package eventbus

import (
	"context"
	"strings"
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
	// watch (the channel is then no longer written). A bus that may
	// have missed notifications wakes every watcher, except those of a
	// request key (RequestKey), which only a Notify of the key wakes.
	Watch(taskID string) (wake <-chan struct{}, stop func())
}

// requestPrefix begins every request key. Task ids are minted by
// servers and never begin with it.
const requestPrefix = "?"

// RequestKey returns the key of a request named name: its watchers are
// woken by a Notify of that key only, never by a bus that resynchronizes
// (Registry.WakeAll), so a wake-up on it means that someone asked.
func RequestKey(name string) string { return requestPrefix + name }

// IsRequest reports whether key is a request key (RequestKey).
func IsRequest(key string) bool { return strings.HasPrefix(key, requestPrefix) }

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

// WakeAll signals every watcher but those of request keys (RequestKey),
// for a bus that may have missed notifications (after a reconnection).
func (r *Registry) WakeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, set := range r.byID {
		if IsRequest(key) {
			continue
		}
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
