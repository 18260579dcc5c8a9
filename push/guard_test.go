package push_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
)

// fakeDNS stands for DNS in the guard tests.
var fakeDNS = push.ResolverFunc(func(_ context.Context, host string) ([]net.IPAddr, error) {
	ips := map[string][]string{
		"public.example":   {"93.184.216.34", "2606:2800:220:1::1"},
		"internal.example": {"10.0.0.5"},
		"loop.example":     {"127.0.0.1"},
		"mapped.example":   {"::ffff:192.168.1.1"},
		"ula.example":      {"fd12:3456::1"},
		"mixed.example":    {"93.184.216.34", "169.254.169.254"},
	}[strings.TrimSuffix(strings.ToLower(host), ".")]
	if ips == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
})

func TestForbidden(t *testing.T) {
	t.Parallel()
	refused := []string{
		"127.0.0.1", "127.255.0.9", "::1", // loopback
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254", "192.168.0.1", "192.168.255.1", // private
		"169.254.169.254", "169.254.0.1", "fe80::1", // link-local
		"fd00::1", "fd12:3456::1", "fc00::1", // unique local
		"0.0.0.0", "::", "0.1.2.3", // unspecified, "this network"
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2", // multicast
		"100.64.0.1", "100.127.255.254", // shared address space
		"255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.0.8", // reserved
		"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::ffff:192.168.0.1", // IPv4-mapped
		"64:ff9b::a00:1", "2002:c0a8:101::1", "::7f00:1", "fec0::1", // embedded IPv4, site-local
	}
	allowed := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "172.15.255.255", "192.169.0.1", "100.128.0.1",
		"11.0.0.1", "2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"}
	for _, s := range refused {
		if why, bad := push.Forbidden(netip.MustParseAddr(s)); !bad {
			t.Errorf("Forbidden(%s) = false, want true", s)
		} else if why == "" {
			t.Errorf("Forbidden(%s) gives no reason", s)
		}
	}
	for _, s := range allowed {
		if why, bad := push.Forbidden(netip.MustParseAddr(s)); bad {
			t.Errorf("Forbidden(%s) = true (%s), want false", s, why)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := mustGuard(t, &push.GuardOptions{Resolver: fakeDNS})
	private := mustGuard(t, &push.GuardOptions{Resolver: fakeDNS, AllowPrivate: true})
	hosts := mustGuard(t, &push.GuardOptions{Resolver: fakeDNS, AllowHosts: []string{"internal.example", "127.0.0.1", "[::1]", "fd00::/8"}})
	tests := []struct {
		url                    string
		strict, private, hosts bool // accepted by each guard
	}{
		{"https://public.example/hook", true, true, true},
		{"http://93.184.216.34:8080/hook", true, true, true},
		{"https://unknown.example/hook", true, true, true}, // unresolvable: checked at connect time
		{"http://127.0.0.1:9000/hook", false, true, true},
		{"http://[::1]:9000/hook", false, true, true},
		{"http://10.1.2.3/hook", false, true, false},
		{"http://172.16.5.4/hook", false, true, false},
		{"http://192.168.1.10/hook", false, true, false},
		{"http://169.254.169.254/latest/meta-data", false, true, false},
		{"http://[fd00::1]/hook", false, true, true},
		{"http://[::ffff:127.0.0.1]/hook", false, true, true},
		{"http://[::ffff:10.0.0.1]/hook", false, true, false},
		{"http://0.0.0.0/hook", false, true, false},
		{"https://internal.example/hook", false, true, true},
		{"https://INTERNAL.example./hook", false, true, true},
		{"https://loop.example/hook", false, true, false},
		{"https://mapped.example/hook", false, true, false},
		{"https://ula.example/hook", false, true, true},
		{"https://mixed.example/hook", false, true, false},
		{"ftp://public.example/hook", false, false, false},
		{"https:///nohost", false, false, false},
		{"https://user:pw@public.example/", false, false, false},
		{"/relative", false, false, false},
	}
	for _, tc := range tests {
		for _, g := range []struct {
			name  string
			guard *push.Guard
			want  bool
		}{{"strict", strict, tc.strict}, {"allow-private", private, tc.private}, {"allow-hosts", hosts, tc.hosts}} {
			err := g.guard.CheckURL(context.Background(), tc.url)
			if (err == nil) != g.want {
				t.Errorf("%s CheckURL(%s) = %v, want accepted %v", g.name, tc.url, err, g.want)
			}
		}
	}
	// A refused name is named, but what it resolves to is not said
	// (internal DNS stays private); a refused literal is named with why.
	err := strict.CheckURL(context.Background(), "https://internal.example/hook")
	if !errors.Is(err, push.ErrForbiddenAddress) || !strings.Contains(err.Error(), "internal.example") ||
		!strings.Contains(err.Error(), "not allowed") || strings.Contains(err.Error(), "10.0.0.5") {
		t.Errorf("refusal %q: want ErrForbiddenAddress naming the host, not its address", err)
	}
	err = strict.CheckURL(context.Background(), "http://10.0.0.5/hook")
	if !errors.Is(err, push.ErrForbiddenAddress) || !strings.Contains(err.Error(), "10.0.0.5") || !strings.Contains(err.Error(), "private") {
		t.Errorf("refusal %q: want ErrForbiddenAddress naming the literal address and why", err)
	}
	if _, err := push.NewGuard(&push.GuardOptions{AllowHosts: []string{" "}}); err == nil {
		t.Error("NewGuard accepted an empty allowed host")
	}
	if _, err := push.NewGuard(&push.GuardOptions{AllowHosts: []string{"10.0.0.0/99"}}); err == nil {
		t.Error("NewGuard accepted a bad prefix")
	}
}

func mustGuard(t testing.TB, o *push.GuardOptions) *push.Guard {
	t.Helper()
	g, err := push.NewGuard(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDialRefusesPrivate: the connect-time check refuses a loopback
// receiver, by literal address or by a name resolving to it, and connects
// under the allow options.
func TestDialRefusesPrivate(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	dns := push.ResolverFunc(func(_ context.Context, host string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	})
	for _, tc := range []struct {
		name string
		o    push.GuardOptions
		addr string
		ok   bool
	}{
		{"literal", push.GuardOptions{}, "127.0.0.1:" + port, false},
		{"name", push.GuardOptions{Resolver: dns}, "hook.example:" + port, false},
		{"allow-private", push.GuardOptions{Resolver: dns, AllowPrivate: true}, "hook.example:" + port, true},
		{"allow-host", push.GuardOptions{Resolver: dns, AllowHosts: []string{"hook.example"}}, "hook.example:" + port, true},
		{"allow-prefix", push.GuardOptions{Resolver: dns, AllowHosts: []string{"127.0.0.0/8"}}, "hook.example:" + port, true},
		{"other-host-allowed", push.GuardOptions{Resolver: dns, AllowHosts: []string{"other.example"}}, "hook.example:" + port, false},
	} {
		g := mustGuard(t, &tc.o)
		c, err := g.DialContext(context.Background(), "tcp", tc.addr)
		if c != nil {
			c.Close()
		}
		if tc.ok && err != nil {
			t.Errorf("%s: DialContext(%s) = %v, want a connection", tc.name, tc.addr, err)
		}
		if !tc.ok && !errors.Is(err, push.ErrForbiddenAddress) {
			t.Errorf("%s: DialContext(%s) = %v, want ErrForbiddenAddress", tc.name, tc.addr, err)
		}
		if !tc.ok && strings.HasPrefix(tc.addr, "hook.example") && strings.Contains(fmt.Sprint(err), "127.0.0.1") {
			t.Errorf("%s: DialContext(%s) = %v, which says what the name resolved to", tc.name, tc.addr, err)
		}
	}
}

// TestDNSRebinding: a name that resolved to a public address at
// registration and resolves to loopback at delivery is refused at connect
// time; the failure is logged and nothing reaches the receiver.
func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	var lookups atomic.Int32
	dns := push.ResolverFunc(func(_ context.Context, host string) ([]net.IPAddr, error) {
		if lookups.Add(1) == 1 {
			return []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}, nil
		}
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	})
	o := fast()
	o.Guard = mustGuard(t, &push.GuardOptions{Resolver: dns})
	e := newEnv(t, memory(t), o)
	tk := e.send(t, "input-required", nil)
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: "http://rebind.example:" + port + "/hook"})
	eventually(t, "the refused delivery", func() bool { return e.sender.Stats().Dropped >= 1 })
	if n := len(rc.all()); n != 0 {
		t.Errorf("receiver got %d requests through a rebound name", n)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "notification dropped") || !strings.Contains(logs, "rebind.example is not allowed") ||
		strings.Contains(logs, "resolves to 127") {
		t.Errorf("the refusal is not logged, or says what the name resolved to:\n%s", logs)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := push.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for range 50 {
			if d := b.Delay(n); d < want/2 || d > want {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}

func TestSetHeaders(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	push.SetHeaders(h, &a2a.TaskPushNotificationConfig{Token: "t", Authentication: &a2a.AuthenticationInfo{Scheme: "ApiKey", Credentials: "k"}})
	want := map[string]string{"Content-Type": "application/a2a+json", "A2a-Version": "1.0", "Authorization": "ApiKey k",
		"A2a-Notification-Token": "t", "X-A2a-Notification-Token": "t"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
}
