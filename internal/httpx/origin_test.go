package httpx

import "testing"

// TestSameOrigin: an Origin is the request's own when it names the Host
// the request was sent to, port included; "null" and hostless origins
// never are.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		origin, host string
		ok           bool
	}{
		{"http://127.0.0.1:7071", "127.0.0.1:7071", true},
		{"http://LOCALHOST:7071", "localhost:7071", true},
		{"https://agent.example.com", "agent.example.com", true}, // TLS ended by a proxy
		{"http://127.0.0.1:7072", "127.0.0.1:7071", false},
		{"http://localhost:7071", "127.0.0.1:7071", false},
		{"http://evil.example", "127.0.0.1:7071", false},
		{"null", "127.0.0.1:7071", false},
		{"::", "127.0.0.1:7071", false},
		{"", "", false},
	} {
		if got := SameOrigin(tc.origin, tc.host); got != tc.ok {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.ok)
		}
	}
}
