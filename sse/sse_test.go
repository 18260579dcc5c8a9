package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/sse"
)

// ---------------------------------------------------------------------------
// A recording ResponseWriter and a small SSE parser.

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

// ---------------------------------------------------------------------------
// Writer

func TestNewWriterHeaders(t *testing.T) {
	rec := newRecorder()
	sse.NewWriter(rec)
	if rec.status != http.StatusOK {
		t.Errorf("status = %d, want 200", rec.status)
	}
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := rec.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if rec.flushes == 0 {
		t.Error("NewWriter did not flush the headers")
	}
}

func TestEventFraming(t *testing.T) {
	tests := []struct {
		name string
		id   uint64
		data string
		want string
	}{
		{"id and data", 7, `{"a":1}`, "id: 7\ndata: {\"a\":1}\n\n"},
		{"no id when zero", 0, `{}`, "data: {}\n\n"},
		{"largest id", 1<<64 - 1, "x", "id: 18446744073709551615\ndata: x\n\n"},
		{"empty data", 3, "", "id: 3\ndata: \n\n"},
		{"LF splits lines", 1, "a\nb\nc", "id: 1\ndata: a\ndata: b\ndata: c\n\n"},
		{"CRLF is one line break", 0, "a\r\nb", "data: a\ndata: b\n\n"},
		{"lone CR splits", 0, "a\rb", "data: a\ndata: b\n\n"},
		{"CR CR is two breaks", 0, "a\r\rb", "data: a\ndata: \ndata: b\n\n"},
		{"LF CR is two breaks", 0, "a\n\rb", "data: a\ndata: \ndata: b\n\n"},
		{"trailing newline", 0, "a\n", "data: a\ndata: \n\n"},
		{"leading space kept", 0, " a", "data:  a\n\n"},
		{"colon-led line stays data", 0, "x\n: not a comment", "data: x\ndata: : not a comment\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			w := sse.NewWriter(rec)
			if err := w.Event("", tt.id, []byte(tt.data)); err != nil {
				t.Fatalf("Event: %v", err)
			}
			if got := rec.String(); got != tt.want {
				t.Errorf("Event(%d, %q) wrote %q, want %q", tt.id, tt.data, got, tt.want)
			}
			p := parseSSE(rec.String())
			if len(p.events) != 1 || len(p.foreign) > 0 || p.pending {
				t.Fatalf("parsed %+v, want one event", p)
			}
			if got, want := p.events[0].data, normalizeNewlines(tt.data); got != want {
				t.Errorf("data read back = %q, want %q", got, want)
			}
			if tt.id > 0 && p.events[0].id != strconv.FormatUint(tt.id, 10) {
				t.Errorf("id read back = %q, want %d", p.events[0].id, tt.id)
			}
			if tt.id == 0 && p.events[0].hasID {
				t.Errorf("id line written for id 0")
			}
		})
	}
}

