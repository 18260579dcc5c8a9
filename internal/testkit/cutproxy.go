package testkit

import (
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// CutOptions adjusts StartCutProxy.
type CutOptions struct {
	// Seed chooses the cut points. 0 means the value of the environment
	// variable PARLEY_CUT_SEED when set (to replay a failure), else one
	// from the clock. The seed in use is logged when the test fails.
	Seed uint64
	// MinBytes and MaxBytes bound how many bytes from the target a
	// connection carries before the proxy drops it: each connection draws
	// its own number between them (defaults 2 KiB and 16 KiB).
	MinBytes, MaxBytes int
}

// CutProxy is a TCP proxy on a loopback port that forwards every
// connection to a target and drops it at a random point of what the target
// sends: after a number of bytes drawn for the connection, it forwards that
// many (so a cut falls anywhere, mid-frame included) and closes both
// sides, either with a reset or with a plain close, also drawn. The client
// side sees a connection that broke without warning, as when a network
// path fails. Its methods may be called from any goroutine.
type CutProxy struct {
	// Addr is the proxy's "127.0.0.1:PORT".
	Addr string
	// Seed is the seed the cut points come from.
	Seed uint64

	target   string
	min, max int
	ln       net.Listener
	cuts     atomic.Int64
	conns    atomic.Int64
	wg       sync.WaitGroup

	mu     sync.Mutex
	rng    *rand.Rand
	open   map[net.Conn]struct{}
	closed bool
}

// StartCutProxy starts a proxy to target ("host:port") and closes it, and
// every connection through it, when the test ends.
func StartCutProxy(tb testing.TB, target string, o *CutOptions) *CutProxy {
	tb.Helper()
	if o == nil {
		o = &CutOptions{}
	}
	seed := o.Seed
	if seed == 0 {
		if s, err := strconv.ParseUint(os.Getenv("PARLEY_CUT_SEED"), 10, 64); err == nil && s != 0 {
			seed = s
		} else {
			seed = uint64(time.Now().UnixNano())
		}
	}
	p := &CutProxy{Seed: seed, target: target, min: o.MinBytes, max: o.MaxBytes,
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), open: map[net.Conn]struct{}{}}
	if p.min <= 0 {
		p.min = 2 << 10
	}
	if p.max < p.min {
		p.max = max(p.min, 16<<10)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("cut proxy: %v", err)
	}
	p.ln, p.Addr = ln, ln.Addr().String()
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(func() {
		p.Close()
		if tb.Failed() {
			tb.Logf("cut proxy %s -> %s: seed %d (replay with PARLEY_CUT_SEED=%d), %d connections, %d cut",
				p.Addr, target, p.Seed, p.Seed, p.conns.Load(), p.cuts.Load())
		}
	})
	return p
}

// Cuts returns how many connections the proxy dropped so far.
func (p *CutProxy) Cuts() int { return int(p.cuts.Load()) }

// Close stops the proxy and closes every connection through it.
func (p *CutProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// accept serves connections until the listener closes.
func (p *CutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track records an open connection; it returns false when the proxy is
// closing (the connection is closed then).
func (p *CutProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.open[c] = struct{}{}
	}
	return true
}

func (p *CutProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.open, c)
		c.Close()
	}
}

// draw returns the byte budget of a new connection and whether its cut is
// a reset.
func (p *CutProxy) draw() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(p.min + p.rng.IntN(p.max-p.min+1)), p.rng.IntN(2) == 0
}

// serve forwards one connection: the client's bytes as they come, the
// target's up to the connection's budget, then the cut.
func (p *CutProxy) serve(down net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		down.Close()
		return
	}
	if !p.track(down, up) {
		return
	}
	defer p.untrack(down, up)
	budget, reset := p.draw()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		io.Copy(up, down)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite() // the client finished sending; the target may still answer
		}
	}()
	n, err := io.Copy(down, io.LimitReader(up, budget))
	if err == nil && n == budget {
		p.cuts.Add(1)
		if tc, ok := down.(*net.TCPConn); ok && reset {
			tc.SetLinger(0) // close with a reset, not an orderly end
		}
	}
	// Whatever ended the copy (the cut, the target's end, an error), the
	// deferred untrack closes both sides.
}
