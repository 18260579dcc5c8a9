package sse_test

import (
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
	"parley.dev/parley/internal/sse"
)

// jsonEnc is a test Encoder: events as {"seq":N}, a failure as an event
// named errorEvent holding {"error":"..."}, a refusal as a 500 with the
// error text.
type jsonEnc struct{ errorEvent string }

func (jsonEnc) Refuse(w http.ResponseWriter, err error) { http.Error(w, err.Error(), 500) }
func (jsonEnc) Start(h http.Header)                     { h.Set("X-Started", "1") }
func (jsonEnc) AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	return fmt.Appendf(b, `{"seq":%d}`, ev.Seq), nil
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

// TestStreamFlushesAfterBatch: events yielded with More set wait for the
// next flush, so a batch goes out in one write; an event without More is
// pushed at once.
func TestStreamFlushesAfterBatch(t *testing.T) {
	rec := newRecorder()
	i := 1
	stream(rec, 0, "", a2a.StreamEvent{Seq: 1, More: true}, func() (a2a.StreamEvent, error, bool) {
		i++
		switch {
		case i == 2:
			if rec.flushes != 0 {
				t.Errorf("after an event with More: %d flushes, want 0", rec.flushes)
			}
			return a2a.StreamEvent{Seq: 2, More: true}, nil, true
		case i == 3:
			return a2a.StreamEvent{Seq: 3}, nil, true // the batch's last
		case i == 4:
			if rec.flushes != 1 {
				t.Errorf("after a batch of three events: %d flushes, want 1", rec.flushes)
			}
			return a2a.StreamEvent{Seq: 4}, nil, true
		}
		return a2a.StreamEvent{}, nil, false
	})
	if p := parseSSE(rec.String()); len(p.events) != 4 {
		t.Fatalf("parsed %+v from %q, want 4 events", p, rec.String())
	}
	if rec.flushes != 2 {
		t.Errorf("%d flushes for a batch of three and one event; want 2", rec.flushes)
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

func TestServeRefusesBeforeFirstEvent(t *testing.T) {
	rec := newRecorder()
	sse.Serve(rec, func(yield func(a2a.StreamEvent, error) bool) { yield(a2a.StreamEvent{}, errors.New("no such task")) }, jsonEnc{}, 0)
	if rec.status != 500 || rec.header.Get("X-Started") != "" || strings.Contains(rec.String(), "data:") {
		t.Errorf("Serve(error first) = %d %q (started %q), want the encoder's refusal and no stream", rec.status, rec.String(), rec.header.Get("X-Started"))
	}
}

// TestServeEmptyStream: a stream without any event (a resume with nothing
// to catch up on) is a valid, empty event stream.
func TestServeEmptyStream(t *testing.T) {
	rec := newRecorder()
	sse.Serve(rec, func(func(a2a.StreamEvent, error) bool) {}, jsonEnc{}, time.Millisecond)
	time.Sleep(10 * time.Millisecond) // no keep-alive may follow the end
	if rec.status != 200 || rec.header.Get("X-Started") != "1" || rec.header.Get("Content-Type") != "text/event-stream" || rec.String() != "" {
		t.Errorf("Serve(empty) = %d %q (started %q, %q), want an empty event stream", rec.status, rec.String(), rec.header.Get("X-Started"), rec.header.Get("Content-Type"))
	}
}
