// Package onebinary tests a program that links Parley and the Go SDK's
// gRPC binding (cmd/together), built and run the ways
// docs/interoperability.md tells a user to.
package onebinary_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/interop/gosdk/internal/peer"
)

// conflictFlag is the link flag that sets Go protobuf's registration
// conflict policy in the binary itself.
const conflictFlag = "-ldflags=-X google.golang.org/protobuf/reflect/protoregistry.conflictPolicy=ignore"

// conflictEnv is the environment variable that sets it when the program
// starts.
const conflictEnv = "GOLANG_PROTOBUF_REGISTRATION_CONFLICT"

// TestOneBinary: built as it is, the program panics at start over the
// protobuf names both modules register (lf.a2a.v1); with the conflict
// policy set, by the link flag or by the environment, both stacks serve
// and call each other on JSON-RPC and gRPC in the one process.
func TestOneBinary(t *testing.T) {
	peer.RequireSDK(t)
	dir := t.TempDir()
	plain := build(t, filepath.Join(dir, "plain"))
	flagged := build(t, filepath.Join(dir, "flagged"), conflictFlag)
	for _, tc := range []struct {
		name  string
		bin   string
		env   string // KEY=VALUE added to the environment, or ""
		ok    bool   // it must print OK and exit 0 (or else panic over the conflict)
		warns bool   // it prints the registry's warnings
	}{
		{name: "plain build", bin: plain},
		{name: "link flag", bin: flagged, ok: true},
		{name: "environment ignore", bin: plain, env: conflictEnv + "=ignore", ok: true},
		{name: "environment warn", bin: plain, env: conflictEnv + "=warn", ok: true, warns: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, tc.bin)
			cmd.Env = os.Environ()
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			} else {
				cmd.Env = append(cmd.Env, conflictEnv+"=") // not inherited from the test's environment
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if !tc.ok {
				if code != 2 || !strings.Contains(stderr.String(), "name conflict over lf.a2a.v1.") {
					t.Fatalf("exit %d (%v), stderr:\n%s\nwant the registration panic (exit 2): the conflict is gone, update docs/interoperability.md", code, err, head(stderr.String()))
				}
				return
			}
			if err != nil || stdout.String() != "OK\n" {
				t.Fatalf("exit %d (%v), stdout %q, stderr:\n%s", code, err, stdout.String(), head(stderr.String()))
			}
			if warned := strings.Contains(stderr.String(), "WARNING: proto:"); warned != tc.warns {
				t.Errorf("registry warnings printed: %v, want %v; stderr:\n%s", warned, tc.warns, head(stderr.String()))
			}
		})
	}
}

// build builds cmd/together into out with the go build flags given, and
// returns out.
func build(t *testing.T, out string, flags ...string) string {
	t.Helper()
	args := append(append([]string{"build", "-o", out}, flags...), "parley.dev/parley/internal/interop/gosdk/cmd/together")
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// head is the start of a long output.
func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
