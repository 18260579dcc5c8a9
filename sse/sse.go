// Package sse writes Server-Sent Events streams for the HTTP bindings.
//
// Every event carries an `id:` with the task's sequence number (when known),
// so a client can tell where it was; an idle stream gets a comment line at a
// fixed interval so proxies do not cut it. The spec defines only `data:`
// lines (brief §5.1); clients must ignore the rest, as the SSE format says.
package sse

import (
	"errors"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// DefaultKeepAlive is the default interval of keep-alive comments.
const DefaultKeepAlive = 15 * time.Second

// Encoder turns one stream item (an event, or the error that ends the
// stream) into the JSON of a `data:` line. It must not return newlines
// (JSON from a2a.Marshal never contains raw newlines).
type Encoder func(ev a2a.StreamEvent, err error) []byte

// Writer writes events to one HTTP response. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	rc   *http.ResponseController
	last time.Time
	err  error
	buf  []byte
}

// NewWriter sends the SSE response headers (status 200, text/event-stream)
// and returns a Writer for the events.
func NewWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &Writer{w: w, rc: http.NewResponseController(w), last: time.Now()}
	sw.flush()
	return sw
}

// Event writes one event: an `event:` line when name is set, an `id:` line
// when id > 0, then the data split into `data:` lines at any newline, then a
// blank line.
func (s *Writer) Event(name string, id uint64, data []byte) error {
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
	s.flush()
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

// Stream writes every item of a stream whose first item was already taken,
// with keep-alive comments every keepAlive of silence (0 turns them off). An
// error item is written as an event named errorEvent (none when "") and ends
// the stream. Stream returns when the stream ends or a write fails.
func Stream(w http.ResponseWriter, keepAlive time.Duration, errorEvent string, first a2a.StreamEvent, next func() (a2a.StreamEvent, error, bool), enc Encoder) {
	sw := NewWriter(w)
	defer sw.close()
	if keepAlive > 0 {
		done := make(chan struct{})
		defer close(done)
		go sw.keepAlive(keepAlive, done)
	}
	ev, err := first, error(nil)
	for {
		name := ""
		if err != nil {
			name = errorEvent
		}
		if sw.Event(name, ev.Seq, enc(ev, err)) != nil || err != nil {
			return
		}
		var ok bool
		ev, err, ok = next()
		if !ok {
			return
		}
	}
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
	s.mu.Unlock()
}

func (s *Writer) keepAlive(every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every / 2)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			s.mu.Lock()
			idle := time.Since(s.last) >= every
			s.mu.Unlock()
			if idle && s.Comment("keep-alive") != nil {
				return
			}
		}
	}
}

// Pull starts a stream and takes its first item, so that a binding can
// answer an error that comes before any event with an ordinary response.
// The returned stop must be called.
func Pull(seq iter.Seq2[a2a.StreamEvent, error]) (first a2a.StreamEvent, err error, ok bool, next func() (a2a.StreamEvent, error, bool), stop func()) {
	next, stop = iter.Pull2(seq)
	first, err, ok = next()
	return first, err, ok, next, stop
}
