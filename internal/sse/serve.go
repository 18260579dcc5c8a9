package sse

import (
	"iter"
	"net/http"
	"time"

	"parley.dev/parley/a2a"
)

// DefaultKeepAlive is the default interval of keep-alive comments.
const DefaultKeepAlive = 15 * time.Second

// Encoder is what a binding supplies to stream: how its events and errors
// look on the wire. Serve calls its methods from the handler's goroutine,
// one at a time.
type Encoder interface {
	// Refuse answers a stream that failed before its first event with the
	// binding's ordinary error response (status and body).
	Refuse(w http.ResponseWriter, err error)
	// Start sets the binding's response headers; it is called once, just
	// before the 200 response and the first event go out.
	Start(h http.Header)
	// AppendEvent appends the data of one event to b and returns the
	// extended buffer (b comes from a pool, so that an event costs no
	// allocation of its own). An error ends the stream as if the stream
	// itself had failed with it.
	AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error)
	// Fail returns the last event of a started stream that failed with
	// err: its event name ("" for none) and data.
	Fail(err error) (name string, data []byte)
}

// Serve answers a streaming operation with the events of seq. An error
// before the first event is answered by enc.Refuse, a stream without any
// event by an empty event stream; after that every event is written and
// flushed as it comes, an idle stream gets a keep-alive comment every
// keepAlive (0 turns them off), and an error item is written with enc.Fail
// and ends the stream. Serve returns when the stream ends or a write
// fails; nothing it started writes to w after it returns.
//
// An idle stream costs no goroutine of its own: the events come on the
// handler's goroutine, the keep-alives from a timer. Parking.Serve goes
// further for long-idle HTTP/1.1 streams.
func Serve(w http.ResponseWriter, seq iter.Seq2[a2a.StreamEvent, error], enc Encoder, keepAlive time.Duration) {
	serve(&Writer{w: w}, seq, enc, keepAlive)
}

// sendEvent writes one item of a stream: the event, or the error that ends
// the stream. It reports whether the write succeeded and the stream goes on.
func sendEvent(sw *Writer, enc Encoder, ev a2a.StreamEvent, err error) bool {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	var name string
	var data []byte
	if err == nil {
		data, err = enc.AppendEvent((*bp)[:0], ev)
		*bp = data[:0]
	}
	if err != nil {
		name, data = enc.Fail(err)
		ev.Seq = 0 // an error event carries no id
	}
	return sw.event(name, ev.Seq, data, !ev.More || err != nil) == nil && err == nil
}

// serve is Serve with the Writer made (not started) by the caller.
func serve(sw *Writer, seq iter.Seq2[a2a.StreamEvent, error], enc Encoder, keepAlive time.Duration) {
	started := false
	defer func() {
		if started {
			sw.close()
		}
	}()
	for ev, err := range seq {
		if !started {
			if err != nil {
				enc.Refuse(sw.w, err)
				return
			}
			enc.Start(sw.w.Header())
			sw.start()
			sw.keepAlive(keepAlive)
			started = true
		}
		if !sendEvent(sw, enc, ev, err) || err != nil {
			return
		}
	}
	if !started {
		// No event at all: a resumed stream that had nothing to catch up
		// on (its task ended with the event the client named). A valid,
		// empty event stream.
		enc.Start(sw.w.Header())
		sw.start()
		started = true
	}
}
