package memstore

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// A finished task's logged events are kept in one buffer (packedEvents):
// each event's protobuf encoding, back to back, after a byte of flags,
// with the offset where each one ends. A chunk of a long stream, some ten
// bytes of text in an artifact update, encodes in about a hundred bytes,
// seventy-odd of which are the task's and context's ids; the log leaves
// them out of the status and artifact updates that carry the task's own
// (elide) and puts them back when it decodes the event. An event so kept
// costs its encoding without the ids and four bytes: no object, no
// pointer, nothing the garbage collector walks.

// The flags of an encoded event: which of the task's ids were left out.
const (
	elidedTask byte = 1 << iota
	elidedContext
)

// packedEvents is a run of a log's events, encoded. It never changes once
// made: packing and pruning make new ones.
type packedEvents struct {
	buf  []byte
	ends []uint32 // where each event ends in buf
	// task and ctx are the ids left out of the events (elide).
	task, ctx string
}

// len returns how many events p holds; a nil p holds none.
func (p *packedEvents) len() int {
	if p == nil {
		return 0
	}
	return len(p.ends)
}

var errLogTooLarge = errors.New("memstore: a task's log is too large to pack")

// packEvents encodes the events of old, then those of live, into one
// packedEvents, leaving the task's and context's ids out of them (old's,
// when there is one). It uses and returns the scratch buffer scratch.
func packEvents(old *packedEvents, live []*a2a.StreamResponse, task, ctx string, scratch []byte) (*packedEvents, []byte, error) {
	buf := scratch[:0]
	ends := make([]uint32, old.len(), old.len()+len(live))
	if old != nil {
		buf = append(buf, old.buf...)
		copy(ends, old.ends)
		task, ctx = old.task, old.ctx
	}
	var enc proto.MarshalOptions
	for _, r := range live {
		at := len(buf)
		buf = append(buf, 0)
		var err error
		if buf, err = enc.MarshalAppend(buf, r); err != nil {
			return nil, buf, fmt.Errorf("memstore: encode a logged event: %w", err)
		}
		n, flags := elide(buf[at+1:], task, ctx)
		buf[at] = flags
		buf = buf[:at+1+n]
		if len(buf) > math.MaxUint32 {
			return nil, buf, errLogTooLarge
		}
		ends = append(ends, uint32(len(buf)))
	}
	return &packedEvents{buf: slices.Clone(buf), ends: ends, task: task, ctx: ctx}, buf, nil
}

// elide leaves the task id and the context id out of the encoded event
// enc when it is a status or artifact update (StreamResponse fields 3 and
// 4) that carries task and ctx in its fields task_id and context_id (1
// and 2 in both), once each. It rewrites enc in place and returns the
// length of what is left and the flags of what it left out.
func elide(enc []byte, task, ctx string) (int, byte) {
	num, typ, n := protowire.ConsumeTag(enc)
	if n < 0 || typ != protowire.BytesType || (num != 3 && num != 4) {
		return len(enc), 0
	}
	inner, m := protowire.ConsumeBytes(enc[n:])
	if m < 0 || n+m != len(enc) {
		return len(enc), 0 // not the payload alone
	}
	start := len(enc) - len(inner)
	// cuts are the fields to leave out, as ranges of enc, in order.
	var cuts [2][2]int
	var flags byte
	k, seen := 0, byte(0)
	for p := start; p < len(enc); {
		fn, ft, tn := protowire.ConsumeTag(enc[p:])
		if tn < 0 {
			return len(enc), 0
		}
		vn := protowire.ConsumeFieldValue(fn, ft, enc[p+tn:])
		if vn < 0 {
			return len(enc), 0
		}
		var bit byte
		var id string
		switch fn {
		case 1:
			bit, id = elidedTask, task
		case 2:
			bit, id = elidedContext, ctx
		}
		if bit != 0 {
			if seen&bit != 0 {
				return len(enc), 0 // the field twice: leave it as it is
			}
			seen |= bit
			if v, _ := protowire.ConsumeBytes(enc[p+tn:]); ft == protowire.BytesType && id != "" && string(v) == id {
				cuts[k] = [2]int{p, p + tn + vn}
				k++
				flags |= bit
			}
		}
		p += tn + vn
	}
	if k == 0 {
		return len(enc), 0
	}
	size := len(inner)
	for _, c := range cuts[:k] {
		size -= c[1] - c[0]
	}
	// The new length takes no more bytes than the old one, and what is
	// kept only moves towards the front.
	w := len(protowire.AppendVarint(enc[:n], uint64(size)))
	from := start
	for _, c := range cuts[:k] {
		w += copy(enc[w:], enc[from:c[0]])
		from = c[1]
	}
	w += copy(enc[w:], enc[from:])
	return w, flags
}

// encoded returns the encoding of event i of p, without the ids it left
// out, and its flags.
func (p *packedEvents) encoded(i int) ([]byte, byte, error) {
	start := uint32(0)
	if i > 0 {
		start = p.ends[i-1]
	}
	if start >= p.ends[i] || int(p.ends[i]) > len(p.buf) {
		return nil, 0, errors.New("memstore: decode a logged event: no encoding")
	}
	b := p.buf[start:p.ends[i]]
	return b[1:], b[0], nil
}

// event decodes event i of p, with the ids it left out put back.
func (p *packedEvents) event(i int) (*a2a.StreamResponse, error) {
	b, flags, err := p.encoded(i)
	if err != nil {
		return nil, err
	}
	r := new(a2a.StreamResponse)
	if err := proto.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("memstore: decode a logged event: %w", err)
	}
	if flags == 0 {
		return r, nil
	}
	var task, ctx *string
	switch u := r.Payload.(type) {
	case *a2a.StreamResponse_StatusUpdate:
		task, ctx = &u.StatusUpdate.TaskId, &u.StatusUpdate.ContextId
	case *a2a.StreamResponse_ArtifactUpdate:
		task, ctx = &u.ArtifactUpdate.TaskId, &u.ArtifactUpdate.ContextId
	default:
		return nil, errors.New("memstore: decode a logged event: ids left out of an event that has none")
	}
	if flags&elidedTask != 0 {
		*task = p.task
	}
	if flags&elidedContext != 0 {
		*ctx = p.ctx
	}
	return r, nil
}

// drop returns p without its first n events (0 < n < p.len()), in arrays
// of its own.
func (p *packedEvents) drop(n int) *packedEvents {
	off := p.ends[n-1]
	ends := make([]uint32, len(p.ends)-n)
	for i, end := range p.ends[n:] {
		ends[i] = end - off
	}
	return &packedEvents{buf: slices.Clone(p.buf[off:]), ends: ends, task: p.task, ctx: p.ctx}
}
