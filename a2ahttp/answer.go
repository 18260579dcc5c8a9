package a2ahttp

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// This file holds the one place every byte of a response goes through, on
// every protocol, HTTP/1.1 and HTTP/2 alike: answerWriter, whose writes a
// client must take within Options.WriteTimeout.
//
// A client that does not take a write in time loses it: on HTTP/2 the
// stream is reset, on HTTP/1.1 the connection is closed. Either way the
// handler's write returns an error, the handler returns, and what it held
// (its goroutine, the encoded answer) is released. A write is a unary
// answer whole, or one stream event with its flush; an idle stream, which
// writes nothing, is never cut for being idle.
//
// The deadline is kept by a watchdog rather than by a deadline set before
// each write and lifted after it: on HTTP/2 every change of a stream's
// deadline is a message to its connection's serving goroutine, which made
// a 200-chunk gRPC stream cost 1.6 times as much. A write only marks its
// start and end (two atomic additions); the watchdog looks at the writes
// in progress every quarter of the timeout and ends those it found in the
// same write for four looks in a row, with a deadline in the past. So a
// write that a client does not take ends between three quarters of the
// timeout and the timeout and a quarter after it started.
//
// What net/http still sends once the handler has returned is bounded too:
// on HTTP/2 the writer flushes the answer's last bytes itself, watched,
// before it lets go (so net/http no longer counts a small answer's length:
// the bindings declare every unary answer's Content-Length themselves,
// httpx.WriteAnswer; the stream then ends in an empty DATA frame of its
// own, the price of a deadline on the last write, since a deadline set on
// the stream instead may reach net/http after the stream closed); on HTTP/1.1 the connection gets one deadline for the
// rest (the next request on it lifts it). A stream parked off net/http
// (Parking) writes on the bare connection Hijack hands over, which sets the
// same deadline per write (it costs little there); Parking sets none of
// its own. So this writer alone decides the write deadline of every answer
// and event, parked or not, and with no WriteTimeout (Options.WriteTimeout
// negative, `parley serve --write-timeout 0`) nothing is cut anywhere.

// DefaultWriteTimeout is Options.WriteTimeout's default: the time a client
// has to take one write of an answer (a unary answer whole, or one stream
// event). At 30 s a 10 MiB answer needs about 350 KB/s.
const DefaultWriteTimeout = 30 * time.Second

// watchLooks is how many looks of the watchdog, a quarter of the timeout
// apart, find a write stuck before it is ended.
const watchLooks = 4

// answerWriter is the http.ResponseWriter a Handler's handlers write to;
// see the file comment. It is used by one goroutine at a time, as a
// ResponseWriter is, besides the watchdog's end.
type answerWriter struct {
	http.ResponseWriter
	rc  http.ResponseController // of the wrapped writer
	dog *watchdog               // nil: no deadline
	h2  bool
	// timeout is the deadline of each write on a hijacked connection:
	// the watchdog's, or the http.Server's WriteTimeout when that applies
	// instead (a parked stream is no longer net/http's to bound whole);
	// 0: none.
	timeout  time.Duration
	hijacked bool // the connection is Parking's now

	// writes counts the starts and ends of writes: odd while one is in
	// progress.
	writes atomic.Uint64
	// seen and looks are the watchdog's, guarded by its mutex: the count
	// it saw last, and how many looks in a row saw it odd and unchanged.
	seen  uint64
	looks int

	mu       sync.Mutex // orders end and done
	finished bool       // done: the response is net/http's alone
}

// newAnswerWriter returns w watched by dog (nil: no deadline). An
// http.Server with a WriteTimeout of its own bounds its responses whole,
// and gets no watchdog (whose deadline would replace its own). On HTTP/1.1
// the connection may still carry the deadline that ended its previous
// request: it is lifted, so that what net/http writes for this request
// before the handler does (100 Continue) is not refused.
func newAnswerWriter(w http.ResponseWriter, r *http.Request, dog *watchdog) *answerWriter {
	var timeout time.Duration
	if dog != nil {
		timeout = dog.timeout
	}
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
		dog, timeout = nil, srv.WriteTimeout
	}
	a := &answerWriter{ResponseWriter: w, rc: *http.NewResponseController(w), dog: dog, h2: r.ProtoMajor == 2, timeout: timeout}
	if dog != nil {
		if !a.h2 {
			a.rc.SetWriteDeadline(time.Time{})
		}
		dog.add(a)
	}
	return a
}

