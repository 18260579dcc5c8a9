package equivalence_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// A caller: one binding of one server, as a scenario sees it.

type caller struct {
	t *testing.T
	e *env
	b string
	z *normalizer
}

func (c *caller) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	c.t.Cleanup(cancel)
	return ctx
}

// call performs an operation and returns its outcome; a streaming one is
// read to its end.
func (c *caller) call(method string, req proto.Message, o ...callOpts) outcome {
	c.t.Helper()
	if m := a2a.MethodByName(method); m != nil && m.Streaming {
		s := c.open(method, req, o...)
		return s.drain()
	}
	out := c.e.unary(c.ctx(), c.b, method, req, opt(o))
	c.z.see(out)
	return out
}

// ok performs a call that must succeed.
func (c *caller) ok(method string, req proto.Message, o ...callOpts) outcome {
	c.t.Helper()
	out := c.call(method, req, o...)
	if out.err != nil {
		c.t.Fatalf("%s over %s: %s", method, c.b, out.err)
	}
	return out
}

func (c *caller) open(method string, req proto.Message, o ...callOpts) *stream {
	c.t.Helper()
	src, out := c.e.open(c.ctx(), c.b, method, req, opt(o))
	s := &stream{c: c, src: src, out: out}
	c.t.Cleanup(src.close)
	return s
}

// task sends a message and returns the task it created or continued.
func (c *caller) task(req *a2a.SendMessageRequest, o ...callOpts) *a2a.Task {
	c.t.Helper()
	out := c.ok(a2a.MethodSendMessage, req, o...)
	t := out.value.(*a2a.SendMessageResponse).GetTask()
	if t == nil {
		c.t.Fatalf("SendMessage over %s answered without a task: %v", c.b, out.value)
	}
	return t
}

func opt(o []callOpts) callOpts {
	if len(o) > 0 {
		return o[0]
	}
	return callOpts{}
}

// stream is an open streaming call.
type stream struct {
	c       *caller
	src     source
	out     outcome
	pending chan received // a read in flight on another goroutine
}

// readAhead starts reading the next event on another goroutine, and
// returns a channel that is ready when it arrived; the next call to next
// returns it.
func (s *stream) readAhead() <-chan received {
	ch := make(chan received, 1)
	s.pending = ch
	go func() {
		ev, err := s.src.recv()
		ch <- received{ev, err}
		close(ch)
	}()
	return ch
}

// next returns the next event, or nil at the end (s.out.err then holds the
// error that ended the stream, if any).
func (s *stream) next() *a2a.StreamResponse {
	var ev *a2a.StreamResponse
	var err *wireErr
	if p := s.pending; p != nil {
		s.pending = nil
		r := <-p
		ev, err = r.ev, r.err
	} else {
		ev, err = s.src.recv()
	}
	if ev == nil {
		s.out.err = err
		return nil
	}
	s.out.events = append(s.out.events, ev)
	s.c.z.see(outcome{events: []*a2a.StreamResponse{ev}})
	return ev
}

// drain reads the stream to its end.
func (s *stream) drain() outcome {
	for s.next() != nil {
	}
	s.src.close()
	return s.out
}

type received struct {
	ev  *a2a.StreamResponse
	err *wireErr
}
