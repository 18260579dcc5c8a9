package sse_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
)

// The harness of the writer and stream tests: a recording ResponseWriter
// and an SSE parser that reports every line it does not expect, since the
// exact framing is what these tests check.

// recorder is an http.ResponseWriter and http.Flusher that keeps what was
// written, safe for the concurrent use a keep-alive goroutine makes of it.
type recorder struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	buf     bytes.Buffer
	writes  int // Write calls, successful or not
	flushes int

	// failAt makes the n-th Write call (1-based) and every later one fail;
	// 0 never fails.
	failAt int
	// hold, when set, is called (without the lock) at the start of every
	// Write whose data starts with ':' — a comment — and may block.
	hold func()
	// active counts Write calls in progress; closed is set by the test once
	// the function that owns the writer has returned; late counts Write
	// calls that started, or were still running, after that.
	active int
	closed bool
	late   int
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.writes++
	n := r.writes
	r.active++
	if r.closed {
		r.late++
	}
	hold := r.hold
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.active--
		r.mu.Unlock()
	}()
	if hold != nil && len(p) > 0 && p[0] == ':' {
		hold()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.failAt > 0 && n >= r.failAt {
		return 0, errors.New("recorder: connection reset")
	}
	return r.buf.Write(p)
}

func (r *recorder) Flush() {
	r.mu.Lock()
	r.flushes++
	r.mu.Unlock()
}

// markClosed records that the owner of the writer has returned, and reports
// whether a Write was in progress at that moment.
func (r *recorder) markClosed() (writeInProgress bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.active > 0 {
		r.late++
		return true
	}
	return false
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func (r *recorder) lateWrites() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.late
}

func (r *recorder) writeCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

// noFlushWriter is an http.ResponseWriter that cannot flush, like the
// writer of a middleware that wraps the real one without Unwrap.
type noFlushWriter struct {
	header http.Header
	buf    bytes.Buffer
}

func (w *noFlushWriter) Header() http.Header         { return w.header }
func (w *noFlushWriter) WriteHeader(int)             {}
func (w *noFlushWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

// parsedEvent is one event dispatched by the parser.
type parsedEvent struct {
	data  string
	event string // the event type, if named
	id    string // the id field given in this event, if any
	hasID bool
	lines []string // the raw field lines of the event
}

// parsed is the result of parsing a stream.
type parsed struct {
	events   []parsedEvent
	comments []string
	// foreign lists lines that are neither an event, id or data field nor
	// a comment. The writer must never produce one.
	foreign []string
	// pending is true when the stream ends in the middle of an event (no
	// blank line after its fields).
	pending bool
	// fields counts the field lines of the whole stream.
	fields int
}

// parseSSE interprets a stream as the WHATWG HTML "event stream
// interpretation" algorithm does: lines end at CRLF, LF or CR; a blank line
// dispatches the event (unless its data buffer is empty); "data" values are
// joined with LF; one space after the colon is dropped; lines starting with
// a colon are comments.
func parseSSE(s string) parsed {
	var out parsed
	var data strings.Builder
	var cur parsedEvent
	fields := 0
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			// A final line without an end of line is not processed.
			out.pending = true
			break
		}
		line := s[:i]
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			s = s[i+2:]
		} else {
			s = s[i+1:]
		}
		if line == "" {
			if data.Len() > 0 {
				cur.data = strings.TrimSuffix(data.String(), "\n")
				out.events = append(out.events, cur)
			}
			data.Reset()
			cur = parsedEvent{}
			fields = 0
			continue
		}
		if line[0] == ':' {
			out.comments = append(out.comments, line[1:])
			continue
		}
		fields++
		out.fields++
		cur.lines = append(cur.lines, line)
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "event":
			cur.event = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				cur.id, cur.hasID = value, true
			}
		default:
			out.foreign = append(out.foreign, line)
		}
	}
	if fields > 0 {
		out.pending = true
	}
	return out
}

// normalizeNewlines turns CRLF and lone CR into LF, which is what an SSE
// client reads back from data split into lines.
func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
