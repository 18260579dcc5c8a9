package check

import (
	"bytes"
	"io"
)

// sseIDTap watches the bytes of an SSE stream on their way to an
// sse.Reader and keeps, for every event the reader will return, the value
// of its id: line. The check stream.sse-ids reports the id: lines as the
// server sent them, and sse.Event keeps only a numeric id (0 for "none"
// and for a value that is not a number), which cannot tell "id: abc" from
// no id: line. Only that much framing is read here: lines end at CRLF, LF
// or CR, and an event is dispatched at a blank line after a data: line,
// as sse.Reader does.
type sseIDTap struct {
	r       io.Reader
	line    []byte    // the start of the line being read (at most maxIDLine bytes)
	afterCR bool      // the last byte was a CR (an LF right after it ends nothing)
	data    bool      // the event being read has a data: line
	id      *string   // the event's id: value, nil without an id: line
	ids     []*string // one per dispatched event not yet taken, oldest first
}

// maxIDLine bounds how much of a line the tap keeps: enough for the field
// name and any sensible id.
const maxIDLine = 1 << 10

// Read implements io.Reader.
func (s *sseIDTap) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for _, c := range p[:n] {
		s.scan(c)
	}
	return n, err
}

// scan takes one byte of the stream.
func (s *sseIDTap) scan(c byte) {
	if s.afterCR {
		s.afterCR = false
		if c == '\n' {
			return
		}
	}
	switch c {
	case '\r':
		s.afterCR = true
		s.endLine()
	case '\n':
		s.endLine()
	default:
		if len(s.line) < maxIDLine {
			s.line = append(s.line, c)
		}
	}
}

// endLine takes a complete line.
func (s *sseIDTap) endLine() {
	line := s.line
	s.line = s.line[:0]
	if len(line) == 0 {
		if s.data {
			s.ids = append(s.ids, s.id)
		}
		s.data, s.id = false, nil
		return
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data":
		s.data = true
	case "id":
		v := string(value)
		s.id = &v
	}
}

// next returns the id: value of the next event the reader returned, nil
// when it had none.
func (s *sseIDTap) next() *string {
	if len(s.ids) == 0 {
		return nil
	}
	id := s.ids[0]
	s.ids = s.ids[1:]
	return id
}
