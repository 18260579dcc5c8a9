package cli

import (
	"flag"
	"net"
	"sync"
	"time"

	"parley.dev/parley/a2ahttp"
)

// guardFlags are the `parley serve` flags of what a request meets before
// any binding: browser rules, body bounds and connection limits (see
// package a2ahttp).
type guardFlags struct {
	allowAnonymous      bool
	allowedHosts        multiFlag
	corsOrigins         multiFlag
	bodyTimeout         time.Duration
	bodyBudget          int64
	maxPendingAnonymous int
	maxConns            int
}

// addGuardFlags registers the guard flags on fs.
func addGuardFlags(fs *flag.FlagSet) *guardFlags {
	g := &guardFlags{}
	fs.BoolVar(&g.allowAnonymous, "allow-anonymous", false, "with --auth-token, still let callers without a token in (as one shared anonymous caller)")
	fs.Var(&g.allowedHosts, "allowed-host", "also answer requests addressed to this `HOST` when no credentials are required (repeatable; the card's host and loopback names always are)")
	fs.Var(&g.corsOrigins, "cors-origin", "let web pages of this `ORIGIN` (e.g. https://app.example.com) call the agent from a browser (repeatable)")
	fs.DurationVar(&g.bodyTimeout, "body-timeout", a2ahttp.DefaultBodyTimeout, "longest time a whole request (headers and body) may take to arrive; 0: no bound")
	fs.Int64Var(&g.bodyBudget, "body-budget", a2ahttp.DefaultBodyBudget, "memory in bytes shared by request bodies past their first 64 KiB while they arrive")
	fs.IntVar(&g.maxPendingAnonymous, "max-pending-anonymous", a2ahttp.DefaultMaxPendingAnonymous, "requests without credentials that may be sending their bodies at once")
	fs.IntVar(&g.maxConns, "max-conns", 4096, "open connections accepted at once on each listener (0: no limit)")
	return g
}

// apply copies the flags into the handler's options.
func (g *guardFlags) apply(o *a2ahttp.Options) {
	o.AllowAnonymous = g.allowAnonymous
	o.AllowedHosts = g.allowedHosts
	o.CORSOrigins = g.corsOrigins
	o.BodyTimeout = g.bodyTimeout
	o.BodyBudget = g.bodyBudget
	o.MaxPendingAnonymous = g.maxPendingAnonymous
	if g.bodyTimeout == 0 {
		o.BodyTimeout = -1 // the flag's 0 means no bound
	}
}

// limit caps the connections a listener has open at once (n <= 0: no
// cap): Accept waits while n are open, so the excess waits in the
// kernel's backlog rather than in the process.
func limit(ln net.Listener, n int) net.Listener {
	if ln == nil || n <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// Accept implements net.Listener.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close implements net.Listener; an Accept waiting for a slot returns.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close implements net.Conn.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
