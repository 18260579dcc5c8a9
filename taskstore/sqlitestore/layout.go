package sqlitestore

import (
	"parley.dev/parley/taskstore/internal/layout"
)

// A task is kept in pieces (schema version 4), so that an event costs a
// few small writes whatever the size of the task:
//
//   - the tasks row is the header: the sort and filter columns, the last
//     sequence number, has_push, status (the TaskStatus) and data (the
//     task without its status, history and artifacts);
//   - task_history holds one row per history message, numbered n from 0;
//   - task_artifacts holds one row per artifact update ("chunk"), numbered
//     n from 0 within the task: the artifact id, whether the chunk is
//     appended, and the chunk (an Artifact). Replacing an artifact
//     overwrites its first chunk and deletes its other ones, so the
//     artifact keeps its place;
//   - task_events is the event log: a row holds the events of one write
//     (layout.JoinEvents).
//
// The three are rowid tables, each with a unique index of its key (schema
// version 9), the payload last: a seek reads no payload but the ones it
// finds.
//
// A task made finished (layout.EncodeCreate) is stored whole: its history
// and artifacts are in data, and it has rows of its own only for events
// that come after, which follow them.
//
// Every payload is protobuf binary (proto.Marshal). Reading a task folds
// its rows back into one a2a.Task (layout.FoldArtifacts follows the
// rule of taskstore.Apply).

// historyByN and chunksByN are the tables of a task's history and artifact
// rows, read by their index by n (schema version 9): in n order, which
// layout.Pieces needs.
const (
	historyByN = `task_history INDEXED BY task_history_by_n`
	chunksByN  = `task_artifacts INDEXED BY task_artifacts_by_n`
)

// writeParts inserts the rows of a task's history and artifacts, numbered
// from 0, inside a write. The task must have none yet.
func (s *Store) writeParts(w *wtx, taskID string, p encodedParts) error {
	id := any(taskID)
	args := make([]any, 0, 5*max(len(p.History), len(p.Artifacts)))
	for n, m := range p.History {
		args = append(args, id, n, m)
	}
	if err := s.putHistory.exec(w, args); err != nil {
		return err
	}
	args = args[:0]
	for n, c := range p.Artifacts {
		args = append(args, id, n, c.ID, c.AppendTo, c.Data)
	}
	return s.putChunks.exec(w, args)
}

// The encoded pieces are the shared layout's (taskstore/internal/layout).
type encodedParts = layout.Parts
