package sse

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
)

// Parking takes HTTP/1.1 streams that have been silent for a while off
// net/http's connection machinery, so that an idle stream costs little
// (the aim: 10,000 streams may watch one task).
//
// An open HTTP/1.1 response holds a goroutine for its handler, another
// that net/http reads the connection with, and 10 KiB of buffers, all for
// as long as the handler runs. Parking.Serve runs a stream on a goroutine
// of its own instead; when the stream has been silent for a while, the
// handler hijacks the connection, hands it to that goroutine and returns,
// which frees the rest. The parked stream waits by reading the bare
// connection, so it still sees its client go; it writes its events, its
// keep-alives and, at its end, the last chunk itself, then closes the
// connection. So that no client sends its next request on a connection
// about to close, every stream that may park says "Connection: close":
// an HTTP/1.1 connection serves one stream, and requests before it.
//
// HTTP/2 streams, HTTP/1.0 and ResponseWriters that cannot be hijacked are
// served as Serve serves them.
type Parking struct {
	after time.Duration

	mu      sync.Mutex
	closed  bool
	streams map[*lot]struct{} // the streams served, to end at Close
	wg      sync.WaitGroup    // their goroutines; added to under mu, before closed
}

// DefaultParkAfter is how long a stream must be silent to be parked, by
// default. It is short so that a burst of new streams that go quiet at
// once (subscribers of tasks that wait) holds net/http's buffers and
// goroutines briefly: what a burst leaves in the process's resident
// memory is its peak, and with 100 ms that peak was as much as what
// 2,000 parked streams keep (the aim: 16 KiB per idle stream, 20 KiB in a
// burst). A stream that has written since it started is checked only
// every parkRecheck of these once it has been checked parkRecheck times
// (Writer.nextTick), so a busy stream's timer fires no more often than it
// did with 100 ms.
const DefaultParkAfter = 20 * time.Millisecond

// parkRecheck is how many DefaultParkAfter (or the Parking's own after)
// pass between two checks of a stream that was not silent at its last
// one, after its first parkRecheck checks.
const parkRecheck = 5

// A parked stream's writes get no deadline from Parking: they are bounded
// by the connection the handler hijacks, which carries its server's write
// policy (package a2ahttp's handler hands over one that puts its write
// deadline, Options.WriteTimeout, on every write, and none when that is
// turned off). So one place decides the write deadline of every answer and
// event, parked or not.

// NewParking returns a Parking that parks streams silent for after (0:
// DefaultParkAfter). Close it when the server shuts down.
func NewParking(after time.Duration) *Parking {
	if after <= 0 {
		after = DefaultParkAfter
	}
	return &Parking{after: after, streams: make(map[*lot]struct{})}
}

// Close ends every stream served through p, parked or not, as if each
// request's context had ended, and waits until they have written their end.
// A parked stream still writing closeGrace later (a client that stopped
// reading, on a connection without a write deadline) has its connection
// closed, which ends the write. Streams that arrive later are served
// without parking.
func (p *Parking) Close() {
	p.mu.Lock()
	p.closed = true
	for l := range p.streams {
		l.stop()
	}
	p.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(ended)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-ended:
		return
	case <-t.C:
	}
	p.mu.Lock()
	for l := range p.streams {
		if pc := l.conn.Load(); pc != nil {
			pc.nc.Close()
		}
	}
	p.mu.Unlock()
	<-ended
}

// closeGrace is how long Close lets the streams it ended write their end
// before it closes the connections of the parked ones still writing.
const closeGrace = time.Second

// Streams returns how many streams p serves now, parked or not: a server
// that drains waits for it to reach zero before Close ends the rest.
func (p *Parking) Streams() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.streams)
}

// enter counts one more stream and its goroutine, unless p is closed. A
// map entry costs a stream less than a context.AfterFunc on a context of
// p's would (the aim: 16 KiB per idle stream).
func (p *Parking) enter(l *lot) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.streams[l] = struct{}{}
	p.wg.Add(1)
	return true
}

