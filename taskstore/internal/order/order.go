// Package order holds the small rules about task ordering and task states
// that the store implementations in this module share.
//
// Stores sort and filter on status timestamps at millisecond precision,
// as time.Time.UnixMilli gives them: rounded down, before 1970 too. A task
// without a status timestamp sorts as the Unix epoch, which is what
// timestamppb's AsTime returns for a nil timestamp, so a cursor built from
// such a task by the caller lands on the same key.
package order

import (
	"cmp"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// Key is a task's position in the ListTasks order.
type Key struct {
	// MS is the status timestamp in milliseconds since the Unix epoch.
	MS int64
	// ID is the task id.
	ID string
}

// Compare returns -1 when a sorts before b in the ListTasks order (newer
// first, then greater id first), +1 when it sorts after and 0 when equal.
func Compare(a, b Key) int {
	if a.MS != b.MS {
		// The ids are compared only when the times are equal (cmp.Or
		// would compare them every time, its arguments being evaluated
		// first).
		return cmp.Compare(b.MS, a.MS)
	}
	return strings.Compare(b.ID, a.ID)
}

// StatusMillis returns the task's status timestamp in milliseconds,
// rounded down; 0 when the task has no status timestamp.
func StatusMillis(t *a2a.Task) int64 {
	ts := t.GetStatus().GetTimestamp()
	if ts == nil {
		return 0
	}
	return ts.AsTime().UnixMilli()
}

// TaskKey returns the task's position in the ListTasks order.
func TaskKey(t *a2a.Task) Key {
	return Key{MS: StatusMillis(t), ID: t.GetId()}
}

// CeilMillis returns t in milliseconds, rounded up. For a millisecond key
// k, k >= CeilMillis(t) holds exactly when k's instant is at or after t, and
// k < CeilMillis(t) exactly when it is before t, so bounds given with
// sub-millisecond precision keep their meaning.
func CeilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// Terminal lists the states from which a task never moves again.
var Terminal = []a2a.TaskState{
	a2a.TaskState_TASK_STATE_COMPLETED,
	a2a.TaskState_TASK_STATE_FAILED,
	a2a.TaskState_TASK_STATE_CANCELED,
	a2a.TaskState_TASK_STATE_REJECTED,
}

// Active lists the states ListActive reports: tasks that were still
// executing and whose execution a crash would lose.
var Active = []a2a.TaskState{
	a2a.TaskState_TASK_STATE_SUBMITTED,
	a2a.TaskState_TASK_STATE_WORKING,
}
