// Package storetest is the conformance suite for the taskstore interfaces.
// Every store in this module runs it, and so should a store written
// outside it:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) taskstore.Store {
//			return mystore.New(t.TempDir())
//		})
//	}
//
// Run checks a whole taskstore.Store. A store that implements only some of
// the roles runs the matching runners instead: RunTasks, RunPushConfigs
// (which needs the tasks role too, to have tasks to configure), RunOutbox
// (tasks and push configurations too) and RunMessages. Run is those four
// plus the tests that mix every role concurrently.
//
// The suite checks the rules written in the taskstore package docs: copies
// in and out, unique ids, scope isolation, the event log (Append as
// taskstore.Apply folds events, sequence numbers and ErrSeq, Events,
// PruneEvents and ErrPruned), the ListTasks order, filters,
// totals and keyset pagination, ListActive, DeleteFinished, push
// configurations, the push outbox, message records and safe concurrent use
// (run the suite with -race for that one to mean much). Status timestamps
// are treated at millisecond precision, so the suite only uses whole
// milliseconds.
//
// Where the interface docs leave a case open, the suite expects what the
// server needs (decision B12: another principal's task looks absent):
//
//   - ListPushConfigs and DeletePushConfig return taskstore.ErrNotFound when
//     the task is not in the scope. For a task in the scope, ListPushConfigs
//     of a task without configurations returns an empty list, and deleting a
//     missing configuration returns nil.
//   - An appended event may change a task's context (a Task event) and
//     state; ListTasks filters and totals follow at once.
//   - Events with limit 0 (or less) returns every kept event; after the
//     last sequence number (or beyond it) it returns none and no error.
//   - An Append with neither an event nor a message, in the task's scope,
//     writes nothing and succeeds; with a Seq but no event it is ErrSeq.
//   - Push configurations survive appends and are removed with their task
//     by DeleteFinished; a task created later with the same id starts
//     without any.
//   - MessageRecord.Created comes back equal (time.Time.Equal) to what was
//     stored when it is a whole millisecond.
//   - A task without a status may be stored, read and listed.
//   - The push outbox: a write with Event.Push queues one row per active
//     configuration in the write itself; rows come back per configuration
//     in queue order with the configuration as stored; deleting, replacing
//     or suspending a configuration, or removing its task, drops its rows.
package storetest

import (
	"testing"

	"parley.dev/parley/taskstore"
)

// TaskStore is what RunTasks checks: the tasks role and Close.
type TaskStore interface {
	taskstore.Tasks
	Close() error
}

// PushConfigStore is what RunPushConfigs checks: push configurations, the
// tasks they belong to, and Close.
type PushConfigStore interface {
	taskstore.Tasks
	taskstore.PushConfigs
	Close() error
}

// OutboxStore is what RunOutbox checks: the push outbox, the task and
// configuration writes that fill it, and Close.
type OutboxStore interface {
	taskstore.Tasks
	taskstore.PushConfigs
	taskstore.Outbox
	Close() error
}

// MessageStore is what RunMessages checks: message records and Close.
type MessageStore interface {
	taskstore.Messages
	Close() error
}

// Run runs the whole conformance suite: every role's tests and the
// concurrent tests that mix roles. open must return a new, empty store
// each time it is called; Run calls it once per subtest and closes the
// store when that subtest ends.
func Run(t *testing.T, open func(t *testing.T) taskstore.Store) {
	RunTasks(t, func(t *testing.T) TaskStore { return open(t) })
	RunPushConfigs(t, func(t *testing.T) PushConfigStore { return open(t) })
	RunOutbox(t, func(t *testing.T) OutboxStore { return open(t) })
	RunMessages(t, func(t *testing.T) MessageStore { return open(t) })
	RunClaims(t, open)
	runChecks(t, open, storeChecks)
}

// RunTasks runs the tests of the tasks role: creating, appending to and
// reading tasks, the event log and its sequence numbers, scope isolation,
// ListTasks, ListActive and DeleteFinished. open is called once per subtest, as for
// Run.
func RunTasks(t *testing.T, open func(t *testing.T) TaskStore) {
	runChecks(t, open, taskChecks)
}

// RunPushConfigs runs the tests of the push configurations role, including
// their removal with their task. open is called once per subtest, as for
// Run.
func RunPushConfigs(t *testing.T, open func(t *testing.T) PushConfigStore) {
	runChecks(t, open, pushConfigChecks)
}

// RunOutbox runs the tests of the push outbox: what the task and
// configuration writes queue, and how the Outbox methods read,
// acknowledge and suspend it. open is called once per subtest, as for Run.
func RunOutbox(t *testing.T, open func(t *testing.T) OutboxStore) {
	runChecks(t, open, outboxChecks)
}

// RunMessages runs the tests of the message records role. open is called
// once per subtest, as for Run.
func RunMessages(t *testing.T, open func(t *testing.T) MessageStore) {
	runChecks(t, open, messageChecks)
}

// check is one subtest of the suite, run on a fresh store of type S.
type check[S any] struct {
	name string
	fn   func(t *testing.T, s S)
}

// runChecks runs each check as a subtest on a store of its own, which it
// closes when the subtest ends.
func runChecks[S interface{ Close() error }](t *testing.T, open func(t *testing.T) S, checks []check[S]) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			c.fn(t, s)
		})
	}
}
