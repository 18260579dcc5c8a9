// Package peer starts the tests' peers: a command of this module, built
// once per test binary and run as a child process that prints
// "READY BASE_URL" when it serves and stops when its standard input
// closes.
package peer

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
)

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
	dir := ""
	if strings.HasPrefix(pkg, parleyModule+"/") && !strings.HasPrefix(pkg, thisModule+"/") {
		// Parley's own commands are built in Parley's module, with its
		// go.sum: this module lists only what its own packages import.
		root, err := parleyRoot()
		if err != nil {
			tb.Fatal(err)
		}
		dir = root
	}
	return testenv.GoBuild(tb, dir, pkg)
}

// parleyRoot returns the directory of Parley's module, asked of the go
// tool once.
var parleyRoot = sync.OnceValues(func() (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", parleyModule).Output()
	if err != nil {
		return "", fmt.Errorf("finding module %s: %v", parleyModule, err)
	}
	return strings.TrimSpace(string(root)), nil
})

// Start runs the command bin with args, waits for its READY line and
// returns the base URL it printed. The child stops when the test ends,
// at the close of its standard input; its output is logged if the test
// failed.
func Start(tb testing.TB, bin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	p := testenv.StartProcess(tb, cmd, nil)
	// Cleanups run last first: this one, before the process's own (which
	// interrupts a child still running, and kills it 5 s later).
	tb.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.Exited():
		case <-time.After(10 * time.Second):
		}
	})
	base, err := p.WaitReady(30 * time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	return base
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
		testenv.SkipOrFailInCI(tb, fmt.Sprintf("the Go SDK is not available (%v); these tests need the Go module proxy once", sdkCheck.err))
	}
}
