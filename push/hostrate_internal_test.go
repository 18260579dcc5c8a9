package push

import (
	"context"
	"testing"
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

// TestHostLimiterOff: a negative rate is no limiter at all, whose wait
// always passes (the buckets themselves: package keyrate).
func TestHostLimiterOff(t *testing.T) {
	t.Parallel()
	if off := newHostLimiter(-1, 1); off != nil || !off.wait(context.Background(), "https://x.example/") {
		t.Error("a negative rate must mean no limiter, whose wait always passes")
	}
}
