package interop_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// TestJSGRPCClientInterop runs the official A2A JavaScript SDK's gRPC client
// transport (@a2a-js/sdk 1.3.0 client/grpc on @grpc/grpc-js;
// internal/interop/js/grpc_check.mjs) against a freshly built `parley serve`: the SDK
// reads the agent card over HTTP, dials the card's GRPC interface (the same
// port, cleartext HTTP/2) and sends, streams, gets, lists and cancels; as
// Parley serves by default and with the A2A 1.1 preview on, where the SDK
// must still dial the v1.0 GRPC interface.
//
// Without Node.js or without internal/interop/js/node_modules the test is skipped,
// unless CI=true, in which case it fails.
func TestJSGRPCClientInterop(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@grpc/grpc-js", "@bufbuild/protobuf")
	checkSDKInstalled(t, dir)

	for _, round := range rounds(t) {
		base := round.base
		t.Run(round.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "grpc_check.mjs", base)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node grpc_check.mjs %s failed (%v):\n%s", base, err, out)
			}
			t.Logf("node grpc_check.mjs %s:\n%s", base, out)
		})
	}
}
