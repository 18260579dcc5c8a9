package deps

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeGo: the README's Go snippets are a program and its test, whole
// files that work as written: written out as main.go and main_test.go,
// `go test` runs them; and the program, when its address is taken (held
// here, or by another process), exits with one line saying so, not a
// goroutine trace.
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
	for i, b := range blocks {
		if !strings.HasPrefix(string(b[1]), "package main\n") {
			t.Errorf("the README's Go block %d is not a whole file: it does not start with its package clause", i+1)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), blocks[0][1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main_test.go"), blocks[1][1], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "test", "-count=1", "./"+filepath.ToSlash(dir)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("go test of the README's snippets: %v\n%s", err, out)
	}

	bin := filepath.Join(t.TempDir(), "shout")
	if out, err := exec.Command("go", "build", "-o", bin, "./"+filepath.ToSlash(dir)).CombinedOutput(); err != nil {
		t.Fatalf("go build of the README's program: %v\n%s", err, out)
	}
	addr := regexp.MustCompile(`Addr: "([^"]+)"`).FindSubmatch(blocks[0][1])
	if addr == nil {
		t.Fatal("the README's program names no Addr")
	}
	if ln, err := net.Listen("tcp", string(addr[1])); err == nil {
		defer ln.Close() // else another process holds it: the case under test all the same
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err = exec.CommandContext(ctx, bin).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(string(out), "address already in use") || strings.Contains(string(out), "goroutine") {
		t.Errorf("the README's program with %s taken: %v; want an exit with one line saying the address is in use:\n%s", addr[1], err, out)
	}
}
