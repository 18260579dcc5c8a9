package push

import (
	"context"
	"testing"
	"time"
)

func TestHostOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"https://hooks.example.com/a", "hooks.example.com"},
		{"https://Hooks.Example.COM:8443/a?x=1", "hooks.example.com"},
		{"http://hooks.example.com./", "hooks.example.com"},
		{"http://user:pw@10.0.0.1:9/x", "10.0.0.1"},
		{"http://[2001:db8::1]:80/x", "2001:db8::1"},
		{"not a url\x7f", ""},
		{"/relative", ""},
	} {
		if got := hostOf(tc.url); got != tc.want {
			t.Errorf("hostOf(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// TestHostLimiterSweeps: buckets of hosts nobody waits on, full again,
// are dropped once the map passes its sweep size; a negative rate is no
// limiter at all.
func TestHostLimiterSweeps(t *testing.T) {
	t.Parallel()
	l := newHostLimiter(1000, 1)
	l.nextSweep = 4
	ctx := context.Background()
	for _, h := range []string{"a", "b", "c", "d"} {
		if !l.wait(ctx, "https://"+h+".example/") {
			t.Fatal("wait failed")
		}
	}
	l.mu.Lock()
	l.sweep(time.Now().Add(time.Second)) // every bucket full again by then
	n := len(l.hosts)
	l.mu.Unlock()
	if n != 0 {
		t.Errorf("%d buckets left after a sweep of idle, full ones", n)
	}
	if off := newHostLimiter(-1, 1); off != nil || !off.wait(ctx, "https://x.example/") {
		t.Error("a negative rate must mean no limiter, whose wait always passes")
	}
}
