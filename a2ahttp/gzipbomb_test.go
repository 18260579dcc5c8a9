package a2ahttp

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/testenv"
)

// TestGzipBombRefused: a gRPC message of 9.3 MB (under the 10 MiB message
// limit) that inflates to 9 GiB is refused with RESOURCE_EXHAUSTED by
// every gRPC service on the port — both protocol versions' A2A services
// and health — and the server goes on serving. (That it is refused after
// inflating at most the limit is TestLimitedGzipStopsAtTheLimit's; its cost
// is BenchmarkGzipBombRefused's, in docs/security.md.)
func TestGzipBombRefused(t *testing.T) {
	t.Parallel()
	h, base := matrixServer(t, Options{})
	bomb := testenv.GzipBomb(9 << 30)
	if len(bomb) >= grpcbind.DefaultMaxRecvBytes {
		t.Fatalf("the bomb is %d bytes: it would be refused before it is inflated", len(bomb))
	}
	frame := append([]byte{1, byte(len(bomb) >> 24), byte(len(bomb) >> 16), byte(len(bomb) >> 8), byte(len(bomb))}, bomb...)
	send := func(t *testing.T, path, version string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(frame))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Grpc-Encoding", "gzip")
		req.Header.Set("A2A-Version", version)
		return do(req)
	}
	grpcs := 0
	forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
		if p.binding != a2a.BindingGRPC {
			return
		}
		grpcs++
		refusedEarly(t, "SendMessage", send(t, p.sendPath, p.version))
		if got := outcome(do(getBlocked(t, context.Background(), base, p))); got != "grpc 5" {
			t.Errorf("GetTask after the bomb: %s, want grpc 5 (TaskNotFound): the server serves", got)
		}
	})
	if grpcs != 2 {
		t.Errorf("%d gRPC protocols in the table, want 2", grpcs)
	}
	refusedEarly(t, "health Check", send(t, "/grpc.health.v1.Health/Check", ""))
}

// refusedEarly checks that r refuses a gzip bomb with RESOURCE_EXHAUSTED
// saying the inflating stopped at the limit (connect-go's own gzip would
// say the size it found by inflating all of it).
func refusedEarly(t *testing.T, what string, r *http.Response) {
	t.Helper()
	if got := outcome(r); got != "grpc 8" {
		t.Errorf("%s of a gzip bomb: %s, want grpc 8 (RESOURCE_EXHAUSTED)", what, got)
		return
	}
	msg, _ := url.PathUnescape(r.Trailer.Get("Grpc-Message") + r.Header.Get("Grpc-Message"))
	if !strings.Contains(msg, "inflating stopped at the limit of 10485760 bytes") {
		t.Errorf("%s of a gzip bomb: message %q, want the inflating stopped at the limit", what, msg)
	}
}
