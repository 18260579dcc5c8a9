package v03grpc_test

import (
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03/v03grpc"
)

// TestClientRefusesGzipBomb: the v0.3 client, like v1.0's, stops
// inflating a hostile server's response at its limit: the error proves
// it, so the call is not timed (see grpcbind's TestClientRefusesGzipBomb).
func TestClientRefusesGzipBomb(t *testing.T) {
	t.Parallel()
	url := testkit.ServeH2C(t, testenv.GzipBombGRPC(9<<30), nil).URL
	tr, err := v03grpc.NewTransport(url, transport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	_, err = tr.Call(testkit.BoundedWorkCtx(t), a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "x"})
	if err == nil || !strings.Contains(err.Error(), "inflating stopped at the limit of 67108864 bytes") {
		t.Errorf("GetTask answered by a gzip bomb: %v, want the inflating stopped at the limit", err)
	}
}
