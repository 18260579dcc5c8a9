package cli_test

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/cli"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestInspect: `parley inspect --no-open URL` prints a loopback page URL
// that serves the page, and stops on SIGTERM.
func TestInspect(t *testing.T) {
	cmd := exec.Command(testkit.ParleyBinary(t), "inspect", "http://127.0.0.1:9", "--no-open")
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley inspect", KillAtCleanup: true})
	line, err := p.WaitLine(func(l string) bool { return strings.HasPrefix(l, "Parley inspector: ") }, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	page := strings.TrimPrefix(line, "Parley inspector: ")
	if !strings.HasPrefix(page, "http://127.0.0.1:") || !strings.Contains(page, "#code=") || strings.Contains(page, "token") || !strings.Contains(page, "url=http%3A%2F%2F127.0.0.1%3A9") {
		t.Fatalf("page URL %q", page)
	}
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

func TestInspectUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0", "--no-open"}, "loopback address only"},
		{[]string{"127.0.0.1:8080", "--no-open"}, "did you mean http://127.0.0.1:8080"},
		{[]string{"http://127.0.0.1:1", "extra", "--no-open"}, `unexpected argument "extra"`},
	} {
		_, errs, code := runInProcess(append([]string{"inspect"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("inspect %q: exit %d, stderr %q; want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}
