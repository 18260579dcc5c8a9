package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore/internal/order"
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

// header is the tasks row of a task: data and status encoded, and the
// columns ListTasks sorts and filters on.
type header struct {
	data, status []byte // status is nil when the task has none
	contextID    string
	state        int32
	statusMS     int64
}

// encodeHeader returns the header of t.
func encodeHeader(t *a2a.Task) (header, error) {
	h := header{contextID: t.GetContextId(), state: int32(t.GetStatus().GetState()), statusMS: order.StatusMillis(t)}
	var err error
	if h.data, err = marshal(&a2a.Task{Id: t.GetId(), ContextId: t.GetContextId(), Metadata: t.GetMetadata()}); err != nil {
		return h, err
	}
	h.status, err = encodeStatus(t.Status)
	return h, err
}

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

// encodedParts is a task's history and artifacts, encoded for their rows.
type encodedParts struct {
	history   [][]byte
	artifacts []encodedChunk
}

// encodedChunk is one task_artifacts row.
type encodedChunk struct {
	id       string
	appendTo bool
	data     []byte
}

// encodeParts encodes a task's history and artifacts, one row each.
func encodeParts(t *a2a.Task) (encodedParts, error) {
	var p encodedParts
	for _, m := range t.GetHistory() {
		b, err := marshal(m)
		if err != nil {
			return p, err
		}
		p.history = append(p.history, b)
	}
	for _, a := range t.GetArtifacts() {
		b, err := marshal(a)
		if err != nil {
			return p, err
		}
		p.artifacts = append(p.artifacts, encodedChunk{id: a.GetArtifactId(), data: b})
	}
	return p, nil
}

// writeParts inserts the rows of a task's history and artifacts, numbered
// from 0, inside a write. The task must have none yet.
func (s *Store) writeParts(w *wtx, taskID string, p encodedParts) error {
	bg := context.Background()
	for n, m := range p.history {
		if _, err := w.exec(bg, s.putHistory, taskID, n, m); err != nil {
			return err
		}
	}
	for n, c := range p.artifacts {
		if _, err := w.exec(bg, s.putChunk, taskID, n, c.id, c.appendTo, c.data); err != nil {
			return err
		}
	}
	return nil
}

// foldArtifacts rebuilds a task's artifacts from its chunks, in order, by
// the rule of taskstore.Apply: a chunk of a new id adds an artifact at the
// end; a known id's chunk is appended (a2a.AppendChunk) or replaces it in
// place.
func foldArtifacts(chunks []chunk) []*a2a.Artifact {
	if len(chunks) == 0 {
		return nil
	}
	var out []*a2a.Artifact
	at := make(map[string]int, 4)
	for _, c := range chunks {
		id := c.a.GetArtifactId()
		i, known := at[id]
		switch {
		case !known:
			at[id] = len(out)
			out = append(out, c.a)
		case c.appendTo:
			a2a.AppendChunk(out[i], c.a)
		default:
			out[i] = c.a
		}
	}
	return out
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

// chunk is one artifact update as stored: the artifact, decoded, and
// whether it is appended.
type chunk struct {
	appendTo bool
	a        *a2a.Artifact
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
		p.chunks = append(p.chunks, chunk{appendTo: flag, a: a})
	}
	return nil
}

// assemble sets t's history and artifacts from p.
func (p *pieces) assemble(t *a2a.Task) error {
	if p.disorder {
		return errors.New("sqlitestore: a task's rows came out of order")
	}
	t.History = p.history
	t.Artifacts = foldArtifacts(p.chunks)
	return nil
}
