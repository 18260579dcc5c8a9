package cli_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStartup: the start-up log names the build (one info line) and
// says that private webhooks are refused unless --push-allow-private; the
// banner's curl sends a fresh messageId on every run, so running it twice
// makes two tasks.
func TestServeStartup(t *testing.T) {
	t.Parallel()
	p := serve(t, "--store", "memory")
	// stderr is a pipe of its own: the banner on stdout can arrive first.
	p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "msg=serving") }, 10*time.Second)
	logs := p.Stderr()
	contains(t, "serve log", logs, "level=INFO msg=parley version=", " commit=", " go=go1.",
		"webhooks on private, loopback and link-local addresses are refused", "--push-allow-private")
	if strings.Contains(logs, " -auth-token") {
		t.Errorf("serve log names a flag with one dash:\n%s", logs)
	}
	banner := p.Stdout()
	contains(t, "banner", banner, `"messageId":"m-'$(date +%s%N)'"`)
	if strings.Contains(banner, `"m-1"`) {
		t.Errorf("banner's curl has a fixed messageId:\n%s", banner)
	}

	// Run the banner's curl command twice through the shell (with a
	// stand-in for curl that prints the body it was given): two runs, two
	// messageIds.
	start := strings.Index(banner, "curl -s")
	end := strings.Index(banner, "/message:send")
	if start < 0 || end < 0 {
		t.Fatalf("no curl in the banner:\n%s", banner)
	}
	line := strings.ReplaceAll(banner[start:end+len("/message:send")], "\\\n", " ")
	fake := `curl() { while [ $# -gt 0 ]; do if [ "$1" = -d ]; then printf '%s\n' "$2"; fi; shift; done; }; `
	var bodies []string
	for range 2 {
		out, err := exec.Command("sh", "-c", fake+line).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", line, err)
		}
		bodies = append(bodies, string(out))
	}
	if bodies[0] == bodies[1] || !strings.Contains(bodies[0], `"messageId":"m-`) {
		t.Errorf("the banner's curl sends %q then %q: want two different messageIds", bodies[0], bodies[1])
	}
}

// TestServeStartErrors: the mistakes made on a first start are named with
// their flag: an --addr already in use, a --store whose directory does not
// exist, an --extended-card without authentication.
func TestServeStartErrors(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	card := filepath.Join(dir, "extended.json")
	if err := os.WriteFile(card, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "dir")
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--addr", busy.Addr().String(), "--store", "memory"}, 1,
			[]string{"--addr " + busy.Addr().String() + ": address already in use"}},
		{[]string{"--addr", "127.0.0.1:0", "--store", "sqlite:" + filepath.Join(missing, "x.db")}, 2,
			[]string{"the directory " + missing + " does not exist"}},
		{[]string{"--addr", "127.0.0.1:0", "--store", "memory", "--extended-card", card}, 2,
			[]string{"--extended-card " + card, "only to authenticated callers", "--auth-token NAME=TOKEN"}},
		{[]string{"--log-level", "loud"}, 2, []string{"want debug, info, warn or error"}},
	} {
		_, errs := mustRun(t, tc.code, append([]string{"serve"}, tc.args...)...)
		contains(t, strings.Join(tc.args, " "), errs, tc.want...)
	}
}

// TestPushCreatePrivateHint: a webhook refused for its loopback address
// gets a hint that names --push-allow-private; the exit status is still
// the A2A error's.
func TestPushCreatePrivateHint(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	_, errs := mustRun(t, 1, "push", "create", url, id, "--url", "http://127.0.0.1:9/hook")
	contains(t, "push create stderr", errs, "loopback", "hint:", "--push-allow-private")
}
