package pgstore

import (
	"parley.dev/parley/taskstore/internal/layout"
)

// A task is kept in pieces, so that an event costs a few small writes
// whatever the size of the task:
//
//   - the tasks row is the header: the sort and filter columns, the last
//     sequence number, has_push, status (the TaskStatus), data (the task
//     without its status, history and artifacts), and next_history and
//     next_chunk, the numbers the next history and chunk rows take;
//   - task_history holds one row per history message, numbered n;
//   - task_artifacts holds one row per artifact update ("chunk"),
//     numbered n within the task: the artifact id, whether the chunk is
//     appended, and the chunk (an Artifact). Replacing an artifact
//     overwrites its first chunk and deletes its other ones, so the
//     artifact keeps its place;
//   - task_events is the event log.
//
// Numbers only order the rows: they may have gaps. Every payload is
// protobuf binary; reading a task folds its rows back into one a2a.Task
// by the rule of taskstore.Apply.

// taskByID finds a task's header row by its primary key ($1) and checks
// its scope ($2, $3). The scope is compared with IS NOT DISTINCT FROM
// (the same as = on these NOT NULL columns), which no index serves, so
// that the planner has one index to choose: every ListTasks index starts
// with the scope, and before the table's first ANALYZE (a new database,
// in its first minute) a generic plan took "tenant = $2 AND owner = $3"
// for selective and looked for the id through one of them, reading
// every entry of the scope, 40 % of PostgreSQL's time under load.
// taskByIDAs is the same for the alias t.
const (
	taskByID   = `id = $1 AND tenant IS NOT DISTINCT FROM $2 AND owner IS NOT DISTINCT FROM $3`
	taskByIDAs = `t.id = $1 AND t.tenant IS NOT DISTINCT FROM $2 AND t.owner IS NOT DISTINCT FROM $3`
)

// The encoded pieces are the shared layout's (taskstore/internal/layout).
type encodedParts = layout.Parts
