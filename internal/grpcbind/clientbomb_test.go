package grpcbind_test

import (
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/transport"
)

// TestClientRefusesGzipBomb: a hostile server's response message that
// inflates to 9 GiB fails the call once the client has inflated its limit
// (grpcbind.MaxResponseBytes), not after inflating it all. The error
// proves it (connect-go's own limit, reached after inflating all 9 GiB,
// names the message's size instead); the call is not timed, since the
// 64 MiB it inflates took over 20 s under -race on a loaded 2-core CI
// machine.
func TestClientRefusesGzipBomb(t *testing.T) {
	t.Parallel()
	url := testkit.ServeH2C(t, testenv.GzipBombGRPC(9<<30), nil).URL
	tr, err := grpcbind.NewTransport(url, transport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	_, err = tr.Call(testkit.BoundedWorkCtx(t), a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "x"})
	if err == nil || !strings.Contains(err.Error(), "inflating stopped at the limit of 67108864 bytes") {
		t.Errorf("GetTask answered by a gzip bomb: %v, want the inflating stopped at the limit", err)
	}
}
