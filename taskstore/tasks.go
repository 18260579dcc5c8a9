package taskstore

import (
	"context"
	"fmt"
	"time"

	"parley.dev/parley/a2a"
)

// Tasks keeps tasks and their event sequence numbers. The server core
// calls it for every operation on a task, at start-up (ListActive) and in
// its periodic cleanup (DeleteFinished). All methods may be called
// concurrently.
type Tasks interface {
	// CreateTask stores a new task and the event that created it. The id
	// must not exist in any scope.
	CreateTask(ctx context.Context, s Scope, t *a2a.Task, ev Event) error
	// Append records one change of a task in the scope, in one atomic
	// write: ev.Response, when set, is appended to the task's event log
	// under ev.Seq and applied to the stored task as Apply does; ev.Message,
	// when set, is added to the task's history. Both may be set: the
	// message joins the history first, and the write is fenced by ev.Seq
	// as the event's alone would be (the server's follow-up, whose
	// Response is the message's ClientMessage, its timeline entry). The cost
	// of an append must not grow with the task: no
	// rewrite or copy of the whole task per event. ev.Seq is the task's
	// last sequence number plus one when ev.Response is set, and zero
	// otherwise; an Append whose Seq is not LastSeq+1 fails without
	// writing (ErrSeq).
	Append(ctx context.Context, s Scope, id string, ev Event) error
	// GetTask returns the task with the id in the scope, or ErrNotFound.
	// The task may be shared, with the store's cache and with other
	// callers: a caller must not change it (a2a.CloneTask makes a copy to
	// change), and the store must not change it either once returned (a
	// write replaces what it keeps, as a cache drops its entry).
	GetTask(ctx context.Context, s Scope, id string) (*a2a.Task, error)
	// LastSeq returns the sequence number of the task's last recorded
	// event, or ErrNotFound. Sequence numbers survive restarts, so stream
	// event ids keep increasing (the ground for lossless resume).
	LastSeq(ctx context.Context, s Scope, id string) (uint64, error)
	// Events returns up to limit of the task's logged events whose sequence
	// number is greater than after, oldest first, each with its Seq. It
	// returns ErrNotFound when the task does not exist in the scope, and
	// ErrPruned when event after+1 exists no more (pruned by PruneEvents,
	// see the resume window) while the task does.
	Events(ctx context.Context, s Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error)
	// ListTasks returns one page of the scope's tasks. Implementations must
	// use an index on the sort key, not scan every task, to find a page.
	ListTasks(ctx context.Context, s Scope, q ListQuery) (ListResult, error)
	// ListActive returns every task, in all scopes, whose state is
	// SUBMITTED or WORKING. The server uses it at start-up to find tasks
	// whose execution was lost in a crash.
	ListActive(ctx context.Context) ([]ScopedTask, error)
	// DeleteFinished removes tasks in a terminal state whose status
	// timestamp is before the given time, with their push configurations
	// and queued notifications. It returns how many tasks were removed.
	DeleteFinished(ctx context.Context, before time.Time) (int, error)
	// PruneEvents removes logged events recorded before the given time, in
	// every scope, except each task's last event (so LastSeq and resume
	// from the last event keep working). What the events removed from a
	// task's log say of its timeline is folded into its timeline base
	// (Fold), in the same atomic write as their removal, oldest first;
	// tasks are not changed otherwise. It returns how many events were
	// removed.
	PruneEvents(ctx context.Context, before time.Time) (int, error)
	// TimelineBase returns the task's timeline base: what the events
	// PruneEvents removed from its log said of its timeline (Fold),
	// nil when none was removed. It returns ErrNotFound when the task
	// does not exist in the scope. The caller must not change it.
	TimelineBase(ctx context.Context, s Scope, id string) ([]byte, error)

	// Several events of a task in one write (see BatchAppender).
	BatchAppender
}

