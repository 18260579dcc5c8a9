package interop_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// TestJSClientInterop runs the official A2A JavaScript SDK client
// (internal/interop/js/client_check.mjs) against a freshly built Parley server running
// the conformance agent, once per protocol binding, as Parley serves by
// default and with the A2A 1.1 preview on: the SDK must pick the card's
// v1.0 interface of the binding, not the 1.1 one listed after it, and get
// the same answers.
//
// Without Node.js or without internal/interop/js/node_modules the test is skipped,
// unless CI=true, in which case it fails.
func TestJSClientInterop(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir)
	checkSDKInstalled(t, dir)

	for _, round := range rounds(t) {
		base := round.base
		for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
			t.Run(round.name+"/"+binding, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, "client_check.mjs", base, binding)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("node client_check.mjs %s %s failed (%v):\n%s", base, binding, err, out)
				}
				t.Logf("node client_check.mjs %s %s:\n%s", base, binding, out)
			})
		}
	}
}
