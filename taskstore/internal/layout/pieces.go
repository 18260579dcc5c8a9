package layout

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// The statements that read a task's pieces return rows of one shape,
// (kind, n, payload, flag, extra), whatever table they come from:
//
//	KindHeader:   n the task's last sequence number, payload data, flag
//	              whether status is set, extra status
//	KindHistory:  n, payload message
//	KindChunk:    n, payload chunk, flag append
//
// A task's rows come in n order (each table's primary key), which Pieces
// checks.
const (
	KindHeader = iota
	KindHistory
	KindChunk
)

// DecodeHeader returns the task of a header's data and status columns,
// without history and artifacts; hasStatus tells an empty status from a
// missing one (NULL).
func DecodeHeader(data, status []byte, hasStatus bool) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("decode task: %w", err)
	}
	if hasStatus {
		t.Status = new(a2a.TaskStatus)
		if err := proto.Unmarshal(status, t.Status); err != nil {
			return nil, fmt.Errorf("decode task status: %w", err)
		}
	}
	return t, nil
}

// Pieces is what the rows of one task hold, decoded as they are read.
type Pieces struct {
	Task     *a2a.Task // from the header row; nil when it was not read
	history  []*a2a.Message
	chunks   []Chunk
	lastH    int64 // the n of the last history and chunk rows
	lastC    int64
	disorder bool // rows came out of n order
}

// Add decodes one row of the shape above into p.
func (p *Pieces) Add(kind, n int64, payload []byte, flag bool, extra []byte) error {
	switch kind {
	case KindHeader:
		t, err := DecodeHeader(payload, extra, flag)
		if err != nil {
			return err
		}
		t.Generation = taskstore.Generation(uint64(n))
		p.Task = t
	case KindHistory:
		p.disorder = p.disorder || (len(p.history) > 0 && n <= p.lastH)
		p.lastH = n
		m := new(a2a.Message)
		if err := proto.Unmarshal(payload, m); err != nil {
			return fmt.Errorf("decode history: %w", err)
		}
		p.history = append(p.history, m)
	case KindChunk:
		p.disorder = p.disorder || (len(p.chunks) > 0 && n <= p.lastC)
		p.lastC = n
		a := new(a2a.Artifact)
		if err := proto.Unmarshal(payload, a); err != nil {
			return fmt.Errorf("decode artifact: %w", err)
		}
		p.chunks = append(p.chunks, Chunk{AppendTo: flag, A: a})
	}
	return nil
}

// Assemble sets t's history and artifacts from p. A task stored whole
// (EncodeCreate) has history and artifacts in its header already; rows
// written after it follow them: messages after its messages, chunks
// folded onto its artifacts.
func (p *Pieces) Assemble(t *a2a.Task) error {
	if p.disorder {
		return errors.New("a task's rows came out of order")
	}
	if len(t.History) == 0 {
		t.History = p.history
	} else {
		t.History = append(t.History, p.history...)
	}
	if len(p.chunks) == 0 {
		return nil
	}
	chunks := p.chunks
	if len(t.Artifacts) > 0 {
		chunks = make([]Chunk, 0, len(t.Artifacts)+len(p.chunks))
		for _, a := range t.Artifacts {
			chunks = append(chunks, Chunk{A: a})
		}
		chunks = append(chunks, p.chunks...)
	}
	t.Artifacts = FoldArtifacts(chunks)
	return nil
}