// BatchAppender records several events of one task in one atomic write;
// it is part of Tasks, so every store has it and a store wrapper (metrics,
// fault injection) cannot hide it. The server pipelines an agent's
// artifact chunks through it: it stores the chunks queued while the
// previous write committed in one write, instead of one write per chunk;
// and it stores a new task with the agent's first event in one write.
type BatchAppender interface {
	// AppendBatch records evs, consecutive events of the task in the scope
	// (each with a Response, and a Seq one more than the one before it),
	// as Append would one after the other, in one atomic write: all of
	// them or, with an error, none. It fails with ErrNotFound or ErrSeq,
	// writing nothing, as Append does for the first event.
	AppendBatch(ctx context.Context, s Scope, id string, evs []Event) error
	// CreateTaskBatch stores a new task with the events that made it, in
	// one atomic write: as CreateTask(s, t, evs[0]) and then AppendBatch
	// of the others would, all or none. t is the task as evs[0] created
	// it.
	CreateTaskBatch(ctx context.Context, s Scope, t *a2a.Task, evs []Event) error
}

// CheckBatch reports what makes evs unfit for a batch whose first event is
// numbered first: an event without a Response, a sequence number that does
// not follow the one before it, or an artifact update without an
// artifact. A BatchAppender checks its events with it before it writes.
func CheckBatch(first uint64, evs []Event) error {
	for i, ev := range evs {
		switch u := ev.Response.GetArtifactUpdate(); {
		case ev.Response == nil:
			return fmt.Errorf("taskstore: batch event %d has no response", i)
		case ev.Seq != first+uint64(i):
			return fmt.Errorf("taskstore: batch event %d has seq %d, want %d", i, ev.Seq, first+uint64(i))
		case u != nil && u.GetArtifact() == nil:
			return fmt.Errorf("taskstore: batch event %d is an artifact update without an artifact", i)
		}
	}
	return nil
}

// Event is the change a write records: the event sent to the task's
// subscribers, with its sequence number (1 for the creation, then +1 per
// event), and/or a message added to the history without an event.
type Event struct {
	Seq      uint64
	Response *a2a.StreamResponse
	// Message, on Append only, is a client message added to the task's
	// history (a follow-up). Alone, with Seq zero and Response nil, it
	// leaves the sequence as it is; with a Response it is written in the
	// same atomic write, before the event and under the event's Seq (the
	// server writes every follow-up so, with its ClientMessage).
	Message *a2a.Message
	// Push queues Response in the push outbox, in the same atomic write:
	// CreateTask and Append queue it once for every active (not
	// suspended) push configuration of the task, PutPushConfig once for
	// the configuration it writes. The server sets it only when push
	// delivery is on, so a store never fills an outbox nobody drains.
	Push bool
	// PushConfig, on CreateTask only, is a push configuration stored with
	// the new task in the same write (SendMessage's inline configuration),
	// so it is active for, and receives, the creation event.
	PushConfig *PushConfig
}

// Cursor is a position in the ListTasks order (status timestamp descending,
// then id descending). A page starting after a cursor holds only tasks that
// sort strictly after it.
type Cursor struct {
	Time time.Time
	ID   string
}

// ListQuery selects one page of tasks within a scope.
type ListQuery struct {
	// ContextID keeps only tasks of this context when non-empty.
	ContextID string
	// State keeps only tasks in this state when not TASK_STATE_UNSPECIFIED.
	State a2a.TaskState
	// Since keeps only tasks whose status timestamp is at or after it
	// (inclusive, as lf.a2a.v1.ListTasksRequest.status_timestamp_after
	// says) when non-zero.
	Since time.Time
	// After starts the page strictly after this position when non-nil.
	After *Cursor
	// Limit is the page size; it is always at least 1.
	Limit int
}

// ListResult is one page of tasks.
type ListResult struct {
	// Tasks in order: status timestamp descending, then id descending.
	Tasks []*a2a.Task
	// Total counts every task matching the filters (ignoring After and Limit).
	Total int
	// More reports whether tasks exist beyond this page.
	More bool
}

// ScopedTask is a task together with the scope that owns it.
type ScopedTask struct {
	Scope Scope
	Task  *a2a.Task
}
