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
// A Writer made by Parking.Serve may also park its stream (Parking): from
// then on it writes HTTP/1.1 chunks to the bare connection.
type Writer struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	rc    *http.ResponseController
	last  time.Time
	err   error
	alive *time.Timer // the keep-alive (and parking) timer, when on
	every time.Duration
	lot   *lot // how to park the stream (nil: it stays on net/http)
}

// bufs holds the buffers events are framed in, so that a stream holds none
// while it waits.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// chunkRoom is the room left before a framed event for its HTTP/1.1 chunk
// header (up to eight hex digits and CRLF).
const chunkRoom = 10

// NewWriter writes the SSE response headers (status 200,
// text/event-stream) and returns a Writer for the events. The headers
// leave with the first event or comment, in the same write, or when the
// handler returns; a caller that must show the stream open before it has
// an event calls Comment.
func NewWriter(w http.ResponseWriter) *Writer {
	s := &Writer{w: w}
	s.start()
	return s
}

// start writes the response headers.
func (s *Writer) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if s.lot != nil {
		// A parked stream's connection is closed after the stream, and a
		// client that is not told may send its next request on it first.
		h.Set("Connection", "close")
	}
	s.w.WriteHeader(http.StatusOK)
	s.rc = http.NewResponseController(s.w)
	s.last = time.Now()
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
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b := append((*bp)[:0], make([]byte, chunkRoom)...)
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
	*bp = b
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(b, flush)
}

// write sends b[chunkRoom:], the framed event or comment, and pushes it to
// the client when flush is set. Callers hold mu.
func (s *Writer) write(b []byte, flush bool) error {
	if s.err != nil {
		return s.err
	}
	if s.lot != nil && s.lot.conn.Load() != nil {
		s.err = s.lot.writeChunk(b)
		s.last = time.Now()
		return s.err
	}
	_, s.err = s.w.Write(b[chunkRoom:])
	if flush {
		s.flush()
	}
	return s.err
}

// Comment writes a comment line (": text"), ignored by every client. Line
// breaks in text become spaces, so a comment can never carry a field.
func (s *Writer) Comment(text string) error {
	text = oneLine.Replace(text)
	b := append(make([]byte, chunkRoom, chunkRoom+len(text)+4), ": "+text+"\n\n"...)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(b, true)
}

// oneLine turns line breaks into spaces.
var oneLine = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

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
// handler returns. A parked stream gets its last chunk and its connection
// is closed.
func (s *Writer) close() {
	s.mu.Lock()
	if s.err == nil {
		s.err = errClosed
		if s.lot != nil {
			s.lot.end()
		}
	}
	if s.alive != nil {
		s.alive.Stop()
	}
	s.mu.Unlock()
}

// keepAlive sends a keep-alive comment whenever the stream has been silent
// for every (never when every is 0), from a timer until close or until the
// stream is parked. A stream that may park is also told, from the same
// timer, when it has been silent long enough to park.
func (s *Writer) keepAlive(every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.every = max(every, 0)
	if d := s.nextTick(0); d > 0 {
		s.alive = time.AfterFunc(d, s.tick)
	}
}

// nextTick returns when the timer must fire next, for a stream silent for
// idle (0: never). Callers hold mu.
func (s *Writer) nextTick(idle time.Duration) time.Duration {
	var d time.Duration
	if s.every > 0 {
		d = s.every - idle
	}
	if s.lot != nil {
		// A stream is told once it has been silent for after; a young
		// one is checked when it would have been, an older one that
		// was not silent at its last check (or was told already)
		// parkRecheck times after later: a busy stream's timer fires no
		// more often than that.
		p := s.lot.after - idle
		if p <= 0 || (idle > 0 && s.lot.checks >= parkRecheck) {
			p = parkRecheck * s.lot.after
		}
		if d == 0 || p < d {
			d = p
		}
	}
	return d
}

// tick is the timer's work: a keep-alive when due, and telling a stream
// that may park that it has been silent long enough.
func (s *Writer) tick() {
	s.mu.Lock()
	if s.err != nil || (s.lot != nil && s.lot.conn.Load() != nil) {
		s.mu.Unlock()
		return // ended, or parked: keep-alives come from the parked wait
	}
	idle := time.Since(s.last)
	if s.lot != nil && idle >= s.lot.after {
		s.lot.due()
	}
	s.mu.Unlock()
	if s.every > 0 && idle >= s.every {
		if s.Comment("keep-alive") != nil {
			return
		}
		idle = 0
	}
	s.mu.Lock()
	if s.err == nil && s.alive != nil { // nil once parked
		if s.lot != nil && s.lot.checks < parkRecheck {
			s.lot.checks++
		}
		s.alive.Reset(s.nextTick(idle))
	}
	s.mu.Unlock()
}
