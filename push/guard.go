package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrForbiddenAddress is matched (errors.Is) by every refusal of the SSRF
// guard: a webhook whose address is private, loopback, link-local,
// unspecified, multicast or otherwise not publicly routable.
var ErrForbiddenAddress = errors.New("push: webhook address not allowed")

// AddressError is the guard's refusal of an address. Its message never
// says what a host name resolved to: it is shown to whoever registered the
// webhook (an InvalidParams answer) and logged, and naming the address
// would let any client map the server's internal DNS. For an IP literal
// the message repeats the address, as written, with the reason.
type AddressError struct {
	Host   string     // the host as written in the URL
	Addr   netip.Addr // the refused address; not in the message when Host is a name
	Reason string     // why Addr is refused, e.g. "loopback", "private"
}

// Error implements the error interface.
func (e *AddressError) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("webhook address %s is not allowed (%s)", e.Addr, e.Reason)
	}
	if _, err := netip.ParseAddr(e.Host); err == nil {
		return fmt.Sprintf("webhook address %s is not allowed (%s)", e.Host, e.Reason)
	}
	return fmt.Sprintf("webhook host %s is not allowed: it resolves to a private, loopback, link-local or otherwise non-public address", e.Host)
}

// Is makes errors.Is(err, ErrForbiddenAddress) true.
func (e *AddressError) Is(target error) bool { return target == ErrForbiddenAddress }

// Resolver looks up a host's addresses. *net.Resolver implements it; tests
// substitute a fake to stand for DNS.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, host string) ([]net.IPAddr, error)

// LookupIPAddr calls f.
func (f ResolverFunc) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return f(ctx, host)
}

// GuardOptions configure a Guard. The zero value refuses every address that
// is not publicly routable.
type GuardOptions struct {
	// AllowPrivate turns the address check off (development, or webhooks
	// on an internal network).
	AllowPrivate bool
	// AllowHosts lists exceptions: a host name or IP literal, matched
	// against the URL's host (case-insensitive, port ignored), or a CIDR
	// prefix such as 10.1.0.0/16, matched against the resolved address
	// (an IPv4-mapped prefix, ::ffff:10.1.0.0/112, stands for its IPv4
	// prefix). AllowPrivate and AllowHosts are the only ways past
	// Forbidden.
	AllowHosts []string
	// Resolver resolves host names; default net.DefaultResolver.
	Resolver Resolver
	// LookupTimeout bounds the DNS lookup made at registration; default 3 s.
	LookupTimeout time.Duration
}

// Guard is the SSRF guard of webhook URLs. It vets a URL when a
// configuration is registered (CheckURL) and, again, every address the
// sender connects to (DialContext), so that a name which resolved to a
// public address at registration and to a private one later (DNS
// rebinding) is still refused. A Guard is immutable and safe for
// concurrent use.
type Guard struct {
	allowPrivate bool
	hosts        map[string]bool
	nets         []netip.Prefix
	resolver     Resolver
	lookup       time.Duration
}

// NewGuard returns a guard. It fails on an empty or malformed AllowHosts
// entry. o may be nil.
func NewGuard(o *GuardOptions) (*Guard, error) {
	if o == nil {
		o = &GuardOptions{}
	}
	g := &Guard{allowPrivate: o.AllowPrivate, hosts: map[string]bool{}, resolver: o.Resolver, lookup: o.LookupTimeout}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.lookup <= 0 {
		g.lookup = 3 * time.Second
	}
	for _, h := range o.AllowHosts {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
			return nil, errors.New("push: an allowed host is empty")
		case strings.Contains(h, "/"):
			p, err := netip.ParsePrefix(h)
			if err != nil {
				return nil, fmt.Errorf("push: allowed host %q: %v", h, err)
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// Addresses are checked unmapped: so is a mapped prefix.
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			g.nets = append(g.nets, p.Masked())
		default:
			g.hosts[canonicalHost(h)] = true
		}
	}
	return g, nil
}

// canonicalHost lower-cases a host and strips IPv6 brackets and a trailing
// dot, so that equal hosts compare equal.
func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// ParseURL checks that raw is an absolute http or https URL with a host
// and no user information, and returns it parsed.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("must be an absolute http or https URL")
	}
	if u.Hostname() == "" {
		return nil, errors.New("must name a host")
	}
	if u.User != nil {
		return nil, errors.New("must not carry user information; use authentication instead")
	}
	return u, nil
}

// CheckURL vets a webhook URL at registration. A literal address is
// checked as is; a host name is resolved (bounded by LookupTimeout) and
// refused when any of its addresses is not allowed. A name that does not
// resolve is accepted: its address is unknown until delivery, where it is
// checked at connect time.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := ParseURL(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if g.allowPrivate || g.hosts[canonicalHost(host)] {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.checkAddr(host, a)
	}
	ctx, cancel := context.WithTimeout(ctx, g.lookup)
	defer cancel()
	addrs, err := g.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	for _, ia := range addrs {
		a, ok := netip.AddrFromSlice(ia.IP)
		if !ok {
			continue
		}
		if err := g.checkAddr(host, a); err != nil {
			return err
		}
	}
	return nil
}

// checkAddr refuses a forbidden address unless an allowed prefix holds it.
// The address is judged unmapped and without its zone (netip.Prefix never
// contains a zoned address).
func (g *Guard) checkAddr(host string, a netip.Addr) error {
	if g.allowPrivate {
		return nil
	}
	a = a.Unmap().WithZone("")
	reason, bad := forbiddenNormal(a)
	if !bad {
		return nil
	}
	for _, p := range g.nets {
		if p.Contains(a) {
			return nil
		}
	}
	return &AddressError{Host: host, Addr: a, Reason: reason}
}

// DialContext connects like net.Dialer.DialContext but only to allowed
// addresses: it resolves the host itself, skips the addresses the guard
// refuses, dials the first allowed one that answers, and checks the
// address again in the dialer's Control hook just before connecting.
// Use it as http.Transport.DialContext (with Proxy nil, or the proxy's
// address would be the one checked).
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	allowed := g.allowPrivate || g.hosts[canonicalHost(host)]
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !allowed {
		d.Control = func(_, addr string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(addr)
			if err != nil {
				return err
			}
			return g.checkAddr(host, ap.Addr())
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4In6() {
			a = a.Unmap() // as the name's addresses below: dialled over IPv4
		}
		addrs = []netip.Addr{a}
	} else {
		ias, err := g.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, ia := range ias {
			if a, ok := netip.AddrFromSlice(ia.IP); ok {
				addrs = append(addrs, a.Unmap())
			}
		}
	}
	var first error
	for _, a := range addrs {
		if !allowed {
			if err := g.checkAddr(host, a); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil || errors.Is(first, ErrForbiddenAddress) {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = fmt.Errorf("push: no address found for %s", host)
	}
	return nil, first
}
