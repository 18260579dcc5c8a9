package a2ahttp

import (
	"context"
	"iter"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/keyrate"
	"parley.dev/parley/internal/streamctx"
)

// This file holds the limits per caller: a request rate (a token bucket
// per principal, checked after authentication and before the body is
// read), and what a caller may have in flight at once: calls, streams
// and held long polls, bytes of answers being written. All refuse with
// RateLimited: HTTP 429 with Retry-After on both HTTP bindings,
// RESOURCE_EXHAUSTED on gRPC. The core's task quotas
// (server.Limits: open tasks, new tasks per second) count tasks, not
// requests, and still apply.

// The defaults of what one caller may have in flight (Options.MaxCalls,
// MaxStreams, AnswerBudget), chosen for a server of 2 cores and 1 GiB
// (decision on per-caller bounds, "Bounded by default"): a call in flight costs a goroutine
// and its buffers, some 20 KiB when small, an open stream about as much,
// and the budget bounds what large answers not taken hold.
const (
	DefaultMaxCalls     = 256
	DefaultMaxStreams   = 100
	DefaultAnswerBudget = 64 << 20
)

// newRateLimiter returns the token buckets, one per caller (a principal,
// or the client address of a request without one), of perSecond requests
// a second with the given burst (0: perSecond rounded up, at least 1);
// nil when perSecond is not positive.
func newRateLimiter(perSecond float64, burst int) *keyrate.Limiter[callerID] {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return keyrate.New[callerID](perSecond, burst)
}

// rateLimited is the refusal of a request over its rate.
func rateLimited(wait time.Duration) *a2a.Error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	e := a2a.NewError(a2a.CodeRateLimited, "rate limit: too many requests from this caller; retry after %d s", secs)
	return e.WithMeta(httpx.MetaRetryAfter, strconv.Itoa(secs))
}

// checkRate answers 429 (in the binding's shape) to a request over its
// caller's rate; it reports whether the request goes on.
func (h *Handler) checkRate(w http.ResponseWriter, r *http.Request, principal string, refuse func(http.ResponseWriter, *http.Request, *a2a.Error)) bool {
	if h.rate == nil {
		return true
	}
	ok, wait := h.rate.Allow(callerKeyOf(r, principal), time.Now())
	if !ok {
		refuse(w, r, rateLimited(wait))
	}
	return ok
}

// callers counts what each caller has in flight: its calls (every
// request, from the moment dispatch admits it until its answer is taken
// or dropped: on HTTP/2 until its stream ends), among them its streams and
// held long polls, and the bytes of its large answers not yet written. A
// caller is a principal, or for a request without one its client address
// (callerKeyOf): anonymous callers behind one address share their bounds.
// A caller with nothing in flight is forgotten.
type callers struct {
	maxCalls, maxStreams int   // 0: no bound
	budget               int64 // bytes of large answers not yet written; 0: no bound

	mu sync.Mutex
	m  map[callerID]*caller
}

// callerID names a caller: a principal, or the client address of a
// request without one.
type callerID struct {
	principal, addr string
}

