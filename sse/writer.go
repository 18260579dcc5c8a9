// Package sse is the Server-Sent Events framing of the two HTTP bindings,
// both halves: Serve answers a streaming operation (one loop for every
// binding: first-event errors, keep-alives, flushing, the error that ends a
// stream), Writer frames events, and Reader parses them on the client side.
//
// Every event carries an `id:` with the task's sequence number (when known),
// so a client can tell where it was; an idle stream gets a comment line at a
// fixed interval so proxies do not cut it. The spec defines only `data:`
// lines (spec §9.4.2, §11.7); clients must ignore the rest, as the SSE format
// says.
package sse

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Writer writes events to one HTTP response. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	rc    *http.ResponseController
	last  time.Time
	err   error
	buf   []byte
	alive *time.Timer // the keep-alive timer, when on
}

// NewWriter writes the SSE response headers (status 200,
// text/event-stream) and returns a Writer for the events. The headers
// leave with the first event or comment, in the same write, or when the
// handler returns; a caller that must show the stream open before it has
// an event calls Comment.
func NewWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: http.NewResponseController(w), last: time.Now()}
}

// Event writes one event: an `event:` line when name is set, an `id:` line
// when id > 0, then the data split into `data:` lines at any newline, then a
// blank line.
func (s *Writer) Event(name string, id uint64, data []byte) error {
	return s.event(name, id, data, true)
}

// event writes one event, and pushes it to the client when flush is set
// (otherwise it waits in the response's buffer for the next flush).
func (s *Writer) event(name string, id uint64, data []byte, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	b := s.buf[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	if id > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, '\n')
	}
	start := 0
	for i := 0; i <= len(data); i++ {
		if i == len(data) || data[i] == '\n' || data[i] == '\r' {
			b = append(b, "data: "...)
			b = append(b, data[start:i]...)
			b = append(b, '\n')
			if i < len(data) && data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	b = append(b, '\n')
	s.buf = b
	_, s.err = s.w.Write(b)
	if flush {
		s.flush()
	}
	return s.err
}

// Comment writes a comment line (": text"), ignored by every client. Line
// breaks in text become spaces, so a comment can never carry a field.
func (s *Writer) Comment(text string) error {
	text = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	_, s.err = s.w.Write([]byte(": " + text + "\n\n"))
	s.flush()
	return s.err
}

// flush pushes buffered bytes to the client. Callers hold mu (or own s).
func (s *Writer) flush() {
	// A writer that cannot flush still gets every event, just later.
	if err := s.rc.Flush(); err != nil && s.err == nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
	}
	s.last = time.Now()
}

// errClosed is the state of a Writer whose handler has returned.
var errClosed = errors.New("sse: stream closed")

// close stops all writes: the response must not be touched once the
// handler returns.
func (s *Writer) close() {
	s.mu.Lock()
	if s.err == nil {
		s.err = errClosed
	}
	if s.alive != nil {
		s.alive.Stop()
	}
	s.mu.Unlock()
}

// keepAlive sends a keep-alive comment whenever the stream has been silent
// for every (never when every is 0), from a timer until close.
func (s *Writer) keepAlive(every time.Duration) {
	if every <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alive = time.AfterFunc(every, func() {
		s.mu.Lock()
		idle := time.Since(s.last)
		s.mu.Unlock()
		if idle >= every {
			if s.Comment("keep-alive") != nil {
				return
			}
			idle = 0
		}
		s.mu.Lock()
		if s.err == nil {
			s.alive.Reset(every - idle)
		}
		s.mu.Unlock()
	})
}
