package cli_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestServeAuthTokenFile: `parley serve --auth-token-file` with tokens in
// a file and in $PARLEY_AUTH_TOKENS: none is on the process's command
// line; the file's and the environment's tokens are accepted; after the
// file is edited and the process gets SIGHUP, a new token is accepted
// and a removed one refused, without a restart; a file that no longer
// parses leaves the previous tokens in force. The client commands take
// their token from --token-file or $PARLEY_TOKEN.
func TestServeAuthTokenFile(t *testing.T) {
	const (
		alice = "tok-alice-FILE-1f0c9a"
		bob   = "tok-bob-FILE-77a2e4"
		carol = "tok-carol-ENV-5b31d0"
		dave  = "tok-dave-NEW-c0ffee"
	)
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte("# the team\nalice="+alice+"\n\n  bob = "+bob+"  \n"), 0o640); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), "serve", "--addr", addr, "--store", "memory", "--auth-token-file", file)
	cmd.Env = append(os.Environ(), "PARLEY_AUTH_TOKENS=carol="+carol)
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}
	base := "http://" + addr

	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{alice, bob, carol, dave} {
		if bytes.Contains(cmdline, []byte(tok)) {
			t.Errorf("/proc/PID/cmdline holds a token: %q", cmdline)
		}
	}
	// Standard error is read apart from the line serve waited for.
	if p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "mode 0640") }, 5*time.Second) != nil {
		t.Errorf("no warning about the group-readable token file:\n%s", p.Stderr())
	}

	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	for who, tok := range map[string]string{"alice": alice, "bob": bob, "carol": carol} {
		if st, _ := status(t, http.DefaultClient, base, bearer(tok)); st != http.StatusNotFound {
			t.Errorf("%s's token: HTTP %d, want 404 (authenticated, no such task)", who, st)
		}
	}
	for what, h := range map[string]map[string]string{"no token": nil, "unknown token": bearer(dave)} {
		if st, _ := status(t, http.DefaultClient, base, h); st != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", what, st)
		}
	}

	// The client commands: --token-file, and $PARLEY_TOKEN.
	clientFile := filepath.Join(dir, "client-token")
	os.WriteFile(clientFile, []byte(alice+"\n"), 0o600)
	if out, errs, code := parley(t, "send", base, "hello", "--token-file", clientFile); code != 0 {
		t.Errorf("parley send --token-file: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := parleyWithEnv(t, []string{"PARLEY_TOKEN=" + carol}, "send", base, "hello"); code != 0 {
		t.Errorf("parley send with PARLEY_TOKEN: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := parleyWithEnv(t, []string{"PARLEY_TOKEN=" + dave}, "send", base, "hello"); code == 0 {
		t.Errorf("parley send with an unknown PARLEY_TOKEN succeeded\n%s", errs)
	}
	if _, errs, code := parley(t, "send", base, "hello", "--token", alice, "--token-file", clientFile); code != 2 || !strings.Contains(errs, "give one") {
		t.Errorf("--token with --token-file: exit %d, %s; want a usage error", code, errs)
	}

	// Bob removed, dave added; SIGHUP swaps the set.
	if err := os.WriteFile(file, []byte("alice="+alice+"\ndave="+dave+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Signal(syscall.SIGHUP)
	waitStatus(t, base, bearer(bob), http.StatusUnauthorized, "bob's removed token")
	for who, tok := range map[string]string{"alice": alice, "carol": carol, "dave": dave} {
		if st, _ := status(t, http.DefaultClient, base, bearer(tok)); st != http.StatusNotFound {
			t.Errorf("after SIGHUP, %s's token: HTTP %d, want 404", who, st)
		}
	}

	// A file that does not parse is not swapped in.
	os.WriteFile(file, []byte("alice="+alice+"\nthis line has no principal\n"), 0o600)
	p.Signal(syscall.SIGHUP)
	if err := p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "bearer tokens not reloaded") }, 10*time.Second); err != nil {
		t.Fatalf("no error logged for a bad token file:\n%s", p.Stderr())
	}
	if strings.Contains(p.Stderr(), "this line has no principal") {
		t.Error("the log quotes the bad line (it may hold a token)")
	}
	if st, _ := status(t, http.DefaultClient, base, bearer(dave)); st != http.StatusNotFound {
		t.Errorf("dave after a bad reload: HTTP %d, want 404 (the previous set stays)", st)
	}
	for _, tok := range []string{alice, bob, carol, dave} {
		if strings.Contains(p.Stderr(), tok) || strings.Contains(p.Stdout(), tok) {
			t.Errorf("a token is in the server's output")
		}
	}
}

// waitStatus polls GET /tasks/nope until it answers want.
func waitStatus(t *testing.T, base string, h map[string]string, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := status(t, http.DefaultClient, base, h)
		if st == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: HTTP %d, want %d", what, st, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