// callerKeyOf is the caller of r, made by principal when it has one.
func callerKeyOf(r *http.Request, principal string) callerID {
	if principal != "" {
		return callerID{principal: principal}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return callerID{addr: host}
}

// caller is one caller's counts, guarded by callers.mu. A request holds
// its caller (and so keeps it from being forgotten) from admit to leave.
type caller struct {
	key            callerID
	calls, streams int
	answering      int64
	// over is set when an answer of the caller was refused for its
	// budget, and cleared once none of its answers is charged: the
	// caller's calls are refused meanwhile, so that a caller that does not
	// take its answers does not make the server read more of them.
	over bool
}

// call is one admitted request: its caller, and the bytes of its unary
// answer charged to the caller's answer budget, given back when the call
// leaves (guarded by callers.mu).
type call struct {
	c       *caller
	charged int64
	left    bool // leave gave it back: nothing more is charged to it
}

// admit counts one more call of key's caller and returns it, or the
// refusal of a caller that has maxCalls in flight, or answers over its
// budget that it is not taking.
func (cs *callers) admit(key callerID) (*call, *a2a.Error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[key]
	switch {
	case c == nil:
		c = &caller{key: key}
		cs.m[key] = c
	case cs.maxCalls > 0 && c.calls >= cs.maxCalls:
		return nil, limited("call limit: this caller has %d calls in flight already", cs.maxCalls)
	case cs.budget > 0 && (c.over || c.answering >= cs.budget):
		return nil, limited("answer budget: this caller is not taking the answers it has (%d bytes)", c.answering)
	}
	c.calls++
	return &call{c: c}, nil
}

// leave gives back a call admit counted, and what its answer was charged.
func (cs *callers) leave(cl *call) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cl.c
	c.calls--
	cl.left = true
	cs.give(c, cl.charged)
	cs.forget(c)
}

// chargeCall charges a unary answer of n bytes to its call, given back
// when the call leaves; a call that has left already (its HTTP/2 stream
// was reset while the core made the answer) is charged nothing, since
// nothing would give it back. It reports false when the budget has no
// room.
func (cs *callers) chargeCall(cl *call, n int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cl.left {
		return true
	}
	if !cs.chargeLocked(cl.c, n) {
		return false
	}
	cl.charged += n
	return true
}

// forget drops a caller with nothing in flight. Callers hold mu.
func (cs *callers) forget(c *caller) {
	if c.calls <= 0 && c.streams <= 0 && c.answering <= 0 {
		delete(cs.m, c.key)
	}
}

// openStream counts a stream (or a held long poll) of c; false when c has
// maxStreams open.
func (cs *callers) openStream(c *caller) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.maxStreams > 0 && c.streams >= cs.maxStreams {
		return false
	}
	c.streams++
	return true
}

// closeStream gives a stream back.
func (cs *callers) closeStream(c *caller) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c.streams--
	cs.forget(c)
}

// charge counts n bytes of an answer of c about to be written (n is the
// answer's protobuf size, close to what any binding writes); false when c
// has its budget's worth being written already. A first answer larger than
// the budget is let through: the core's own limits bound it, and the write
// deadline how long it is held. A refusal marks c over its budget until
// its answers are taken (caller.over).
func (cs *callers) charge(c *caller, n int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.chargeLocked(c, n)
}

// chargeLocked is charge with cs.mu held.
func (cs *callers) chargeLocked(c *caller, n int64) bool {
	if cs.budget > 0 && c.answering > 0 && c.answering+n > cs.budget {
		c.over = true
		return false
	}
	c.answering += n
	return true
}

// refund gives back what charge counted, once the answer is written.
func (cs *callers) refund(c *caller, n int64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.give(c, n)
	cs.forget(c)
}

// give uncounts n bytes of c's answers. Callers hold mu.
func (cs *callers) give(c *caller, n int64) {
	c.answering -= n
	if c.answering <= 0 {
		c.over = false
	}
}

// limited is the refusal of a call over one of its caller's bounds:
// RateLimited, with Retry-After (1 s: what is in flight ends within the
// write deadline, or when the caller takes its answers).
func limited(format string, args ...any) *a2a.Error {
	e := a2a.NewError(a2a.CodeRateLimited, format+"; retry later", args...)
	return e.WithMeta(httpx.MetaRetryAfter, "1")
}

type callKey struct{}

// callOf is the call dispatch admitted on ctx; nil for a call that did
// not come through dispatch.
func callOf(ctx context.Context) *call {
	cl, _ := ctx.Value(callKey{}).(*call)
	return cl
}

