package v03grpc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03/v03grpc"
)

// TestClientRefusesGzipBomb: the v0.3 client, like v1.0's, stops
// inflating a hostile server's response at its limit.
func TestClientRefusesGzipBomb(t *testing.T) {
	t.Parallel()
	url := testkit.ServeH2C(t, testenv.GzipBombGRPC(9<<30), nil).URL
	tr, err := v03grpc.NewTransport(url, transport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = tr.Call(ctx, a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "x"})
	if err == nil || !strings.Contains(err.Error(), "inflating stopped at the limit of 67108864 bytes") {
		t.Errorf("GetTask answered by a gzip bomb: %v, want the inflating stopped at the limit", err)
	}
}