// leave is the end of a stream that entered.
func (p *Parking) leave(l *lot) {
	p.mu.Lock()
	delete(p.streams, l)
	p.mu.Unlock()
	p.wg.Done()
}

// Serve is the Serve of a stream that may be parked: open is called with
// a context that carries the stream's Idler (streamctx.WithIdler) and keeps
// ctx's values; it ends when ctx ends before the stream is parked, or when
// p is closed. A nil Parking serves as Serve does.
func (p *Parking) Serve(ctx context.Context, w http.ResponseWriter, r *http.Request, open func(context.Context) iter.Seq2[a2a.StreamEvent, error], enc Encoder, keepAlive time.Duration) {
	if p == nil || r.ProtoMajor != 1 || !r.ProtoAtLeast(1, 1) || !canHijack(w) {
		Serve(w, open(ctx), enc, keepAlive)
		return
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sw := &Writer{w: w}
	handoff := make(chan chan hijacked)
	l := &lot{sw: sw, after: p.after, cancel: cancel, ended: sctx.Done(), handoff: handoff, parkDue: make(chan struct{}, 1)}
	sw.lot = l
	if !p.enter(l) {
		cancel()
		Serve(w, open(ctx), enc, keepAlive)
		return
	}
	go func() {
		defer p.leave(l)
		defer l.stop()
		defer close(handoff) // the stream ended
		serve(sw, open(streamctx.WithIdler(sctx, l)), enc, keepAlive)
	}()
	// The handler's goroutine waits until the stream ends or asks for its
	// connection, and ends the stream when the request's context ends
	// first; once the connection is handed over, the handler returns, and
	// the request's context (which net/http then ends) no longer matters.
	requestDone := ctx.Done()
	for {
		select {
		case <-requestDone:
			l.stop()
			requestDone = nil
		case reply, ok := <-handoff:
			if !ok {
				return // the stream ended
			}
			nc, rw, err := http.NewResponseController(w).Hijack()
			if err == nil && rw.Reader.Buffered() > 0 {
				// A request pipelined behind the stream: it will not be
				// answered, and the connection closes after the stream.
				rw.Reader.Discard(rw.Reader.Buffered())
			}
			reply <- hijacked{nc, err}
			if err == nil {
				return
			}
		}
	}
}

// canHijack reports whether w, or a ResponseWriter it wraps, can be
// hijacked.
func canHijack(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// hijacked is the handler's answer to a stream asking for its connection.
type hijacked struct {
	nc  net.Conn
	err error
}

// lot is the parking state of one stream, and its streamctx.Idler. An idle
// stream's memory is mostly its lot, its Writer and its contexts, so the
// lot keeps little, and nothing the parked stream no longer needs (the
// aim: 16 KiB per idle stream).
type lot struct {
	sw       *Writer
	after    time.Duration
	cancel   context.CancelFunc // ends the stream's context
	ended    <-chan struct{}    // the Done of the stream's context
	handoff  chan chan hijacked // to the handler: the connection, please; closed when the stream ends; nil once parked
	parkDue  chan struct{}      // from the timer: silent for after; nil once parked (guarded by the Writer's mu)
	conn     atomic.Pointer[parkedConn]
	woken    atomic.Bool
	checks   uint8       // the timer's checks so far, up to parkRecheck (guarded by the Writer's mu)
	stopWake func() bool // stops waking on the stream's context ending
	rbuf     [16]byte
}

// parkedConn is a parked stream's connection.
type parkedConn struct{ nc net.Conn }

// stop ends the stream: its context, and a parked wait.
func (l *lot) stop() {
	l.cancel()
	l.Wake()
}

// due tells the stream's wait it may park (from the timer). Callers hold
// the Writer's mu.
func (l *lot) due() {
	select {
	case l.parkDue <- struct{}{}:
	default:
	}
}

// Wake implements streamctx.Idler.
func (l *lot) Wake() {
	l.woken.Store(true)
	if pc := l.conn.Load(); pc != nil {
		pc.nc.SetReadDeadline(aLongTimeAgo) // ends the parked read
	}
}

// aLongTimeAgo is a deadline in the past: setting it ends a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// Idle implements streamctx.Idler: before the stream is parked, it waits on ready
// and parks when the timer says the stream has been silent long enough;
// parked, it waits in parkedIdle.
func (l *lot) Idle(ctx context.Context, ready <-chan struct{}) bool {
	sw := l.sw
	for l.conn.Load() == nil {
		select {
		case <-ctx.Done():
			return false
		case <-ready:
			l.woken.Store(false)
			return true
		case <-l.parkDue:
			sw.mu.Lock()
			silent := sw.err == nil && !sw.last.IsZero() && time.Since(sw.last) >= l.after
			sw.mu.Unlock()
			if silent && !l.park(ctx) {
				return false
			}
		}
	}
	return l.parkedIdle(ctx)
}

// park asks the handler for the connection. It reports false when the
// stream must end instead: it was ended first (its request's context
// ended, or Parking.Close), or the connection could not be had.
func (l *lot) park(ctx context.Context) bool {
	sw := l.sw
	reply := make(chan hijacked, 1)
	select {
	case l.handoff <- reply:
	case <-ctx.Done():
		return false
	}
	h := <-reply
	if h.err != nil {
		return false // the stream ends; its client may resume it
	}
	h.nc.SetDeadline(time.Time{}) // net/http's deadlines, if any (the connection's own policy bounds the writes)
	sw.mu.Lock()
	l.conn.Store(&parkedConn{h.nc})
	sw.w, sw.rc = nil, nil
	if sw.alive != nil {
		sw.alive.Stop()
		sw.alive = nil
	}
	l.handoff, l.parkDue = nil, nil
	sw.mu.Unlock()
	if ctx.Done() != l.ended {
		// A context of the server's or of middleware, which may end before
		// the stream's own (whose end, l.stop, wakes the parked wait).
		l.stopWake = context.AfterFunc(ctx, l.Wake)
	}
	return true
}

// parkedIdle waits on the parked connection: until Wake (true), or the
// client closes it or ctx ends (false), writing a keep-alive whenever the
// stream has been silent for the keep-alive interval. A Wake ends the read
// through its deadline.
func (l *lot) parkedIdle(ctx context.Context) bool {
	sw := l.sw
	nc := l.conn.Load().nc
	for {
		sw.mu.Lock()
		last, err := sw.last, sw.err
		sw.mu.Unlock()
		if err != nil {
			return false
		}
		var deadline time.Time
		if sw.every > 0 {
			deadline = last.Add(sw.every)
		}
		nc.SetReadDeadline(deadline)
		// Set the deadline first, then look: a Wake after the look moves
		// the deadline to the past, so the read below cannot miss it.
		if ctx.Err() != nil {
			return false
		}
		if l.woken.Swap(false) {
			return true
		}
		_, err = nc.Read(l.rbuf[:])
		if err == nil {
			continue // bytes after the request: not read as anything
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return false // the client closed the connection
		}
		if ctx.Err() != nil {
			return false
		}
		if l.woken.Swap(false) {
			return true
		}
		if sw.every > 0 && time.Since(last) >= sw.every && sw.Comment("keep-alive") != nil {
			return false
		}
	}
}

// writeChunk writes b[chunkRoom:] as one HTTP/1.1 chunk, in one write.
// Callers hold the Writer's mu.
func (l *lot) writeChunk(b []byte) error {
	n := len(b) - chunkRoom
	var hdr [chunkRoom]byte
	h := append(strconv.AppendUint(hdr[:0], uint64(n), 16), '\r', '\n')
	start := chunkRoom - len(h)
	copy(b[start:], h)
	b = append(b, '\r', '\n')
	_, err := l.conn.Load().nc.Write(b[start:])
	return err
}

// end finishes a parked stream: the last chunk, then the connection is
// closed. A stream that was not parked has nothing to do here. Callers hold
// the Writer's mu.
func (l *lot) end() {
	pc := l.conn.Load()
	if pc == nil {
		return
	}
	if l.stopWake != nil {
		l.stopWake()
	}
	pc.nc.Write([]byte("0\r\n\r\n"))
	pc.nc.Close()
}
