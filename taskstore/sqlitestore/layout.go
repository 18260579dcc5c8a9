package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
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
	if t.Status != nil {
		if h.status, err = marshal(t.Status); err != nil {
			return h, err
		}
		if h.status == nil {
			h.status = []byte{} // an empty status is not a missing one
		}
	}
	return h, nil
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
func foldArtifacts(chunks []encodedChunk) ([]*a2a.Artifact, error) {
	var out []*a2a.Artifact
	at := make(map[string]int, 4)
	for _, c := range chunks {
		a := new(a2a.Artifact)
		if err := proto.Unmarshal(c.data, a); err != nil {
			return nil, fmt.Errorf("sqlitestore: decode artifact: %w", err)
		}
		i, known := at[c.id]
		switch {
		case !known:
			at[c.id] = len(out)
			out = append(out, a)
		case c.appendTo:
			a2a.AppendChunk(out[i], a)
		default:
			out[i] = a
		}
	}
	return out, nil
}

// partReader reads the history and artifacts of tasks, either one task at
// a time or a page of tasks at once, inside one read transaction.
type partReader struct {
	ctx     context.Context
	history *sql.Stmt // (task_id) or (json array of ids) → [task_id,] message
	chunks  *sql.Stmt // (task_id) or (json array of ids) → [task_id,] artifact_id, append, chunk
	many    bool      // the statements take a json array and return task_id first
}

// fill reads the history and artifacts of the tasks (keyed by id) and sets
// them.
func (r partReader) fill(tasks map[string]*a2a.Task, ids []string) error {
	arg := any(nil)
	if r.many {
		b, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		arg = string(b)
	} else {
		arg = ids[0]
	}
	if err := r.fillHistory(tasks, arg, ids[0]); err != nil {
		return err
	}
	return r.fillArtifacts(tasks, arg, ids[0])
}

func (r partReader) fillHistory(tasks map[string]*a2a.Task, arg any, only string) error {
	rows, err := r.history.QueryContext(r.ctx, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		id := only
		var data sql.RawBytes
		if r.many {
			err = rows.Scan(&id, &data)
		} else {
			err = rows.Scan(&data)
		}
		if err != nil {
			return err
		}
		m := new(a2a.Message)
		if err := proto.Unmarshal(data, m); err != nil {
			return fmt.Errorf("sqlitestore: decode history: %w", err)
		}
		if t := tasks[id]; t != nil {
			t.History = append(t.History, m)
		}
	}
	return rows.Err()
}

func (r partReader) fillArtifacts(tasks map[string]*a2a.Task, arg any, only string) error {
	rows, err := r.chunks.QueryContext(r.ctx, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	byTask := make(map[string][]encodedChunk)
	for rows.Next() {
		id := only
		var c encodedChunk
		if r.many {
			err = rows.Scan(&id, &c.id, &c.appendTo, &c.data)
		} else {
			err = rows.Scan(&c.id, &c.appendTo, &c.data)
		}
		if err != nil {
			return err
		}
		byTask[id] = append(byTask[id], c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for id, chunks := range byTask {
		t := tasks[id]
		if t == nil {
			continue
		}
		if t.Artifacts, err = foldArtifacts(chunks); err != nil {
			return err
		}
	}
	return nil
}
