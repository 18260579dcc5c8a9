package pgstore

import (
	"google.golang.org/protobuf/proto"

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

// The SELECT lists of the three kinds of rows that read a task's pieces,
// in the shape layout.Pieces reads (preceded by the task id when they
// read several tasks).
const (
	headerColumns  = `0, 0, data, status IS NOT NULL, status`
	historyColumns = `1, n, message, false, NULL::bytea`
	chunkColumns   = `2, n, chunk, append, NULL::bytea`
)

// The encoded pieces are the shared layout's (taskstore/internal/layout).
type (
	header       = layout.Header
	encodedChunk = layout.EncodedChunk
	encodedParts = layout.Parts
)

// marshal encodes m for a column (never nil: see layout.Marshal).
func marshal(m proto.Message) ([]byte, error) { return layout.Marshal(m) }
