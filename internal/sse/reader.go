package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Event is one dispatched Server-Sent Event, as a Reader returns it.
type Event struct {
	// Name is the event: field, "" for the default "message".
	Name string
	// ID is the id: field as a number; 0 when absent or not a number.
	ID uint64
	// Data is the event's data: lines joined with "\n".
	Data []byte
}

// Reader reads Server-Sent Events (the WHATWG format): data lines are
// joined with newlines, `event:` and `id:` are kept, `retry:` and comment
// lines (keep-alives) are ignored, and CRLF, CR and LF all end a line. A
// Reader is used by one goroutine.
type Reader struct {
	sc    *bufio.Scanner
	limit int
	data  []byte
	name  string
	id    uint64
}

// NewReader returns a reader of events of at most limit bytes each.
func NewReader(r io.Reader, limit int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(32<<10, limit)), limit)
	sc.Split(splitLines)
	return &Reader{sc: sc, limit: limit}
}

// ErrEventTooLarge is returned for an event over the Reader's limit.
var ErrEventTooLarge = errors.New("server-sent event too large")

// Next returns the next event. It returns io.EOF at a clean end of the
// stream (an event without its closing blank line is dropped, as the
// format says) and any other read error as it is.
func (s *Reader) Next() (Event, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if s.data == nil {
				s.name, s.id = "", 0
				continue // a blank line with no data dispatches nothing
			}
			ev := Event{Name: s.name, ID: s.id, Data: s.data}
			s.data, s.name, s.id = nil, "", 0
			return ev, nil
		}
		if line[0] == ':' {
			continue // a comment, e.g. a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if err := s.field(string(field), value); err != nil {
			return Event{}, err
		}
	}
}

// field records one field line of the event being read.
func (s *Reader) field(name string, value []byte) error {
	switch name {
	case "data":
		if len(s.data)+len(value)+1 > s.limit {
			return ErrEventTooLarge
		}
		if s.data == nil {
			s.data = make([]byte, 0, len(value))
		} else {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
	case "event":
		s.name = string(value)
	case "id":
		// The id belongs to this event only (a StreamEvent's Seq is per
		// event); a value that is not a number means "unknown".
		if n, err := strconv.ParseUint(string(value), 10, 64); err == nil {
			s.id = n
		} else {
			s.id = 0
		}
	}
	return nil
}

// readLine returns the next line without its terminator. The slice is
// valid until the next call.
func (s *Reader) readLine() ([]byte, error) {
	if s.sc.Scan() {
		return s.sc.Bytes(), nil
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, ErrEventTooLarge
		}
		return nil, err
	}
	return nil, io.EOF
}

// splitLines is a bufio.SplitFunc for SSE lines: CRLF, LF or a lone CR
// ends a line.
func splitLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
	if data[i] == '\n' {
		return i + 1, data[:i], nil
	}
	// A CR: part of CRLF when an LF follows; wait for more input when the
	// CR is the last byte read so far.
	if i+1 < len(data) {
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}
