package testkit

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
)

// FreeAddr returns "127.0.0.1:PORT" for a loopback port nothing listened
// on a moment ago: a place for a server to start, or a dead address.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// OnFreeAddr calls try with a free address, up to three times, and returns
// what the first success returns: an address found free can be taken by
// someone else before the server binds it. It fails the test, naming
// what, after three failures.
func OnFreeAddr(tb testing.TB, what string, try func(addr string) (string, error)) string {
	tb.Helper()
	var lastErr error
	for range 3 {
		out, err := try(FreeAddr(tb))
		if err == nil {
			return out
		}
		lastErr = err
	}
	tb.Fatalf("%s did not start: %v", what, lastErr)
	return ""
}

// ModuleRoot returns the directory holding Parley's go.mod, found from the
// directory the test runs in.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// ParleyBinary builds cmd/parley, once per test binary, and returns its
// path. The binary stays in a temporary directory after the tests.
func ParleyBinary(tb testing.TB) string {
	tb.Helper()
	return testenv.GoBuild(tb, ModuleRoot(tb), "./cmd/parley")
}

// NPMInstall is the command, run in the module root, that installs the
// npm packages of the JavaScript interop tests into internal/interop/js/node_modules.
const NPMInstall = "npm ci --prefix internal/interop/js --no-audit --no-fund"

// MissingNode says what is missing for tests that run Node.js on the
// scripts of jsDir (the module's internal/interop/js): node on PATH, or one of pkgs
// (npm package names) in jsDir/node_modules; and how to install it. It
// returns "" when nothing is missing.
func MissingNode(jsDir string, pkgs ...string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH: install Node.js >= 20, then run `" + NPMInstall + "` in the module root"
	}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", pkg, "package.json")); err != nil {
			return fmt.Sprintf("the npm package %s is not installed in %s: run `%s` in the module root",
				pkg, filepath.Join(jsDir, "node_modules"), NPMInstall)
		}
	}
	return ""
}

// RequireNode returns the path of node, after checking that each of pkgs
// is installed in jsDir/node_modules; anything missing skips the test
// with how to install it, or fails it when CI=true (see MissingNode and
// testenv.SkipOrFailInCI).
func RequireNode(tb testing.TB, jsDir string, pkgs ...string) string {
	tb.Helper()
	if why := MissingNode(jsDir, pkgs...); why != "" {
		testenv.SkipOrFailInCI(tb, why)
	}
	node, err := exec.LookPath("node")
	if err != nil { // gone since MissingNode looked
		testenv.SkipOrFailInCI(tb, err.Error())
	}
	return node
}

// StartNodeServer runs `node script PORT` in dir on a free loopback port
// and waits for the line "READY BASE_URL" on its standard output and for
// the agent card at that URL, then returns the URL. The server is stopped
// when the test ends.
func StartNodeServer(tb testing.TB, node, dir, script string) string {
	tb.Helper()
	name := "node " + script
	return OnFreeAddr(tb, name, func(addr string) (string, error) {
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(node, script, port)
		cmd.Dir = dir
		p := testenv.StartProcess(tb, cmd, &testenv.ProcessOptions{Name: name})
		base, err := p.WaitReady(20 * time.Second)
		if err != nil {
			p.Stop()
			return "", err
		}
		resp, err := http.Get(base + "/.well-known/agent-card.json")
		if err != nil {
			p.Stop()
			return "", err
		}
		resp.Body.Close()
		return base, nil
	})
}
