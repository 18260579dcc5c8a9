package interop_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// jsPackages are the npm packages of internal/interop/js/package.json that the
// tests load.
var jsPackages = []string{"@a2a-js/sdk", "@bufbuild/protobuf", "@grpc/grpc-js", "express", "a2a-sdk-03", "@modelcontextprotocol/sdk"}

// TestMain says once, before the tests, when Node.js or the npm packages
// are missing, so that the JS interop tests are not skipped unnoticed
// (with CI=true they fail instead, each saying why).
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("CI") != "true" {
		if dir, err := filepath.Abs("js"); err == nil { // tests run in the package directory
			if why := testkit.MissingNode(dir, jsPackages...); why != "" {
				w, done := noticeWriter()
				fmt.Fprintf(w, "\nparley.dev/parley/internal/interop: SKIPPING the JS SDK interop tests: %s\n\n", why)
				done()
			}
		}
	}
	os.Exit(m.Run())
}

// noticeWriter returns where a notice is seen. A plain `go test ./...`
// discards everything a passing package writes, stderr included, unless
// -v is given; there the notice goes to the controlling terminal, when
// there is one, and to stderr otherwise. done releases the writer.
func noticeWriter() (w io.Writer, done func()) {
	if testing.Verbose() {
		return os.Stderr, func() {}
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return os.Stderr, func() {} // stderr is the terminal (go test run without package arguments)
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	return tty, func() { tty.Close() }
}