func TestEventsAreSeparate(t *testing.T) {
	rec := newRecorder()
	w := sse.NewWriter(rec)
	for i := uint64(1); i <= 3; i++ {
		if err := w.Event("", i, fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	p := parseSSE(rec.String())
	if len(p.events) != 3 {
		t.Fatalf("got %d events, want 3: %q", len(p.events), rec.String())
	}
	for i, ev := range p.events {
		if want := fmt.Sprintf(`{"n":%d}`, i+1); ev.data != want || ev.id != strconv.Itoa(i+1) {
			t.Errorf("event %d = (id %q, data %q), want (id %d, data %q)", i, ev.id, ev.data, i+1, want)
		}
	}
}

func TestComment(t *testing.T) {
	rec := newRecorder()
	w := sse.NewWriter(rec)
	if err := w.Comment("keep-alive"); err != nil {
		t.Fatal(err)
	}
	if err := w.Event("", 1, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	const want = ": keep-alive\n\nid: 1\ndata: {}\n\n"
	if got := rec.String(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	p := parseSSE(want)
	if len(p.comments) != 1 || len(p.events) != 1 {
		t.Errorf("parsed %+v, want one comment and one event", p)
	}
}

// TestCommentCannotInjectFields: Comment promises a comment line that every
// client ignores, so text holding a line break must not turn its second
// line into a field (here a data line a client would deliver as an event).
func TestCommentCannotInjectFields(t *testing.T) {
	for _, text := range []string{"a\ndata: injected", "a\rdata: injected", "a\r\nid: 99"} {
		rec := newRecorder()
		w := sse.NewWriter(rec)
		if err := w.Comment(text); err != nil {
			t.Fatal(err)
		}
		p := parseSSE(rec.String())
		if p.fields > 0 {
			t.Errorf("Comment(%q) wrote %q, which a client reads as fields: %+v", text, rec.String(), p)
		}
	}
}

func TestWriteErrorIsSticky(t *testing.T) {
	rec := newRecorder()
	rec.failAt = 2
	w := sse.NewWriter(rec)
	if err := w.Event("", 1, []byte("a")); err != nil {
		t.Fatalf("first Event: %v", err)
	}
	if err := w.Event("", 2, []byte("b")); err == nil {
		t.Fatal("Event on a failing connection returned nil")
	}
	n := rec.writeCount()
	if err := w.Event("", 3, []byte("c")); err == nil {
		t.Error("Event after a failed write returned nil")
	}
	if err := w.Comment("keep-alive"); err == nil {
		t.Error("Comment after a failed write returned nil")
	}
	if got := rec.writeCount(); got != n {
		t.Errorf("the writer kept writing after a failure: %d writes, want %d", got, n)
	}
}

// ---------------------------------------------------------------------------
// Stream

// jsonEnc is a test Encoder: events as {"seq":N}, a failure as an event
// named errorEvent holding {"error":"..."}, a refusal as a 500 with the
// error text.
type jsonEnc struct{ errorEvent string }

func (jsonEnc) Refuse(w http.ResponseWriter, err error) { http.Error(w, err.Error(), 500) }
func (jsonEnc) Start(h http.Header)                     { h.Set("X-Started", "1") }
func (jsonEnc) Event(ev a2a.StreamEvent) ([]byte, error) {
	return fmt.Appendf(nil, `{"seq":%d}`, ev.Seq), nil
}
func (e jsonEnc) Fail(err error) (string, []byte) {
	return e.errorEvent, []byte(`{"error":` + strconv.Quote(err.Error()) + `}`)
}

// stream runs sse.Serve on a stream whose items are first, then what next
// returns until it reports false.
func stream(w http.ResponseWriter, keepAlive time.Duration, errorEvent string, first a2a.StreamEvent, next func() (a2a.StreamEvent, error, bool)) {
	seq := func(yield func(a2a.StreamEvent, error) bool) {
		for ev, err, ok := first, error(nil), true; ok; ev, err, ok = next() {
			if !yield(ev, err) {
				return
			}
		}
	}
	sse.Serve(w, seq, jsonEnc{errorEvent}, keepAlive)
}

// events returns a next function that yields events with Seq 2..n, then
// ends.
func events(n int) func() (a2a.StreamEvent, error, bool) {
	i := 1
	return func() (a2a.StreamEvent, error, bool) {
		i++
		if i > n {
			return a2a.StreamEvent{}, nil, false
		}
		return a2a.StreamEvent{Seq: uint64(i)}, nil, true
	}
}

func TestStreamWritesEveryEvent(t *testing.T) {
	rec := newRecorder()
	stream(rec, 0, "", a2a.StreamEvent{Seq: 1}, events(5))
	p := parseSSE(rec.String())
	if len(p.events) != 5 || len(p.comments) != 0 || len(p.foreign) != 0 {
		t.Fatalf("parsed %+v from %q, want 5 events", p, rec.String())
	}
	for i, ev := range p.events {
		if want := fmt.Sprintf(`{"seq":%d}`, i+1); ev.data != want || ev.id != strconv.Itoa(i+1) {
			t.Errorf("event %d = (id %q, %s), want (id %d, %s)", i, ev.id, ev.data, i+1, want)
		}
	}
}

func TestStreamEndsAfterError(t *testing.T) {
	for _, name := range []string{"", "error"} {
		t.Run(fmt.Sprintf("errorEvent=%q", name), func(t *testing.T) {
			rec := newRecorder()
			calls := 0
			next := func() (a2a.StreamEvent, error, bool) {
				calls++
				if calls == 1 {
					return a2a.StreamEvent{}, errors.New("cut off"), true
				}
				return a2a.StreamEvent{Seq: 9}, nil, true
			}
			stream(rec, 0, name, a2a.StreamEvent{Seq: 1}, next)
			if calls != 1 {
				t.Errorf("next called %d times after the error item, want 1", calls)
			}
			p := parseSSE(rec.String())
			if len(p.events) != 2 || len(p.foreign) > 0 {
				t.Fatalf("parsed %+v, want the event then the error", p)
			}
			if p.events[0].event != "" {
				t.Errorf("ordinary event named %q, want no name", p.events[0].event)
			}
			last := p.events[1]
			if !strings.Contains(last.data, "cut off") || last.hasID || last.event != name {
				t.Errorf("error event = %+v, want the error, no id, event name %q", last, name)
			}
		})
	}
}

func TestStreamStopsWhenWriteFails(t *testing.T) {
	for _, failAt := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("failAt=", failAt), func(t *testing.T) {
			rec := newRecorder()
			rec.failAt = failAt
			calls := 0
			next := func() (a2a.StreamEvent, error, bool) { // never ends by itself
				calls++
				if calls > 1000 {
					t.Error("Stream kept pulling events from a dead connection")
					return a2a.StreamEvent{}, nil, false
				}
				return a2a.StreamEvent{Seq: uint64(calls + 1)}, nil, true
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				stream(rec, 0, "", a2a.StreamEvent{Seq: 1}, next)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Stream did not return after a write failed")
			}
			// Each event is one Write; the failing one is event failAt.
			if want := failAt - 1; calls != want {
				t.Errorf("next called %d times, want %d (stop at the first failed write)", calls, want)
			}
		})
	}
}

// TestStreamStopsWhenKeepAliveFails: a keep-alive that fails marks the
// connection dead, so the next event is not written and the stream ends.
func TestStreamStopsWhenKeepAliveFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		rec.failAt = 2 // the first event succeeds; the keep-alive fails
		gate := make(chan struct{})
		calls := 0
		next := func() (a2a.StreamEvent, error, bool) {
			calls++
			<-gate
			return a2a.StreamEvent{Seq: uint64(calls + 1)}, nil, true
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			stream(rec, 10*time.Second, "", a2a.StreamEvent{Seq: 1}, next)
		}()
		time.Sleep(time.Minute) // idle: one keep-alive, which fails
		synctest.Wait()
		if got := rec.writeCount(); got != 2 {
			t.Errorf("%d writes after an idle minute, want 2 (event, failed keep-alive, then nothing)", got)
		}
		close(gate)
		<-done
		if calls != 1 {
			t.Errorf("next called %d times, want 1", calls)
		}
		if got := rec.writeCount(); got != 2 {
			t.Errorf("%d writes in all, want 2: an event was written after the keep-alive failed", got)
		}
	})
}

func TestKeepAliveOnIdleStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		gate := make(chan struct{})
		next := func() (a2a.StreamEvent, error, bool) {
			<-gate
			return a2a.StreamEvent{}, nil, false
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			stream(rec, 10*time.Second, "", a2a.StreamEvent{Seq: 1}, next)
		}()
		// The checker ticks every 5 s and sends a comment once 10 s have
		// passed since the last write: at 10 s, 20 s and 30 s.
		time.Sleep(35 * time.Second)
		synctest.Wait()
		p := parseSSE(rec.String())
		if len(p.events) != 1 || len(p.foreign) != 0 {
			t.Errorf("parsed %+v, want one event", p)
		}
		if len(p.comments) != 3 {
			t.Errorf("got %d keep-alive comments after 35 s idle at a 10 s interval, want 3: %q", len(p.comments), rec.String())
		}
		for _, c := range p.comments {
			if strings.TrimSpace(c) != "keep-alive" {
				t.Errorf("comment %q, want keep-alive", c)
			}
		}
		close(gate)
		<-done
	})
}

func TestNoKeepAliveWhileEventsFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		n := 1
		next := func() (a2a.StreamEvent, error, bool) {
			time.Sleep(4 * time.Second) // busier than the 10 s interval
			n++
			return a2a.StreamEvent{Seq: uint64(n)}, nil, n <= 20
		}
		stream(rec, 10*time.Second, "", a2a.StreamEvent{Seq: 1}, next)
		p := parseSSE(rec.String())
		if len(p.events) != 20 {
			t.Errorf("got %d events, want 20", len(p.events))
		}
		if len(p.comments) != 0 {
			t.Errorf("got %d keep-alives on a stream with an event every 4 s, want none", len(p.comments))
		}
	})
}

func TestKeepAliveOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		next := func() (a2a.StreamEvent, error, bool) {
			time.Sleep(time.Hour)
			return a2a.StreamEvent{}, nil, false
		}
		stream(rec, 0, "", a2a.StreamEvent{Seq: 1}, next)
		if p := parseSSE(rec.String()); len(p.comments) != 0 {
			t.Errorf("keep-alive 0 sent %d comments in an idle hour, want none", len(p.comments))
		}
	})
}

// TestStreamDoesNotWriteAfterReturn: once Stream returns, the handler
// returns and net/http recycles the ResponseWriter (HTTP/2 panics on a
// write after the handler finished). So no goroutine Stream started may
// still be writing, or start writing, after it returns.
//
// Here the client is slow: a keep-alive comment is stuck in Write when the
// stream ends. Stream must wait for that write before it returns.
func TestStreamDoesNotWriteAfterReturn(t *testing.T) {
	rec := newRecorder()
	inComment := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	rec.hold = func() {
		once.Do(func() { close(inComment) })
		<-release
	}
	next := func() (a2a.StreamEvent, error, bool) {
		<-inComment // the stream ends while a keep-alive is being written
		return a2a.StreamEvent{}, nil, false
	}
	returned := make(chan bool, 1)
	go func() {
		stream(rec, time.Millisecond, "", a2a.StreamEvent{Seq: 1}, next)
		returned <- rec.markClosed()
	}()
	<-inComment
	select {
	case busy := <-returned:
		// Stream returned before the stuck write could finish.
		close(release)
		if busy {
			t.Error("Stream returned while its keep-alive goroutine was still inside ResponseWriter.Write")
		}
	case <-time.After(200 * time.Millisecond):
		// Still waiting for the write, as it should: let it finish.
		close(release)
		if busy := <-returned; busy {
			t.Error("Stream returned while a write was in progress")
		}
	}
	time.Sleep(5 * time.Millisecond)
	if n := rec.lateWrites(); n > 0 {
		t.Errorf("%d ResponseWriter writes ran after Stream returned", n)
	}
}

// TestStreamNoLateKeepAlive is the same property without a slow client:
// with a tiny interval the keep-alive ticker is almost always ready when
// the stream ends, and the goroutine's select may pick it over done.
func TestStreamNoLateKeepAlive(t *testing.T) {
	late := 0
	const runs = 100
	for range runs {
		rec := newRecorder()
		stream(rec, 2*time.Nanosecond, "", a2a.StreamEvent{Seq: 1}, events(3))
		rec.markClosed()
		time.Sleep(100 * time.Microsecond) // let a stray goroutine run
		if rec.lateWrites() > 0 {
			late++
		}
	}
	if late > 0 {
		t.Errorf("in %d of %d streams a keep-alive was written after Stream returned", late, runs)
	}
}

// TestStreamWithoutFlusher: a ResponseWriter that cannot flush (a
// middleware's wrapper without Unwrap) still gets the events; the data
// only reaches the client later. Treating the flush error as a write error
// would leave the client an empty 200 response with no error anywhere.
func TestStreamWithoutFlusher(t *testing.T) {
	w := &noFlushWriter{header: http.Header{}}
	stream(w, 0, "", a2a.StreamEvent{Seq: 1}, events(3))
	if p := parseSSE(w.buf.String()); len(p.events) != 3 {
		t.Errorf("a non-flushing ResponseWriter got %d events, want 3 (body %q)", len(p.events), w.buf.String())
	}
}

