// Package connlimit bounds the connections a listener keeps open: in
// total, and from any one source address, so that one client cannot take
// every connection a server is willing to hold (spec §13.4: agents SHOULD
// limit what a request, and so a client, can make them hold).
//
// The last part of the total, the reserve, is kept for sources that hold
// few connections: sources that hold many (five addresses each holding a
// thousand connections that never finish their headers, say) fill the
// rest and are refused there, while a client that holds a few still gets
// in.
//
// A connection over a bound is refused as soon as it is accepted,
// rather than left waiting in the kernel's listen backlog where the client
// would learn nothing until its own timeout: it is closed at once, after
// an optional fixed answer (for a cleartext HTTP listener, a 503).
package connlimit

import (
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Options configure Wrap.
type Options struct {
	// Max bounds the connections open at once; zero or negative: no bound.
	Max int
	// PerAddr bounds the connections open at once from one source address;
	// zero or negative: no bound. An IPv4 address is one source; an IPv6
	// address counts with every other address of its /64 prefix, since
	// one host commonly holds a whole /64.
	PerAddr int
	// Reserve is the part of Max kept for sources holding fewer than Few
	// connections: once Max-Reserve connections are open, a source that
	// holds Few or more (or that is not IP) gets no more (default Max/8;
	// negative: no reserve).
	Reserve int
	// HTTP says the listener serves cleartext HTTP: a refused connection
	// is sent a minimal "503 Service Unavailable" with Retry-After and
	// Connection: close before it is closed. Leave it false for a TLS
	// listener (the answer would not be TLS) and for anything else.
	HTTP bool
	// Log, when not nil, gets a warning when connections are refused: at
	// most one every LogEvery (default 10s) per listener, with the count
	// since the last one, so a flood does not flood the log.
	Log      *slog.Logger
	LogEvery time.Duration
}

// Few is the number of connections under which a source may still open
// one in the reserve (Options.Reserve): more than a browser opens to one
// host (six), as many as a client pool busy with a few calls.
const Few = 16

// Wrap returns ln bounded by o; ln itself when o sets no bound.
func Wrap(ln net.Listener, o Options) net.Listener {
	if ln == nil || (o.Max <= 0 && o.PerAddr <= 0) {
		return ln
	}
	if o.LogEvery <= 0 {
		o.LogEvery = 10 * time.Second
	}
	switch {
	case o.Max <= 0 || o.Reserve < 0:
		o.Reserve = 0
	case o.Reserve == 0:
		o.Reserve = o.Max / 8
	}
	return &listener{Listener: ln, o: o, perAddr: make(map[netip.Prefix]int)}
}

// listener is a net.Listener with bounds; see Wrap.
type listener struct {
	net.Listener
	o Options

	mu      sync.Mutex
	open    int
	perAddr map[netip.Prefix]int // only sources with connections open; kept when perSource
	refused struct {
		total, fromAddr int // since the last warning
		logged          time.Time
	}
}

// Accept implements net.Listener: it returns the next connection within
// the bounds, refusing the others on the way.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src, ok := source(c.RemoteAddr())
		full, perAddr := l.take(src, ok)
		if !full {
			return &conn{Conn: c, l: l, src: src, counted: ok}, nil
		}
		l.refuse(c, perAddr)
	}
}

// take counts a new connection from src (counted per source when ok)
// unless a bound is reached; it reports whether one is, and whether it is
// the per-source one.
func (l *listener) take(src netip.Prefix, ok bool) (full, perAddr bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.o.Max > 0 && l.open >= l.o.Max:
		l.refused.total++
		return true, false
	case ok && l.o.PerAddr > 0 && l.perAddr[src] >= l.o.PerAddr:
		l.refused.fromAddr++
		return true, true
	case l.o.Reserve > 0 && l.open >= l.o.Max-l.o.Reserve && (!ok || l.perAddr[src] >= Few):
		l.refused.total++ // the reserve is not for this source
		return true, false
	}
	l.open++
	if ok && l.perSource() {
		l.perAddr[src]++
	}
	return false, false
}

// release uncounts a connection taken by take.
func (l *listener) release(src netip.Prefix, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if ok && l.perSource() {
		if n := l.perAddr[src] - 1; n > 0 {
			l.perAddr[src] = n
		} else {
			delete(l.perAddr, src)
		}
	}
}

// perSource says whether connections are counted per source.
func (l *listener) perSource() bool { return l.o.PerAddr > 0 || l.o.Reserve > 0 }

// Fixed answers to a refused cleartext HTTP connection.
var (
	busyAnswer    = answer("the server has too many connections open; try again later\n")
	perAddrAnswer = answer("too many connections from your address are open; close some or try again later\n")
)

func answer(body string) []byte {
	return []byte("HTTP/1.1 503 Service Unavailable\r\n" +
		"Retry-After: 1\r\n" +
		"Connection: close\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// refuse answers (for HTTP) and closes a connection over a bound. The
// answer fits the socket's empty send buffer, so the write does not wait;
// the deadline only guards against the unexpected. It is best effort: a
// client that has already sent its request may see the connection reset
// instead, which is as prompt.
func (l *listener) refuse(c net.Conn, perAddr bool) {
	if l.o.HTTP {
		a := busyAnswer
		if perAddr {
			a = perAddrAnswer
		}
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write(a)
	}
	c.Close()
	if l.o.Log == nil {
		return
	}
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.refused.logged) < l.o.LogEvery {
		l.mu.Unlock()
		return
	}
	total, fromAddr := l.refused.total, l.refused.fromAddr
	l.refused.total, l.refused.fromAddr, l.refused.logged = 0, 0, now
	l.mu.Unlock()
	l.o.Log.Warn("connections refused", "listener", l.Addr().String(),
		"overMaxConns", total, "overMaxConnsPerIP", fromAddr, "last", c.RemoteAddr().String())
}

// source is the source of a remote address for PerAddr: an IPv4 address
// (IPv4-mapped IPv6 included) as a /32, an IPv6 address as its /64. ok is
// false for an address that is not IP (a Unix socket), which is counted
// only in the total.
func source(a net.Addr) (src netip.Prefix, ok bool) {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, ok = netip.AddrFromSlice(a.IP)
	case *net.UDPAddr:
		ip, ok = netip.AddrFromSlice(a.IP)
	case nil:
		return netip.Prefix{}, false
	default:
		ap, err := netip.ParseAddrPort(a.String())
		ip, ok = ap.Addr(), err == nil
	}
	if !ok {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	src, err := ip.Prefix(bits)
	return src, err == nil
}

// conn gives its count back once, when closed.
type conn struct {
	net.Conn
	l       *listener
	src     netip.Prefix
	counted bool
	once    sync.Once
}

// Close implements net.Conn.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.src, c.counted) })
	return err
}
