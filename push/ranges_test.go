package push_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
)

// refusedRanges are the ranges refused as a whole: the first, the last and
// an address inside each are checked. allow is an AllowHosts entry that
// lets them through ("" means the range itself).
var refusedRanges = []struct {
	prefix, reason, allow string
}{
	{"0.0.0.0/8", "this network", ""},
	{"10.0.0.0/8", "private", ""},
	{"100.64.0.0/10", "carrier-grade NAT", ""},
	{"127.0.0.0/8", "loopback", ""},
	{"169.254.0.0/16", "link-local", ""},
	{"172.16.0.0/12", "private", ""},
	{"192.0.0.0/24", "IETF protocol assignments", ""},
	{"192.0.2.0/24", "documentation", ""},
	{"192.88.99.0/24", "6to4 relay", ""},
	{"192.168.0.0/16", "private", ""},
	{"198.18.0.0/15", "benchmarking", ""},
	{"198.51.100.0/24", "documentation", ""},
	{"203.0.113.0/24", "documentation", ""},
	{"224.0.0.0/4", "multicast", ""},
	{"240.0.0.0/4", "reserved", ""},
	{"255.255.255.255/32", "broadcast", ""},
	{"::/128", "unspecified", ""},
	{"::1/128", "loopback", ""},
	{"::/96", "IPv4-compatible", ""},
	{"::ffff:0:0:0/96", "IPv4-translated", ""},
	{"64:ff9b:1::/48", "local-use NAT64", ""},
	{"100::/64", "discard-only", ""},
	{"2001::/32", "Teredo", ""},
	{"2001:2::/48", "benchmarking", ""},
	{"2001::/23", "IETF protocol assignments", ""},
	{"2001:db8::/32", "documentation", ""},
	{"3fff::/20", "documentation", ""},
	{"fc00::/7", "unique local", ""},
	{"fe80::/10", "link-local", ""},
	{"fec0::/10", "site-local", ""},
	{"ff00::/8", "multicast", ""},
	{"4000::/2", "not global unicast", ""}, // never allocated
	{"5f00::/16", "not global unicast", ""},
}

