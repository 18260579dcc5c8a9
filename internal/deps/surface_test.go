package deps

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxPublic bounds Parley's public surface: every importable package is an
// API promise, so only the ones a user imports on purpose are public
// (ARCHITECTURE.md lists them); the rest lives under internal/.
const maxPublic = 16

// TestPublicSurface: at most maxPublic importable packages outside
// internal/ (commands aside), each with a package doc and at least one
// runnable example.
func TestPublicSurface(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}\t{{.Name}}\t{{if .Doc}}doc{{end}}\t{{range .TestGoFiles}}{{.}} {{end}}{{range .XTestGoFiles}}{{.}} {{end}}\t{{.Dir}}",
		"parley.dev/parley/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var public []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		path, name, doc, tests, dir := f[0], f[1], f[2], f[3], f[4]
		if name == "main" || strings.Contains(path+"/", "/internal/") {
			continue
		}
		public = append(public, path)
		if doc == "" {
			t.Errorf("%s has no package doc", path)
		}
		if !hasExample(t, dir, strings.Fields(tests)) {
			t.Errorf("%s has no runnable example (func Example… in a _test.go file)", path)
		}
	}
	if len(public) > maxPublic {
		t.Errorf("%d public packages, more than %d:\n%s", len(public), maxPublic, strings.Join(public, "\n"))
	}
}

// hasExample reports whether one of the test files in dir declares an
// example function.
func hasExample(t *testing.T, dir string, files []string) bool {
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\nfunc Example")) {
			return true
		}
	}
	return false
}
