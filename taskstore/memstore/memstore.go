// Package memstore is an in-memory taskstore.Store. It loses everything when
// the process exits, which makes it fit for tests, development and agents
// whose tasks need not outlive the process.
//
// Each scope keeps its tasks in sorted slices: all of them, each
// context's and each state's, so that a page, its total and its "more"
// flag are found with binary searches: a ListTasks call costs O(log n +
// page size) whatever the filters, but for a context and a state, which
// costs the context's tasks (a conversation's: a few). The slices run oldest first, so a new task, the newest, is
// appended at the end, and an update, which usually moves a recent task to
// the end, shifts only the tail.
//
// A task is stored once and changed in place by Append (taskstore.Apply on
// the store's copy), so an event costs what copying it costs, whatever the
// size of the task; its log is a slice of the events kept, which
// PruneEvents shortens from the front. Logged events are never changed,
// and the push outbox and the readers of a running task's log share them.
// A task that reaches a terminal state is kept encoded, with its logged
// events in one buffer (Store.pack), so that the many finished tasks a
// store holds cost the garbage collector little and a long stream's
// events little memory.
//
// The store keeps at most Options.MaxTasks tasks (DefaultMaxTasks unless
// told otherwise), so that a long-running server's memory stays flat. A
// new task that would pass the bound first evicts finished tasks
// (terminal: COMPLETED, FAILED, CANCELED, REJECTED; spec §4.1.3) in the
// order they became terminal, oldest first, with all the store keeps for
// them: events, history and artifacts, push configurations and queued
// notifications, and their places in the ListTasks and context indexes.
// A task that is not terminal is never evicted: when no finished task is
// left, the store grows past the bound rather than lose an active one.
//
// One read-write mutex guards everything. Readers copy tasks while they
// hold the read lock; configurations and logged events are replaced,
// never modified in place, so those may be copied after it is released.
package memstore

import (
	"errors"
	"sync"
	"time"
	"weak"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/share"
)

var errNoID = errors.New("memstore: task has no id")

// errNoArtifact refuses an artifact update without an artifact, which no
// task could hold.
var errNoArtifact = errors.New("memstore: artifact update without an artifact")

// Store is an in-memory taskstore.Store. Create one with New; it is safe
// for concurrent use.
type Store struct {
	mu       sync.RWMutex
	tasks    map[string]*entry
	scopes   map[taskstore.Scope]*scopeIndex
	messages map[taskstore.Scope]*scopeRecords
	records  []*record // every message record, in the order recorded (Store.PutMessage)

	// The push outbox: queued notifications per configuration, oldest
	// first, and the suspended configurations with their reasons.
	outbox    map[configKey][]*queued
	where     map[int64]configKey // the configuration of each queued row
	suspended map[configKey]string
	lastID    int64

	// logged lists every span of the logs (span) not yet looked at by
	// PruneEvents, oldest first: which task's log it is in and when.
	// PruneEvents walks it from the front, so its work is the events it
	// drops, not the number of tasks.
	logged []loggedAt
	// packBuf is the scratch buffer in which pack encodes a finished
	// task's events before it copies them into one of the right size.
	packBuf []byte

	now func() time.Time // the clock of the event log

	// The bound on tasks (makeRoom): max is the number of tasks kept
	// before finished ones are evicted, 0 for no bound; finished holds
	// the terminal tasks in the order they became terminal, some of them
	// removed since (deadFinished counts those). deadLogged estimates
	// the entries of logged whose task was removed.
	max          int
	maxRecords   int // the bound on message records (Options.MaxMessages), 0 for none
	finished     []*entry
	deadFinished int
	deadLogged   int

	// The finished tasks GetTask read more than once keep their decoded
	// tree (entry.decoded) while they are among the last cachedTasks so
	// kept: ring lists them, next is where the next one goes.
	readMu   sync.Mutex
	readRing [cachedTasks]*entry
	readNext int
	// large shares the decoded trees of large packed tasks (readLarge).
	large share.Group[weak.Pointer[entry], a2a.Task]
}

var _ taskstore.Store = (*Store)(nil)

// DefaultMaxTasks is the bound on tasks of a store made by New, or by
// NewWith without a MaxTasks.
const DefaultMaxTasks = 100_000

// DefaultMaxMessages is the bound on message records of a store made by
// New, or by NewWith without a MaxMessages.
const DefaultMaxMessages = 100_000

// Options configure a store made by NewWith. The zero value gives the
// store New makes.
type Options struct {
	// MaxTasks is the most tasks the store keeps. A new task that would
	// pass it evicts finished tasks (COMPLETED, FAILED, CANCELED,
	// REJECTED), oldest first by the order in which they became terminal,
	// with their events, push configurations and queued notifications.
	// Tasks in any other state are never evicted, so a store whose tasks
	// are all active grows past the bound. 0 means DefaultMaxTasks;
	// negative means no bound.
	//
	// A resend of the message that made or continued an evicted task is
	// answered TaskNotFound, never run again: its record stays, marked
	// (taskstore.MessageRecord.TaskEvicted), until the idempotency window
	// removes it.
	MaxTasks int
	// MaxMessages is the most message records (taskstore.Messages: the
	// idempotency records of the messages accepted, with their direct
	// replies) the store keeps. A new record that would pass it removes
	// the oldest, in the order they were recorded; a resend of that
	// message is run again, as after the idempotency window. 0 means
	// DefaultMaxMessages; negative means no bound.
	MaxMessages int
}

// New returns an empty store that keeps at most DefaultMaxTasks tasks.
func New() *Store {
	return NewWith(nil)
}

// NewWith returns an empty store configured by o (nil for the defaults).
func NewWith(o *Options) *Store {
	var opts Options
	if o != nil {
		opts = *o
	}
	return &Store{
		max:        bound(opts.MaxTasks, DefaultMaxTasks),
		maxRecords: bound(opts.MaxMessages, DefaultMaxMessages),
		tasks:      make(map[string]*entry),
		scopes:     make(map[taskstore.Scope]*scopeIndex),
		messages:   make(map[taskstore.Scope]*scopeRecords),
		outbox:     make(map[configKey][]*queued),
		where:      make(map[int64]configKey),
		suspended:  make(map[configKey]string),
		now:        time.Now,
	}
}

// bound returns an Options bound as the store keeps it: def for 0, 0 (no
// bound) for a negative one.
func bound(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// Close releases nothing; the store stays usable.
func (s *Store) Close() error { return nil }

// lookup returns the task's entry when it is in the scope. The caller
// holds s.mu.
func (s *Store) lookup(sc taskstore.Scope, id string) *entry {
	e, ok := s.tasks[id]
	if !ok || e.scope != sc {
		return nil
	}
	return e
}

func cloneTask(t *a2a.Task) *a2a.Task {
	return a2a.CloneTask(t)
}

func cloneConfig(c *taskstore.PushConfig) *taskstore.PushConfig {
	return taskstore.ClonePushConfig(c)
}
