package pgstore

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
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

// decodeHeader returns the task of a header's data and status columns,
// without history and artifacts. A nil status is a task without one.
func decodeHeader(data, status []byte) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("pgstore: decode task: %w", err)
	}
	if status != nil {
		t.Status = new(a2a.TaskStatus)
		if err := proto.Unmarshal(status, t.Status); err != nil {
			return nil, fmt.Errorf("pgstore: decode task status: %w", err)
		}
	}
	return t, nil
}

// The statements that read a task's pieces return rows of one shape,
// (kind, n, payload, flag, extra), whatever table they come from:
//
//	kindHeader:   payload data, extra status
//	kindHistory:  n, payload message
//	kindChunk:    n, payload chunk, flag append
const (
	kindHeader = iota
	kindHistory
	kindChunk
)

// The SELECT lists of the three kinds of rows.
const (
	headerColumns  = `0, 0, data, false, status`
	historyColumns = `1, n, message, false, NULL::bytea`
	chunkColumns   = `2, n, chunk, append, NULL::bytea`
)

// pieces is what the rows of one task hold, decoded as they are read.
type pieces struct {
	task     *a2a.Task // from the header row; nil when it was not read
	history  []*a2a.Message
	chunks   []chunk
	lastH    int32
	lastC    int32
	disorder bool // rows came out of n order
}

// add decodes one row into p.
func (p *pieces) add(kind, n int32, payload []byte, flag bool, extra []byte) error {
	switch kind {
	case kindHeader:
		t, err := decodeHeader(payload, extra)
		if err != nil {
			return err
		}
		p.task = t
	case kindHistory:
		p.disorder = p.disorder || (len(p.history) > 0 && n <= p.lastH)
		p.lastH = n
		m := new(a2a.Message)
		if err := proto.Unmarshal(payload, m); err != nil {
			return fmt.Errorf("pgstore: decode history: %w", err)
		}
		p.history = append(p.history, m)
	case kindChunk:
		p.disorder = p.disorder || (len(p.chunks) > 0 && n <= p.lastC)
		p.lastC = n
		a := new(a2a.Artifact)
		if err := proto.Unmarshal(payload, a); err != nil {
			return fmt.Errorf("pgstore: decode artifact: %w", err)
		}
		p.chunks = append(p.chunks, chunk{AppendTo: flag, A: a})
	}
	return nil
}

// assemble sets t's history and artifacts from p.
func (p *pieces) assemble(t *a2a.Task) error {
	if p.disorder {
		return errors.New("pgstore: a task's rows came out of order")
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

// marshal encodes m for a column (never nil: see layout.Marshal).
func marshal(m proto.Message) ([]byte, error) { return layout.Marshal(m) }
