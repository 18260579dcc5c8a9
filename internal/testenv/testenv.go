// Package testenv holds the test helpers that need nothing of Parley's
// own packages: building a command with the go tool (GoBuild), child
// processes stopped when the test ends (StartProcess), skipping a test
// whose prerequisite is missing, or failing it in CI (SkipOrFailInCI),
// a buffer for output written and read at once (SyncBuffer), gzip
// data that inflates far beyond its size (GzipBomb), and the module's Go
// sources, parsed, for the tests of the tree itself (GoSources). Tests
// that must not link Parley's a2a package (the Go SDK interop tests: the
// SDK's protos share their names with Parley's, so a test binary with
// both panics at init) use them directly; testkit builds on them.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// SkipOrFailInCI skips a test whose prerequisite (Node.js, an npm
// package, a database, the network) is missing, or fails it when
// CI=true, where every prerequisite is expected.
func SkipOrFailInCI(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true but the test cannot run: %s", why)
	}
	tb.Skip(why)
}

// builds holds one *build per directory and package built by GoBuild.
var builds sync.Map

type build struct {
	once sync.Once
	path string
	err  error
}

// GoBuild builds the main package pkg (an import path, or a directory
// relative to dir) with `go build` run in dir ("" for the test's own
// directory), once per test binary for each dir and pkg, and returns the
// binary's path. The binary stays in a temporary directory after the
// tests. A build that fails fails the test.
func GoBuild(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	v, _ := builds.LoadOrStore([2]string{dir, pkg}, new(build))
	b := v.(*build)
	b.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("go tool not on PATH: %w", err)
			return
		}
		tmp, err := os.MkdirTemp("", "parley-test")
		if err != nil {
			b.err = err
			return
		}
		bin := filepath.Join(tmp, filepath.Base(pkg))
		cmd := exec.Command(goTool, "build", "-o", bin, pkg)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			return
		}
		b.path = bin
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// SyncBuffer is an io.Writer whose text may be read while another
// goroutine writes to it, such as the output of a child process or a
// server's log.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
