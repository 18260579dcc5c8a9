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

	"golang.org/x/time/rate"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/streamctx"
)

// This file holds the limits per caller: a request rate (a token bucket
// per principal, checked after authentication and before the body is
// read) and a number of open streams per principal. Both refuse with
// RateLimited: HTTP 429 on both HTTP bindings (with Retry-After for the
// rate), RESOURCE_EXHAUSTED on gRPC. The core's task quotas
// (server.Limits: open tasks, new tasks per second) count tasks, not
// requests, and still apply.

// rateLimiter keeps one token bucket per key: a principal, or the client
// address of a request without one.
type rateLimiter struct {
	limit rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	nextSweep int
}

// newRateLimiter returns a limiter of perSecond requests a second with the
// given burst (0: perSecond rounded up, at least 1); nil when perSecond is
// not positive.
func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*rate.Limiter{}, nextSweep: 1024}
}

// allow takes a token from key's bucket; when there is none it returns
// false and how long until there is.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.nextSweep {
			l.sweep(now)
		}
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets the buckets that are full again (their callers have been
// quiet long enough): a full bucket is the same as a new one. It keeps the
// map's size bounded by the callers active in the last burst/rate seconds.
func (l *rateLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	l.nextSweep = max(1024, 2*len(l.buckets))
}

// rateKey is the bucket of a request: its principal, or its client
// address (without the port) when it has none.
func rateKey(r *http.Request, principal string) string {
	if principal != "" {
		return "p:" + principal
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
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
	ok, wait := h.rate.allow(rateKey(r, principal), time.Now())
	if !ok {
		refuse(w, r, rateLimited(wait))
	}
	return ok
}

// streamLimiter counts the open streams of each principal (the anonymous
// caller is one principal, "").
type streamLimiter struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

// acquire takes a stream slot for p; false when p has max open.
func (s *streamLimiter) acquire(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[p] >= s.max {
		return false
	}
	s.open[p]++
	return true
}

// release gives a slot back.
func (s *streamLimiter) release(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[p]--; s.open[p] <= 0 {
		delete(s.open, p)
	}
}

// middleware refuses a streaming operation (SendStreamingMessage,
// SubscribeToTask) of a caller that has max streams open, and holds a
// slot for as long as each stream lasts. A long-poll GetTask (A2A 1.1,
// currentGeneration set; spec §3.2.7) counts as a stream while the core
// holds it: it is given the way to take a slot (streamctx.Slot), which
// the core uses only once it decides to hold.
func (s *streamLimiter) middleware(next a2a.Invoker) a2a.Invoker {
	return a2a.InvokerFuncs{Next: next, CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
		if r, ok := req.(*a2a.GetTaskRequest); ok && r.CurrentGeneration != nil {
			p := principalOf(ctx)
			ctx = streamctx.WithSlot(ctx, func() (func(), error) {
				if !s.acquire(p) {
					return nil, s.refusal()
				}
				return func() { s.release(p) }, nil
			})
		}
		return next.Call(ctx, m, req)
	}, StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
		p := principalOf(ctx)
		if !s.acquire(p) {
			return func(yield func(a2a.StreamEvent, error) bool) {
				yield(a2a.StreamEvent{}, s.refusal())
			}
		}
		return func(yield func(a2a.StreamEvent, error) bool) {
			defer s.release(p)
			for ev, err := range next.Stream(ctx, m, req) {
				if !yield(ev, err) {
					return
				}
			}
		}
	}}
}

// refusal is the error of a stream, or a held call, over the limit.
func (s *streamLimiter) refusal() error {
	return a2a.NewError(a2a.CodeRateLimited, "stream limit: this caller has %d streams open already; close one first", s.max)
}

// principalOf is the caller of the call on ctx ("" when anonymous).
func principalOf(ctx context.Context) string {
	if ci := a2a.CallInfoFrom(ctx); ci != nil {
		return ci.Principal
	}
	return ""
}
