package a2ahttp

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// This file holds the one place every byte of a response goes through, on
// every protocol, HTTP/1.1 and HTTP/2 alike: answerWriter, which gives
// each write a deadline (Options.WriteTimeout).
//
// A client that does not take a write within the deadline loses it: on
// HTTP/2 the stream is reset (net/http's per-stream write deadline, which
// a stream stuck on flow control meets like any other), on HTTP/1.1 the
// connection is closed. Either way the handler's write returns an error,
// the handler returns, and what it held (its goroutine, the encoded
// answer) is released. A write is a unary answer whole, or one stream
// event with its flush: the deadline is set before it and lifted after it,
// so an idle stream is never cut for being idle; a stream parked off
// net/http (Parking) gets the same deadline per chunk on its bare
// connection. When the handler returns, one more deadline bounds what
// net/http still has to send (the last buffered bytes, the end of the
// stream).

// DefaultWriteTimeout is Options.WriteTimeout's default: the time a client
// has to take one write of an answer (a unary answer whole, or one stream
// event). At 30 s a 10 MiB answer needs about 350 KB/s.
const DefaultWriteTimeout = 30 * time.Second

// answerWriter is the http.ResponseWriter a Handler's handlers write to;
// see the file comment. It is used by one goroutine at a time, as a
// ResponseWriter is.
type answerWriter struct {
	http.ResponseWriter
	rc       http.ResponseController // of the wrapped writer
	timeout  time.Duration           // 0: no deadline
	armed    bool                    // a deadline of ours is set
	hijacked bool                    // the connection is Parking's now
}

// newAnswerWriter returns w with write deadlines of timeout (0: none).
// An http.Server with a WriteTimeout of its own bounds its responses
// whole, and gets no deadline of the writer's (which would lift its own).
// On HTTP/1.1 the connection may still carry the deadline that ended its
// previous request: it is lifted, so that what net/http writes for this
// request before the handler does (100 Continue) is not refused.
func newAnswerWriter(w http.ResponseWriter, r *http.Request, timeout time.Duration) *answerWriter {
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
		timeout = 0
	}
	a := &answerWriter{ResponseWriter: w, rc: *http.NewResponseController(w), timeout: timeout}
	if timeout > 0 && r.ProtoMajor == 1 {
		a.rc.SetWriteDeadline(time.Time{})
	}
	return a
}

// arm sets the deadline of a write about to start.
func (w *answerWriter) arm() {
	if w.timeout > 0 {
		w.armed = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) == nil
	}
}

// disarm lifts it once the write is done: a stream waiting for its next
// event has no deadline.
func (w *answerWriter) disarm() {
	if w.armed {
		w.rc.SetWriteDeadline(time.Time{})
		w.armed = false
	}
}

// Write implements http.ResponseWriter.
func (w *answerWriter) Write(b []byte) (int, error) {
	w.arm()
	n, err := w.ResponseWriter.Write(b)
	w.disarm()
	return n, err
}

// FlushError implements what http.ResponseController.Flush looks for.
func (w *answerWriter) FlushError() error {
	w.arm()
	err := w.rc.Flush()
	w.disarm()
	return err
}

// Flush implements http.Flusher, which connect-go asks of the writer of
// a gRPC stream.
func (w *answerWriter) Flush() { w.FlushError() }

// Unwrap lets http.ResponseController reach the wrapped writer (read
// deadlines, which the body's read uses).
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack implements http.Hijacker for Parking: the connection it hands
// over writes under the same deadline, per write.
func (w *answerWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := w.rc.Hijack()
	w.hijacked = err == nil
	if err != nil || w.timeout <= 0 {
		return nc, rw, err
	}
	return &deadlineConn{Conn: nc, timeout: w.timeout}, rw, nil
}

// done is called once the handler has returned: what net/http still has
// to send for this response (the bytes the handler's last writes left
// buffered, the end of the body or stream) gets one more deadline.
func (w *answerWriter) done() {
	if w.timeout > 0 && !w.hijacked {
		w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
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