// middleware applies the caller's bounds that only the decoded call
// shows. It refuses a streaming operation (SendStreamingMessage,
// SubscribeToTask) of a caller that has maxStreams open, and holds a slot
// for as long as each stream lasts. A long-poll GetTask (A2A 1.1,
// currentGeneration set; spec §3.2.7) counts as a stream while the core
// holds it: it is given the way to take a slot (streamctx.Slot), which
// the core uses only once it decides to hold. And it charges an answer,
// or a stream event, of bigAnswer bytes or more to the caller's answer
// budget before the binding encodes it: an answer the budget has no room
// for is refused with RateLimited instead of written (a stream ends with
// that error), and what is charged is given back once written (a unary
// answer's when its call leaves).
func (cs *callers) middleware(next a2a.Invoker) a2a.Invoker {
	return a2a.InvokerFuncs{Next: next, CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
		cl := callOf(ctx)
		if cl == nil {
			return next.Call(ctx, m, req)
		}
		if r, ok := req.(*a2a.GetTaskRequest); ok && r.CurrentGeneration != nil && cs.maxStreams > 0 {
			ctx = streamctx.WithSlot(ctx, func() (func(), error) {
				if !cs.openStream(cl.c) {
					return nil, cs.streamRefusal()
				}
				return func() { cs.closeStream(cl.c) }, nil
			})
		}
		resp, err := next.Call(ctx, m, req)
		if n := cs.answerSize(resp); n > 0 && err == nil && !cs.chargeCall(cl, n) {
			return nil, cs.budgetRefusal()
		}
		return resp, err
	}, StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
		cl := callOf(ctx)
		if cl == nil {
			return next.Stream(ctx, m, req)
		}
		if !cs.openStream(cl.c) {
			return func(yield func(a2a.StreamEvent, error) bool) {
				yield(a2a.StreamEvent{}, cs.streamRefusal())
			}
		}
		return func(yield func(a2a.StreamEvent, error) bool) {
			defer cs.closeStream(cl.c)
			for ev, err := range next.Stream(ctx, m, req) {
				n := cs.answerSize(ev.Response)
				if n > 0 && !cs.charge(cl.c, n) {
					yield(a2a.StreamEvent{}, cs.budgetRefusal())
					return
				}
				more := yield(ev, err) // the binding writes the event before it returns
				if n > 0 {
					cs.refund(cl.c, n)
				}
				if !more {
					return
				}
			}
		}
	}}
}

// streamRefusal is the error of a stream, or a held call, over the limit.
func (cs *callers) streamRefusal() error {
	return limited("stream limit: this caller has %d streams open already; close one first", cs.maxStreams)
}

// budgetRefusal is the error of an answer its caller's budget has no room
// for.
func (cs *callers) budgetRefusal() error {
	return limited("answer budget: this caller is not taking the answers it has (over %d bytes)", cs.budget)
}

// newCallers returns the counts of Options' MaxCalls, MaxStreams and
// AnswerBudget as setGuardDefaults resolved them (0: no bound).
func newCallers(maxCalls, maxStreams int, budget int64) *callers {
	return &callers{maxCalls: maxCalls, maxStreams: maxStreams, budget: budget, m: map[callerID]*caller{}}
}

// admit counts r among its caller's calls and puts the call on r's
// context (for the stream limit and the answer budget, which the
// middleware applies); or answers the refusal. An HTTP/2 call is given back when its
// stream ends, once the last of its answer is sent or the stream reset;
// an HTTP/1.1 call, which the caller gives back (release), when the
// handler returns (the connection, counted by connlimit, holds what
// net/http still has to send).
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, principal string, refuse refuseFunc) (_ *http.Request, release *call, ok bool) {
	cl, e := h.callers.admit(callerKeyOf(r, principal))
	if e != nil {
		refuse(w, r, e)
		return r, nil, false
	}
	ctx := context.WithValue(r.Context(), callKey{}, cl)
	if r.ProtoMajor == 2 {
		context.AfterFunc(ctx, func() { h.callers.leave(cl) })
	} else {
		release = cl
	}
	return r.WithContext(ctx), release, true
}
