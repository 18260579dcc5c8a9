package testenv_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
)

// TestProcess: lines are awaited (WaitReady gives a READY line's URL),
// an early exit is reported with the output, and Stop ends a process that
// waits forever.
func TestProcess(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p := testenv.StartProcess(t, exec.Command(sh, "-c", "echo one; echo oops >&2; echo READY x; exec sleep 60"), nil)
	line, err := p.WaitLine(func(l string) bool { return strings.HasPrefix(l, "READY ") }, 10*time.Second)
	if err != nil || line != "READY x" {
		t.Fatalf("WaitLine = %q, %v", line, err)
	}
	if base, err := p.WaitReady(10 * time.Second); err != nil || base != "x" {
		t.Errorf("WaitReady = %q, %v", base, err)
	}
	if got := p.Lines(); !slices.Equal(got, []string{"one", "READY x"}) {
		t.Errorf("Lines() = %q", got)
	}
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if !strings.Contains(p.Stderr(), "oops") {
		t.Errorf("Stderr() = %q", p.Stderr())
	}

	q := testenv.StartProcess(t, exec.Command(sh, "-c", "echo partial; printf tail; exit 3"), &testenv.ProcessOptions{Name: "quitter"})
	if _, err := q.WaitLine(func(string) bool { return false }, 10*time.Second); err == nil || !strings.Contains(err.Error(), "quitter exited") {
		t.Fatalf("WaitLine on an exited process = %v", err)
	}
	if got := q.Stdout(); got != "partial\ntail\n" {
		t.Errorf("Stdout() = %q, want the last line without its newline too", got)
	}
}
