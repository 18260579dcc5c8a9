package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// jsSDKVersion is the exact @a2a-js/sdk release the interop check is pinned to
// (see interop/js/package.json).
const jsSDKVersion = "1.3.0"

// TestJSClientInterop runs the official A2A JavaScript SDK client
// (interop/js/client_check.mjs) against a freshly built Parley server running
// the conformance agent, once per protocol binding.
//
// Without Node.js or without interop/js/node_modules the test is skipped,
// unless CI=true, in which case it fails.
func TestJSClientInterop(t *testing.T) {
	root := moduleRoot(t)
	jsDir := filepath.Join(root, "interop", "js")

	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not on PATH; install Node.js >= 20 to run the JS SDK interop test")
	}
	checkSDKInstalled(t, jsDir)

	bin := buildParley(t, root)
	base := startParley(t, bin)

	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		t.Run(binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "client_check.mjs", base, binding)
			cmd.Dir = jsDir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node client_check.mjs %s %s failed (%v):\n%s", base, binding, err, out)
			}
			t.Logf("node client_check.mjs %s %s:\n%s", base, binding, out)
		})
	}
}

// skipOrFail skips the test, or fails it when running in CI (CI=true), where
// the interop prerequisites are expected to be present.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but the JS interop test cannot run: %s", why)
	}
	t.Skip(why)
}

// checkSDKInstalled verifies that npm dependencies are installed and that the
// installed SDK is the pinned version.
func checkSDKInstalled(t *testing.T, jsDir string) {
	t.Helper()
	pkgJSON := filepath.Join(jsDir, "node_modules", "@a2a-js", "sdk", "package.json")
	data, err := os.ReadFile(pkgJSON)
	if errors.Is(err, os.ErrNotExist) {
		skipOrFail(t, fmt.Sprintf("%s is missing; run `npm ci` in %s", pkgJSON, jsDir))
	}
	if err != nil {
		t.Fatalf("reading %s: %v", pkgJSON, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatalf("parsing %s: %v", pkgJSON, err)
	}
	if pkg.Version != jsSDKVersion {
		t.Fatalf("installed @a2a-js/sdk is %q, want %q; run `npm ci` in %s", pkg.Version, jsSDKVersion, jsDir)
	}
}

// moduleRoot finds the directory holding go.mod, starting from the package
// directory the test runs in.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// buildParley compiles ./cmd/parley into a temporary directory.
func buildParley(t *testing.T, root string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "parley")
	cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/parley")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/parley: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer collects process output; exec copies into it from its own
// goroutines while the test may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort asks the kernel for an unused port on the loopback interface.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// startParley runs `parley serve` with the conformance agent and an in-memory
// store, waits until its agent card is served, and returns the base URL. The
// server is stopped when the test ends.
func startParley(t *testing.T, bin string) string {
	t.Helper()
	return startOnFreePort(t, "parley server", func(port int) (string, error) { return tryStartParley(t, bin, port) })
}

func tryStartParley(t *testing.T, bin string, port int) (string, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	base := "http://" + addr

	logs := &syncBuffer{}
	cmd := exec.Command(bin, "serve", "--agent", "conformance", "--store", "memory", "--addr", addr)
	cmd.Stdout = logs
	cmd.Stderr = logs
	c, err := startChild(cmd, logs)
	if err != nil {
		return "", err
	}
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-c.exited:
			return "", fmt.Errorf("server exited before becoming ready (%v); output:\n%s", c.waitErr, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			c.stop()
			return "", fmt.Errorf("agent card at %s not served within 20s; output:\n%s", base, logs.String())
		}
		resp, err := client.Get(base + "/.well-known/agent-card.json")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.stopAtCleanup(t, "parley server")
	return base, nil
}
