package deps

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeGo: the README's Go snippets are a program and its test, and
// both work: the first is written out as main.go, the second as a test in
// the same package (with the imports it needs), and `go test` runs it.
func TestReadmeGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's program (skipped with -short)")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(b, -1)
	if len(blocks) != 2 {
		t.Fatalf("the README has %d Go blocks, want 2 (the program and its test)", len(blocks))
	}
	// A directory under testdata, inside the module (so the module's own
	// packages and go.sum resolve), that go ./... does not visit.
	dir, err := os.MkdirTemp("testdata", "readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	test := `package main

import (
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/conformance"
	"parley.dev/parley/parleytest"
)

` + string(blocks[1][1])
	if err := os.WriteFile(filepath.Join(dir, "main.go"), blocks[0][1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "test", "-count=1", "./"+filepath.ToSlash(dir)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("go test of the README's snippets: %v\n%s", err, out)
	}
}
