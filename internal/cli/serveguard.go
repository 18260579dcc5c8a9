package cli

import (
	"errors"
	"flag"
	"log/slog"
	"net"
	"strconv"
	"time"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/connlimit"
)

// guardFlags are the `parley serve` flags of what a request meets before
// any binding: browser rules, body bounds and connection limits (see
// package a2ahttp).
type guardFlags struct {
	allowAnonymous      bool
	allowedHosts        multiFlag
	corsOrigins         multiFlag
	bodyTimeout         time.Duration
	writeTimeout        time.Duration
	bodyBudget          int64
	maxPendingAnonymous int
	maxConns            int
	maxConnsPerIP       optionalInt
}

// addGuardFlags registers the guard flags on fs.
func addGuardFlags(fs *flag.FlagSet) *guardFlags {
	g := &guardFlags{}
	fs.BoolVar(&g.allowAnonymous, "allow-anonymous", false, "with --auth-token, still let callers without a token in (as one shared anonymous caller)")
	fs.Var(&g.allowedHosts, "allowed-host", "also answer requests addressed to this `HOST` when no credentials are required (repeatable; the card's host and loopback names always are)")
	fs.Var(&g.corsOrigins, "cors-origin", "let web pages of this `ORIGIN` (e.g. https://app.example.com) call the agent from a browser (repeatable)")
	fs.DurationVar(&g.bodyTimeout, "body-timeout", a2ahttp.DefaultBodyTimeout, "longest time a whole request (headers and body) may take to arrive; 0: no bound")
	fs.DurationVar(&g.writeTimeout, "write-timeout", a2ahttp.DefaultWriteTimeout, "longest time a client may take to take one answer, or one stream event, parked streams (idle HTTP/1.1 subscriptions) included; past it the stream is reset (HTTP/2) or the connection closed (0: no bound anywhere, parked streams too)")
	fs.Int64Var(&g.bodyBudget, "body-budget", a2ahttp.DefaultBodyBudget, "memory in bytes shared by request bodies past their first 64 KiB while they arrive")
	fs.IntVar(&g.maxPendingAnonymous, "max-pending-anonymous", a2ahttp.DefaultMaxPendingAnonymous, "requests without credentials that may be sending their bodies at once")
	fs.IntVar(&g.maxConns, "max-conns", 4096, "open connections accepted at once on each listener; past it a new connection is refused at once (0: no limit)")
	fs.Var(&g.maxConnsPerIP, "max-conns-per-ip", "open connections accepted at once on each listener from one client address (an IPv6 /64 counts as one); past it a new connection from there is refused at once (default a quarter of --max-conns; 0: no limit; behind a reverse proxy, raise it or use 0)")
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
	o.WriteTimeout = noLimit(g.writeTimeout)
	if g.bodyTimeout == 0 {
		o.BodyTimeout = -1 // the flag's 0 means no bound
	}
}

// listener bounds a listener by --max-conns and --max-conns-per-ip. plain
// says it serves cleartext HTTP, so that a refused connection is told 503
// (a TLS listener's is only closed).
func (g *guardFlags) listener(ln net.Listener, plain bool, log *slog.Logger) net.Listener {
	return connlimit.Wrap(ln, connlimit.Options{
		Max:     g.maxConns,
		PerAddr: g.connsPerIP(),
		HTTP:    plain,
		Log:     log,
	})
}

// connsPerIP is --max-conns-per-ip, or a quarter of --max-conns (at least
// one) when it is not given.
func (g *guardFlags) connsPerIP() int {
	if g.maxConnsPerIP.set {
		return g.maxConnsPerIP.n
	}
	if g.maxConns <= 0 {
		return 0
	}
	return max(g.maxConns/4, 1)
}

// optionalInt is an int flag that knows whether it was given.
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < 0 {
		return errors.New("must be 0 (no limit) or more")
	}
	o.n, o.set = n, true
	return nil
}
