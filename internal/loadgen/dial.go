package loadgen

import (
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Connection attempts back off after connection errors, so that a server
// that is down, or that closes every connection at once, is not dialled in
// a tight loop: after a connection error (a dial refused or timed out, or
// a connection that broke before its first answer) a connection waits
// before its next attempt, from dialPauseMin doubling up to dialPauseMax
// (back to none once an answer is read on it); and while attempts fail
// (one did within failWindow), all the connections of a run together
// start at most maxDialRate attempts a second. A server that answers is
// dialled as often as the load needs.
const (
	maxDialRate  = 100 // attempts a second, all connections together, while they fail
	dialPauseMin = 10 * time.Millisecond
	dialPauseMax = time.Second
	failWindow   = time.Second
	dialTimeout  = 5 * time.Second
)

// errPaced is the error of a request whose connection could not be
// attempted before its deadline, attempts backing off after errors.
var errPaced = errors.New("no connection attempt before the request's deadline: attempts back off after connection errors")

// errStopped is the error of a request whose connection was still waiting
// for its attempt when the run ended: no request was sent.
var errStopped = errors.New("the run ended before the connection attempt")

// dialGate paces the connection attempts of one run (its workers' and its
// hostile connections'); see maxDialRate. A nil *dialGate lets every
// attempt go.
type dialGate struct {
	mu     sync.Mutex
	failed time.Time // the last connection error
	tokens float64   // attempts that may start now, while failing (at most one)
	filled time.Time // when tokens was last counted
}

// take reports whether an attempt may start at now, and counts it.
func (g *dialGate) take(now time.Time) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.failed) >= failWindow {
		g.tokens, g.filled = 0, now
		return true
	}
	g.tokens = min(1, g.tokens+now.Sub(g.filled).Seconds()*maxDialRate)
	g.filled = now
	if g.tokens < 1 {
		return false
	}
	g.tokens--
	return true
}

// fail notes a connection error at now.
func (g *dialGate) fail(now time.Time) {
	if g == nil {
		return
	}
	g.mu.Lock()
	if now.After(g.failed) {
		g.failed = now
	}
	g.mu.Unlock()
}

// nextPause is the pause after a connection error that followed one of p.
func nextPause(p time.Duration) time.Duration {
	return min(max(2*p, dialPauseMin), dialPauseMax)
}

// dial opens a TCP connection to addr, once the pause *pause (set by the
// caller's previous connection errors; each wait is drawn between half of
// it and all of it, so that connections that failed together do not come
// back together) has passed and g lets the attempt go; an attempt g holds
// back waits again, twice as long. It gives up with errPaced when no
// attempt could start before deadline, and with errStopped when stop is
// closed first. A failed dial counts as a connection error (g.fail,
// *pause grows).
func (g *dialGate) dial(addr string, pause *time.Duration, deadline time.Time, stop <-chan struct{}) (net.Conn, error) {
	for {
		if p := *pause; p > 0 {
			d := p/2 + rand.N(p/2+1)
			if left := time.Until(deadline); left < d {
				if !sleep(left, stop) {
					return nil, errStopped
				}
				return nil, errPaced
			}
			if !sleep(d, stop) {
				return nil, errStopped
			}
		}
		if g.take(time.Now()) {
			break
		}
		*pause = nextPause(*pause)
	}
	nc, err := net.DialTimeout("tcp", addr, max(min(dialTimeout, time.Until(deadline)), time.Millisecond))
	if err != nil {
		g.fail(time.Now())
		*pause = nextPause(*pause)
		return nil, err
	}
	return nc, nil
}

// sleep waits d; it reports false when stop is closed first.
func sleep(d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// redialer opens the connections of one client connection (a worker's,
// whatever its binding), one after another, through the run's dialGate,
// and keeps the pause that the next attempt waits after connection errors.
// rawConn (HTTP/1.1) and h2Conn (HTTP/2, gRPC) both open theirs with it,
// so every binding's attempts are paced alike. Only its owner's goroutine
// uses it.
type redialer struct {
	addr string
	gate *dialGate       // paces the attempts after connection errors
	stop <-chan struct{} // closed when the run ends: an attempt still waiting gives up
	// pause is how long the next connection attempt waits, after
	// connection errors; fresh is set while the connection has had no
	// answer yet.
	pause time.Duration
	fresh bool
}

// open opens a connection, by deadline, pacing the attempt after
// connection errors (dialGate.dial); the error is of the kind "dial".
func (r *redialer) open(deadline time.Time) (net.Conn, error) {
	nc, err := r.gate.dial(r.addr, &r.pause, deadline, r.stop)
	if err != nil {
		return nil, &errKind{"dial", err}
	}
	r.fresh = true
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return nc, nil
}

// broke notes an error on the connection. One that broke before its first
// answer (a server that closes every connection at once) counts as a
// connection error: the next attempt waits.
func (r *redialer) broke() {
	if r.fresh {
		r.gate.fail(time.Now())
		r.pause = nextPause(r.pause)
	}
}

// answered notes that an answer came on the connection: the attempts
// after it need not wait.
func (r *redialer) answered() {
	r.fresh, r.pause = false, 0
}
