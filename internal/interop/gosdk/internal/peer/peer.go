// Package peer starts the tests' peers: a command of this module, built
// once per test binary and run as a child process that prints
// "READY BASE_URL" when it serves and stops when its standard input
// closes.
package peer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var builds sync.Map // package path → *build

type build struct {
	once sync.Once
	path string
	err  error
}

// The module of these tests, and Parley's (replaced by the directory two
// levels up).
const (
	thisModule   = "parley.dev/parley/internal/interop/gosdk"
	parleyModule = "parley.dev/parley"
)

// Binary builds the main package pkg (an import path, or a directory
// relative to the test's) once per test binary and returns its path.
// Parley's packages are built in Parley's module.
func Binary(tb testing.TB, pkg string) string {
	tb.Helper()
	v, _ := builds.LoadOrStore(pkg, new(build))
	b := v.(*build)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "gosdk-peer")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		if strings.HasPrefix(pkg, parleyModule+"/") && !strings.HasPrefix(pkg, thisModule+"/") {
			// Parley's own commands are built in Parley's module, with its
			// go.sum: this module lists only what its own packages import.
			root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", parleyModule).Output()
			if err != nil {
				b.err = fmt.Errorf("finding module %s: %v", parleyModule, err)
				return
			}
			cmd.Dir = strings.TrimSpace(string(root))
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// Start runs the command bin with args, waits for its READY line and
// returns the base URL it printed. The child stops when the test ends;
// what it wrote to standard error is logged then.
func Start(tb testing.TB, bin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	tb.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if s := cmd.Stderr.(*lockedWriter).String(); s != "" {
			tb.Logf("%s wrote to stderr:\n%s", filepath.Base(bin), s)
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "READY ") {
				lines <- strings.TrimPrefix(l, "READY ")
				break
			}
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case base := <-lines:
		return strings.TrimSpace(base)
	case err := <-done:
		done <- err
		tb.Fatalf("%s exited before it was ready: %v\n%s", bin, err, cmd.Stderr.(*lockedWriter).String())
	case <-ctx.Done():
		tb.Fatalf("%s did not print READY within 30 s", bin)
	}
	return ""
}

// lockedWriter is a strings.Builder safe for the child's writer and the
// test's reader. (It and SkipOrFailInCI repeat testkit's SyncBuffer and
// SkipOrFailInCI: this package cannot import testkit, which links
// Parley's a2a package, whose protos share their names with the SDK's,
// so that a test binary with both panics at init.)
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// SkipOrFailInCI skips a test whose prerequisite is missing, or fails it
// when CI=true, where every prerequisite is expected.
func SkipOrFailInCI(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true but the test cannot run: %s", why)
	}
	tb.Skip(why)
}

// SDK is the module of the official A2A Go SDK these tests run against.
const SDK = "github.com/a2aproject/a2a-go/v2@v2.4.0"

var sdkCheck struct {
	once sync.Once
	err  error
}

// RequireSDK skips the test (or fails it when CI=true) when the Go SDK's
// module cannot be had: not in the module cache and not downloadable, say
// without network.
func RequireSDK(tb testing.TB) {
	tb.Helper()
	sdkCheck.once.Do(func() {
		out, err := exec.Command("go", "mod", "download", SDK).CombinedOutput()
		if err != nil {
			sdkCheck.err = fmt.Errorf("go mod download %s: %v\n%s", SDK, err, out)
		}
	})
	if sdkCheck.err != nil {
		SkipOrFailInCI(tb, fmt.Sprintf("the Go SDK is not available (%v); these tests need the Go module proxy once", sdkCheck.err))
	}
}
