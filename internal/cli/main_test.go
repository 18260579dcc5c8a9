package cli_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"parley.dev/parley/a2ahttp"
)

// defaultAddrHolder says who holds a2ahttp.DefaultAddr, the default
// --addr of `parley serve`, while this package's tests run: "this test
// binary", or "another process".
var defaultAddrHolder string

// TestMain holds 127.0.0.1:8080 for the whole run, as a server the
// README's first command left running would: no test may depend on that
// port being free, and `parley serve` must report a mistake in its
// configuration before it tries to listen (TestServeUsageErrors). When
// something else holds the port already, the tests run against that.
func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", a2ahttp.DefaultAddr)
	switch {
	case err == nil:
		defaultAddrHolder = "this test binary"
	case errors.Is(err, syscall.EADDRINUSE):
		defaultAddrHolder = "another process"
		fmt.Fprintf(os.Stderr, "parley.dev/parley/internal/cli: %s is held by another process already: the tests run with it held\n", a2ahttp.DefaultAddr)
	default:
		fmt.Fprintf(os.Stderr, "parley.dev/parley/internal/cli: cannot hold %s: %v\n", a2ahttp.DefaultAddr, err)
	}
	code := m.Run()
	if ln != nil {
		ln.Close()
	}
	os.Exit(code)
}
