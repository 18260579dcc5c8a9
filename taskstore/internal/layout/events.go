package layout

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// A row of the event log holds the events of one write: seq is the
// number of the last of them and first_seq that of the first, NULL when
// the row holds one event, whose encoding is then the row's response as
// it is. The events of a row are numbered one after the other, and a row
// of several holds in its response each one's encoding, in order, as a
// length and the bytes (package protowire). A 20-chunk stream written in
// one batch is one row instead of one per event: in SQLite each row is an
// insert into the log's B-tree, which costs more than its bytes.

// JoinEvents returns the columns of the log row that holds evs, which
// must not be empty and must be numbered one after the other: the last
// event's number (seq), the first's (first_seq: nil for a row of one
// event) and the response.
func JoinEvents(evs []Logged) (seq int64, first any, data []byte) {
	last := evs[len(evs)-1]
	if len(evs) == 1 {
		return int64(last.Seq), nil, last.Data
	}
	n := 0
	for _, e := range evs {
		n += protowire.SizeBytes(len(e.Data))
	}
	data = make([]byte, 0, n)
	for _, e := range evs {
		data = protowire.AppendBytes(data, e.Data)
	}
	return int64(last.Seq), int64(evs[0].Seq), data
}

// errEventRow is a log row whose events cannot be read.
var errEventRow = errors.New("an event log row holding several events is malformed")

// SplitEvents returns the events of a log row that holds several (its
// first_seq is set), numbered first to last. Their Data share b.
func SplitEvents(b []byte, first, last uint64) ([]Logged, error) {
	// Each event takes at least a byte (its length).
	if first >= last || last-first >= uint64(len(b)) {
		return nil, errEventRow
	}
	out := make([]Logged, 0, last-first+1)
	for seq := first; len(out) < cap(out); seq++ {
		data, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, errEventRow
		}
		b = b[n:]
		out = append(out, Logged{Seq: seq, Data: data})
	}
	if len(b) > 0 {
		return nil, errEventRow
	}
	return out, nil
}
