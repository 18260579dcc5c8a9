package parleyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"sort"
	"testing"
	"time"

	"parley.dev/parley/internal/interop/gosdk/internal/peer"
)

// TestParleyCheck runs `parley check URL --json` against the Go SDK's agent
// and compares the checks that fail with the known deviations of the SDK,
// so that a change on either side shows up here.
func TestParleyCheck(t *testing.T) {
	base := startSDKAgent(t)
	parley := peer.Binary(t, "parley.dev/parley/cmd/parley")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, parley, "check", base, "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("parley check: %v\n%s", err, stderr.String())
	}
	if code != 0 && code != 1 { // 1: a MUST failed; 3: unreachable
		t.Fatalf("parley check %s exited %d\nstdout:\n%s\nstderr:\n%s", base, code, stdout.String(), stderr.String())
	}
	var report struct {
		Results []struct {
			ID, Binding, Verdict, Section string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("parley check --json: %v\n%s", err, stdout.String())
	}
	var failed []string
	verdicts := map[string]int{}
	for _, r := range report.Results {
		verdicts[r.Verdict]++
		if r.Verdict == "FAIL" {
			failed = append(failed, r.Binding+" "+r.ID)
		}
	}
	sort.Strings(failed)
	failed = slices.Compact(failed)
	t.Logf("parley check %s: exit %d, verdicts %v, failed %q", base, code, verdicts, failed)
	if len(verdicts) == 0 {
		t.Fatalf("parley check printed no results:\n%s", stdout.String())
	}
	known := knownCheckFailures()
	if !slices.Equal(failed, known) {
		t.Errorf("parley check FAILs = %q\nwant the known deviations %q", failed, known)
	}
}

// knownCheckFailures are the checks `parley check` fails the Go SDK's agent
// on, sorted, as "BINDING CHECK". Each is a known deviation of the SDK
// v2.4.0:
//
//   - B7.version-unsupported (spec §3.6.2, §5.4): a request with an
//     A2A-Version the server does not support is served anyway, where
//     VersionNotSupportedError is due; over JSON-RPC a request without the
//     header (version 0.3, B7.version-missing) is also served with v1.0
//     semantics.
//   - B5.list-shape (spec §3.1.4, §5.7): the SDK's task store refuses an
//     anonymous ListTasks as UNAUTHENTICATED, so the shape of a list is
//     never seen. (grpc.protocol, which grades the framing of that
//     ListTasks answer, passes it: the refusal is correctly framed.)
func knownCheckFailures() []string {
	return []string{
		"GRPC B5.list-shape",
		"GRPC B7.version-unsupported",
		"HTTP+JSON B5.list-shape",
		"HTTP+JSON B7.version-unsupported",
		"JSONRPC B5.list-shape",
		"JSONRPC B7.version-missing",
		"JSONRPC B7.version-unsupported",
	}
}