// Write implements http.ResponseWriter.
func (w *answerWriter) Write(b []byte) (int, error) {
	w.writes.Add(1)
	n, err := w.ResponseWriter.Write(b)
	w.writes.Add(1)
	return n, err
}

// FlushError implements what http.ResponseController.Flush looks for.
func (w *answerWriter) FlushError() error {
	w.writes.Add(1)
	err := w.rc.Flush()
	w.writes.Add(1)
	return err
}

// Flush implements http.Flusher, which connect-go asks of the writer of
// a gRPC stream.
func (w *answerWriter) Flush() { w.FlushError() }

// Unwrap lets http.ResponseController reach the wrapped writer (read
// deadlines, which the body's read uses).
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack implements http.Hijacker for Parking: the connection it hands
// over writes under the same timeout, per write, and under none when no
// timeout applies.
func (w *answerWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := w.rc.Hijack()
	w.hijacked = err == nil
	if err != nil {
		return nc, rw, err
	}
	if w.timeout <= 0 {
		nc.SetWriteDeadline(time.Time{}) // net/http's, if any
		return nc, rw, nil
	}
	return &deadlineConn{Conn: nc, timeout: w.timeout}, rw, nil
}

// end ends the write in progress, unless the response is net/http's
// already (after done, an HTTP/2 response writer must not be used).
func (w *answerWriter) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.finished {
		w.rc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// done is called once the handler has returned; see the file comment for
// what it bounds.
func (w *answerWriter) done() {
	if w.dog == nil {
		return
	}
	if p := recover(); p != nil || w.hijacked {
		// A handler that panics (http.ErrAbortHandler) is net/http's to
		// end as it would without the writer.
		w.dog.remove(w)
		if p != nil {
			panic(p)
		}
		return
	}
	if w.h2 {
		w.FlushError()
	}
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	w.dog.remove(w)
	if !w.h2 {
		w.rc.SetWriteDeadline(time.Now().Add(w.dog.timeout))
	}
}

// watchdog ends the writes no client takes within timeout; see the file
// comment. Its goroutine runs while it watches anything.
type watchdog struct {
	timeout time.Duration

	mu      sync.Mutex
	watched map[*answerWriter]struct{}
	running bool
	stuck   []*answerWriter // the look's, reused
}

// newWatchdog returns a watchdog of timeout, or nil for no timeout.
func newWatchdog(timeout time.Duration) *watchdog {
	if timeout <= 0 {
		return nil
	}
	return &watchdog{timeout: timeout, watched: map[*answerWriter]struct{}{}}
}

func (d *watchdog) add(w *answerWriter) {
	d.mu.Lock()
	d.watched[w] = struct{}{}
	if !d.running {
		d.running = true
		go d.watch()
	}
	d.mu.Unlock()
}

func (d *watchdog) remove(w *answerWriter) {
	d.mu.Lock()
	delete(d.watched, w)
	d.mu.Unlock()
}

// watch looks at the watched writers every quarter of the timeout until
// there are none left.
func (d *watchdog) watch() {
	t := time.NewTicker(max(d.timeout/watchLooks, time.Millisecond))
	defer t.Stop()
	for range t.C {
		d.mu.Lock()
		if len(d.watched) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		stuck := d.stuck[:0]
		for w := range d.watched {
			n := w.writes.Load()
			if n%2 == 1 && n == w.seen {
				if w.looks++; w.looks >= watchLooks {
					stuck = append(stuck, w)
				}
				continue
			}
			w.seen, w.looks = n, 0
		}
		d.mu.Unlock()
		for i, w := range stuck {
			w.end()
			stuck[i] = nil
		}
		d.stuck = stuck[:0]
	}
}

// deadlineConn is a hijacked connection whose every write has its own
// deadline.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.Conn.Write(b)
}