// refusedEmbedded are addresses judged by the IPv4 address they embed
// (IPv4-mapped, NAT64, 6to4), and zoned addresses (the zone is ignored).
var refusedEmbedded = []struct {
	addrs         []string
	reason, allow string
}{
	{[]string{"::ffff:0.0.0.0", "::ffff:0.255.255.255"}, "", "0.0.0.0/8"},
	{[]string{"::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:127.255.255.255"}, "loopback", "::ffff:127.0.0.0/104"},
	{[]string{"::ffff:10.0.0.0", "::ffff:172.31.255.255", "::ffff:192.168.1.1"}, "private", "::ffff:0:0/96"},
	{[]string{"::ffff:169.254.169.254"}, "link-local", "169.254.0.0/16"},
	{[]string{"::ffff:100.64.0.1", "::ffff:198.18.0.1", "::ffff:192.0.2.1", "::ffff:224.0.0.1", "::ffff:255.255.255.255"}, "", "::ffff:0:0/96"},
	{[]string{"64:ff9b::", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::a00:1", "64:ff9b::ffff:ffff"}, "NAT64", "64:ff9b::/96"},
	{[]string{"2002::", "2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "6to4", "2002::/16"},
	{[]string{"fe80::1%eth0", "64:ff9b::7f00:1%eth0", "2002:7f00:1::1%eth0"}, "", "::/0"},
}

// allowedAddrs are public addresses, many just outside a refused range.
var allowedAddrs = []string{
	"1.0.0.0", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
	"128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "191.255.255.255",
	"192.0.1.0", "192.0.3.0", "192.88.98.255", "192.88.100.0", "192.167.255.255", "192.169.0.0",
	"198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0",
	"223.255.255.255",
	"::ffff:8.8.8.8", "::ffff:223.255.255.255", "64:ff9b::808:808", "64:ff9b::100:0", "2002:808:808::1",
	"2000::", "2001:200::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "2001:4860:4860::8888",
	"2606:4700:4700::1111", "2a00:1450:4001::1", "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::",
	"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2606:4700::1%eth0",
}

// lastAddr returns the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// insideAddr returns an address in the upper half of p, away from its ends.
func insideAddr(p netip.Prefix) netip.Addr {
	if p.IsSingleIP() {
		return p.Addr()
	}
	b := p.Masked().Addr().AsSlice()
	b[p.Bits()/8] |= 0x80 >> (p.Bits() % 8)
	a, _ := netip.AddrFromSlice(b)
	return a.Next()
}

// hookURL is a webhook URL on an IP literal.
func hookURL(a string) string {
	return "http://" + net.JoinHostPort(strings.ReplaceAll(a, "%", "%25"), "8080") + "/hook?k=v"
}

// TestRefusedRanges: every refused range is refused by Forbidden, by the
// guard at registration (CheckURL) and at connect time (DialContext, which
// must give up before dialling), and let through by AllowPrivate and by
// an AllowHosts prefix; public neighbours of those ranges are accepted.
func TestRefusedRanges(t *testing.T) {
	t.Parallel()
	type row struct {
		addr, reason, allow string
	}
	var rows []row
	for _, r := range refusedRanges {
		p := netip.MustParsePrefix(r.prefix)
		allow := r.allow
		if allow == "" {
			allow = r.prefix
		}
		first, last, inside := p.Addr(), lastAddr(p), insideAddr(p)
		if !p.Contains(last) || !p.Contains(inside) || (!p.IsSingleIP() && (inside == first || inside == last)) {
			t.Fatalf("test helper: %s: first %s, inside %s, last %s", p, first, inside, last)
		}
		rows = append(rows, row{first.String(), "", allow}, row{inside.String(), r.reason, allow}, row{last.String(), "", allow})
	}
	for _, r := range refusedEmbedded {
		for _, a := range r.addrs {
			rows = append(rows, row{a, r.reason, r.allow})
		}
	}

	strict := mustGuard(t, nil)
	private := mustGuard(t, &push.GuardOptions{AllowPrivate: true})
	ctx := context.Background()
	for _, r := range rows {
		a := netip.MustParseAddr(r.addr)
		why, bad := push.Forbidden(a)
		if !bad || why == "" {
			t.Errorf("Forbidden(%s) = %q, %v; want refused with a reason", a, why, bad)
		} else if !strings.Contains(why, r.reason) {
			t.Errorf("Forbidden(%s) = %q, want a reason with %q", a, why, r.reason)
		}
		u := hookURL(r.addr)
		if err := strict.CheckURL(ctx, u); !errors.Is(err, push.ErrForbiddenAddress) {
			t.Errorf("CheckURL(%s) = %v, want ErrForbiddenAddress", u, err)
		}
		dctx, cancel := context.WithTimeout(ctx, time.Second) // bounds a dial the guard should not have let out
		c, err := strict.DialContext(dctx, "tcp", net.JoinHostPort(r.addr, "8080"))
		cancel()
		if !errors.Is(err, push.ErrForbiddenAddress) {
			if c != nil {
				c.Close()
			}
			t.Errorf("DialContext(%s) = %v, want ErrForbiddenAddress", r.addr, err)
		}
		if err := private.CheckURL(ctx, u); err != nil {
			t.Errorf("with AllowPrivate: CheckURL(%s) = %v, want accepted", u, err)
		}
		if err := mustGuard(t, &push.GuardOptions{AllowHosts: []string{r.allow}}).CheckURL(ctx, u); err != nil {
			t.Errorf("with AllowHosts %s: CheckURL(%s) = %v, want accepted", r.allow, u, err)
		}
	}
	for _, s := range allowedAddrs {
		if why, bad := push.Forbidden(netip.MustParseAddr(s)); bad {
			t.Errorf("Forbidden(%s) = %q, true; want allowed", s, why)
		}
		if err := strict.CheckURL(ctx, hookURL(s)); err != nil {
			t.Errorf("CheckURL(%s) = %v, want accepted", hookURL(s), err)
		}
	}
}

// TestMappedLoopbackNeverDialled: a webhook on an IPv4-mapped IPv6 literal
// of a loopback listener, however spelt, or on a name resolving to one, is
// refused at registration, and such a configuration found in the store is
// dropped at delivery without the listener ever seeing a connection. The
// same URL under AllowPrivate does reach the listener: what the guard
// refuses would otherwise be dialled.
func TestMappedLoopbackNeverDialled(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	lis := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	lis.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	lis.Start() // on 127.0.0.1
	t.Cleanup(lis.Close)
	_, port, _ := net.SplitHostPort(lis.Listener.Addr().String())
	dns := push.ResolverFunc(func(context.Context, string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("::ffff:127.0.0.1")}}, nil
	})
	urls := []string{
		"http://[::ffff:127.0.0.1]:" + port + "/hook",
		"http://[::ffff:7f00:1]:" + port + "/hook",
		"http://[0:0:0:0:0:FFFF:7F00:0001]:" + port + "/hook",
		"http://mapped-loopback.example:" + port + "/hook",
	}

	o := fast()
	o.Guard = mustGuard(t, &push.GuardOptions{Resolver: dns})
	e := newEnv(t, memory(t), o)
	tk := e.send(t, "input-required", nil)
	for i, u := range urls {
		cfg := &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Id: fmt.Sprintf("c%d", i), Url: u}
		if _, err := e.srv.CreateTaskPushNotificationConfig(call(t), cfg); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("Create with %s: %v, want InvalidParams", u, err)
		}
		e.storeConfig(t, tk, cfg)
	}
	eventually(t, "every stored notification settled", func() bool {
		st := e.sender.Stats()
		return st.Dropped+st.Delivered >= uint64(len(urls))
	})
	time.Sleep(50 * time.Millisecond) // a connection the guard let through would be accepted by now
	if n := conns.Load(); n != 0 {
		t.Fatalf("the loopback listener saw %d connections to IPv4-mapped webhooks", n)
	}
	if st := e.sender.Stats(); st.Delivered != 0 || st.Dropped != uint64(len(urls)) {
		t.Errorf("Stats: %d delivered, %d dropped; want 0 and %d", st.Delivered, st.Dropped, len(urls))
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "mapped-loopback.example is not allowed") || strings.Contains(logs, "resolves to ::ffff") || strings.Contains(logs, "resolves to 127") {
		t.Errorf("the refusal of the name is not logged, or says what it resolved to:\n%s", logs)
	}

	open := newEnv(t, memory(t), fast()) // AllowPrivate
	tk = open.send(t, "input-required", nil)
	open.storeConfig(t, tk, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Id: "c", Url: urls[0]})
	eventually(t, "the delivery under AllowPrivate", func() bool { return open.sender.Stats().Delivered >= 1 })
	if conns.Load() == 0 {
		t.Error("under AllowPrivate the listener saw no connection: the test proves nothing")
	}
}
