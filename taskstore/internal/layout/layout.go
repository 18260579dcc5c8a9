// Package layout encodes a task into the pieces the SQL stores keep
// (sqlitestore, pgstore) and folds them back: the header row, one row per
// history message and one per artifact update ("chunk"), so that an event
// costs a few small writes whatever the size of the task. Every payload is
// protobuf binary.
package layout

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore/internal/order"
)

// Header is the tasks row of a task, encoded: Data is the task without
// its status, history and artifacts; Status is nil when the task has none;
// the other fields are the columns ListTasks sorts and filters on.
type Header struct {
	Data, Status []byte
	ContextID    string
	State        int32
	StatusMS     int64
}

// EncodeHeader returns the header of t.
func EncodeHeader(t *a2a.Task) (Header, error) {
	h := Header{ContextID: t.GetContextId(), State: int32(t.GetStatus().GetState()), StatusMS: order.StatusMillis(t)}
	var err error
	if h.Data, err = Marshal(&a2a.Task{Id: t.GetId(), ContextId: t.GetContextId(), Metadata: t.GetMetadata()}); err != nil {
		return h, err
	}
	if t.Status != nil {
		if h.Status, err = Marshal(t.Status); err != nil {
			return h, err
		}
	}
	return h, nil
}

// EncodedChunk is one artifact row: the artifact id, whether the chunk is
// appended, and the chunk (an Artifact), encoded.
type EncodedChunk struct {
	ID       string
	AppendTo bool
	Data     []byte
}

// Parts is a task's history and artifacts, encoded one row each.
type Parts struct {
	History   [][]byte
	Artifacts []EncodedChunk
}

// EncodeParts encodes a task's history and artifacts, one row each.
func EncodeParts(t *a2a.Task) (Parts, error) {
	var p Parts
	for _, m := range t.GetHistory() {
		b, err := Marshal(m)
		if err != nil {
			return p, err
		}
		p.History = append(p.History, b)
	}
	for _, a := range t.GetArtifacts() {
		b, err := Marshal(a)
		if err != nil {
			return p, err
		}
		p.Artifacts = append(p.Artifacts, EncodedChunk{ID: a.GetArtifactId(), Data: b})
	}
	return p, nil
}

// Chunk is one artifact row, decoded.
type Chunk struct {
	AppendTo bool
	A        *a2a.Artifact
}

// FoldArtifacts folds a task's chunks, in row order, into its artifacts by
// the rule of taskstore.Apply: an appended chunk adds its parts to the
// artifact with its id, another replaces it, a new id starts an artifact.
func FoldArtifacts(chunks []Chunk) []*a2a.Artifact {
	if len(chunks) == 0 {
		return nil
	}
	var out []*a2a.Artifact
	at := make(map[string]int, 4)
	for _, c := range chunks {
		id := c.A.GetArtifactId()
		i, known := at[id]
		switch {
		case !known:
			at[id] = len(out)
			out = append(out, c.A)
		case c.AppendTo:
			a2a.AppendChunk(out[i], c.A)
		default:
			out[i] = c.A
		}
	}
	return out
}

// Marshal encodes m; an empty message is an empty, not a nil, slice, so
// that it is stored as an empty value rather than NULL.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
