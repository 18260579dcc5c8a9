package interop_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestJSGRPCClientInterop runs the official A2A JavaScript SDK's gRPC client
// transport (@a2a-js/sdk 1.3.0 client/grpc on @grpc/grpc-js;
// interop/js/grpc_check.mjs) against a freshly built `parley serve`: the SDK
// reads the agent card over HTTP, dials the card's GRPC interface (the same
// port, cleartext HTTP/2) and sends, streams, gets, lists and cancels.
//
// Without Node.js or without interop/js/node_modules the test is skipped,
// unless CI=true, in which case it fails.
func TestJSGRPCClientInterop(t *testing.T) {
	root := moduleRoot(t)
	jsDir := filepath.Join(root, "interop", "js")
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not on PATH; install Node.js >= 20 to run the JS SDK interop test")
	}
	checkSDKInstalled(t, jsDir)
	for _, dep := range []string{"@grpc/grpc-js", "@bufbuild/protobuf"} {
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", dep, "package.json")); errors.Is(err, os.ErrNotExist) {
			skipOrFail(t, dep+" is not installed; run `npm ci` in "+jsDir)
		}
	}

	base := startParley(t, buildParley(t, root))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "grpc_check.mjs", base)
	cmd.Dir = jsDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node grpc_check.mjs %s failed (%v):\n%s", base, err, out)
	}
	t.Logf("node grpc_check.mjs %s:\n%s", base, out)
}