// ---------------------------------------------------------------------------
// Fuzzing

func FuzzWriter(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}`), uint64(1), false)
	f.Add([]byte(`{"error":{"code":500}}`), uint64(0), true)
	f.Add([]byte(""), uint64(0), false)
	f.Add([]byte("plain"), uint64(1<<64-1), false)
	f.Add([]byte("a\nb"), uint64(2), true)
	f.Add([]byte("a\r\nb\rc\n"), uint64(3), false)
	f.Add([]byte("\r\r\n\n"), uint64(0), false)
	f.Add([]byte("\n\ndata: x\n\nid: 5\n\n"), uint64(4), false)
	f.Add([]byte(": comment\nevent: x\nretry: 10"), uint64(5), true)
	f.Add([]byte(" leading space"), uint64(6), false)
	f.Add([]byte("nul\x00byte"), uint64(7), false)
	f.Add([]byte("\xff\xfe invalid utf-8 \xc3"), uint64(8), false)
	f.Add([]byte("\u2028\u2029\u0085"), uint64(9), false)
	f.Fuzz(func(t *testing.T, data []byte, id uint64, named bool) {
		name := ""
		if named {
			name = "error" // the only name a binding uses
		}
		rec := newRecorder()
		w := sse.NewWriter(rec)
		if err := w.Event(name, id, data); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("keep-alive"); err != nil {
			t.Fatal(err)
		}
		if err := w.Event("", 0, []byte("next")); err != nil {
			t.Fatal(err)
		}
		out := rec.String()
		p := parseSSE(out)
		if len(p.foreign) > 0 {
			t.Fatalf("Event(%q, %d, %q) wrote lines that are no event, id or data field nor comment: %q", name, id, data, p.foreign)
		}
		if p.pending {
			t.Fatalf("the stream ends inside an event: %q", out)
		}
		for _, ev := range p.events {
			for _, l := range ev.lines {
				if !strings.HasPrefix(l, "data: ") && !strings.HasPrefix(l, "id: ") && !strings.HasPrefix(l, "event: ") {
					t.Fatalf("unexpected line %q in %q", l, out)
				}
			}
		}
		if len(p.events) != 2 || len(p.comments) != 1 {
			t.Fatalf("parsed %d events and %d comments, want 2 and 1, from %q", len(p.events), len(p.comments), out)
		}
		ev := p.events[0]
		if !bytes.ContainsAny(data, "\r\n") && ev.data != string(data) {
			t.Fatalf("data %q read back as %q", data, ev.data)
		}
		if want := normalizeNewlines(string(data)); ev.data != want {
			t.Fatalf("data %q read back as %q, want %q", data, ev.data, want)
		}
		if ev.event != name {
			t.Fatalf("event name %q read back as %q", name, ev.event)
		}
		switch {
		case id == 0 && ev.hasID:
			t.Fatalf("id 0 wrote an id line: %q", out)
		case id > 0 && ev.id != strconv.FormatUint(id, 10):
			t.Fatalf("id %d read back as %q", id, ev.id)
		}
		if p.events[1].data != "next" || p.events[1].hasID || p.events[1].event != "" {
			t.Fatalf("the following event was disturbed: %+v", p.events[1])
		}
	})
}

func TestServeRefusesBeforeFirstEvent(t *testing.T) {
	for name, seq := range map[string]func(func(a2a.StreamEvent, error) bool){
		"error first": func(yield func(a2a.StreamEvent, error) bool) { yield(a2a.StreamEvent{}, errors.New("no such task")) },
		"empty":       func(func(a2a.StreamEvent, error) bool) {},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			sse.Serve(rec, seq, jsonEnc{}, 0)
			if rec.status != 500 || rec.header.Get("X-Started") != "" || strings.Contains(rec.String(), "data:") {
				t.Errorf("Serve(%s) = %d %q (started %q), want the encoder's refusal and no stream", name, rec.status, rec.String(), rec.header.Get("X-Started"))
			}
		})
	}
}
