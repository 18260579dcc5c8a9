package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
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
//   - task_events is the event log.
//
// Every payload is protobuf binary (proto.Marshal). Reading a task folds
// its rows back into one a2a.Task (foldArtifacts follows the rule of
// taskstore.Apply).

// encodeStatus returns the status column of a status: nil (NULL) when
// there is none, never nil otherwise (an empty status is not a missing
// one).
func encodeStatus(st *a2a.TaskStatus) ([]byte, error) {
	if st == nil {
		return nil, nil
	}
	b, err := marshal(st)
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// decodeHeader returns the task of a header's data and status columns,
// without history and artifacts. A NULL status is a task without one.
func decodeHeader(data []byte, status sql.RawBytes, hasStatus bool) (*a2a.Task, error) {
	t, err := unmarshalTask(data)
	if err != nil {
		return nil, err
	}
	if hasStatus {
		t.Status = new(a2a.TaskStatus)
		if err := proto.Unmarshal(status, t.Status); err != nil {
			return nil, fmt.Errorf("sqlitestore: decode task status: %w", err)
		}
	}
	return t, nil
}

// writeParts inserts the rows of a task's history and artifacts, numbered
// from 0, inside a write. The task must have none yet.
func (s *Store) writeParts(w *wtx, taskID string, p encodedParts) error {
	bg := context.Background()
	for n, m := range p.History {
		if _, err := w.exec(bg, s.putHistory, taskID, n, m); err != nil {
			return err
		}
	}
	for n, c := range p.Artifacts {
		if _, err := w.exec(bg, s.putChunk, taskID, n, c.ID, c.AppendTo, c.Data); err != nil {
			return err
		}
	}
	return nil
}

// The statements that read a task's pieces return rows of one shape,
// (kind, n, payload, flag, extra), whatever table they come from:
//
//	kindHeader:   payload data, flag whether status is set, extra status
//	kindHistory:  n, payload message
//	kindChunk:    n, payload chunk, flag append
//
// preceded by the task id when they read several tasks. A task's rows
// come in n order (each table's primary key), which assemble checks.
const (
	kindHeader = iota
	kindHistory
	kindChunk
)

// pieceColumns are the SELECT lists of the three kinds of rows.
const (
	headerColumns  = `0, 0, data, status IS NOT NULL, status`
	historyColumns = `1, n, message, 0, NULL`
	chunkColumns   = `2, n, chunk, append, NULL`
)

// pieces is what the rows of one task hold, decoded as they are read.
type pieces struct {
	task     *a2a.Task // from the header row; nil when it was not read
	history  []*a2a.Message
	chunks   []chunk
	lastH    int64 // the n of the last history and chunk rows
	lastC    int64
	disorder bool // rows came out of n order
}

// readPieces reads rows of the shape above, decoding each at once. With
// byID the rows start with the task id and go to the pieces byID holds
// for it (rows of other ids are skipped); otherwise they all go to one.
func readPieces(rows *sql.Rows, one *pieces, byID map[string]*pieces) error {
	defer rows.Close()
	for rows.Next() {
		var kind, n, flag int64
		var id, payload, extra sql.RawBytes
		var err error
		p := one
		if byID != nil {
			err = rows.Scan(&id, &kind, &n, &payload, &flag, &extra)
			p = byID[string(id)]
		} else {
			err = rows.Scan(&kind, &n, &payload, &flag, &extra)
		}
		if err != nil {
			return err
		}
		if p != nil {
			if err := p.add(kind, n, payload, flag != 0, extra); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}

// add decodes one row into p.
func (p *pieces) add(kind, n int64, payload []byte, flag bool, extra []byte) error {
	switch kind {
	case kindHeader:
		t, err := decodeHeader(payload, extra, flag)
		if err != nil {
			return err
		}
		p.task = t
	case kindHistory:
		p.disorder = p.disorder || (len(p.history) > 0 && n <= p.lastH)
		p.lastH = n
		m := new(a2a.Message)
		if err := proto.Unmarshal(payload, m); err != nil {
			return fmt.Errorf("sqlitestore: decode history: %w", err)
		}
		p.history = append(p.history, m)
	case kindChunk:
		p.disorder = p.disorder || (len(p.chunks) > 0 && n <= p.lastC)
		p.lastC = n
		a := new(a2a.Artifact)
		if err := proto.Unmarshal(payload, a); err != nil {
			return fmt.Errorf("sqlitestore: decode artifact: %w", err)
		}
		p.chunks = append(p.chunks, chunk{AppendTo: flag, A: a})
	}
	return nil
}

// assemble sets t's history and artifacts from p.
func (p *pieces) assemble(t *a2a.Task) error {
	if p.disorder {
		return errors.New("sqlitestore: a task's rows came out of order")
	}
	t.History = p.history
	t.Artifacts = layout.FoldArtifacts(p.chunks)
	return nil
}

// The encoded pieces are the shared layout's (taskstore/internal/layout).
type (
	header       = layout.Header
	encodedChunk = layout.EncodedChunk
	encodedParts = layout.Parts
	chunk        = layout.Chunk
)
