package cli_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/inspect"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestInspectBrowserGetsCode: `parley inspect` opens the browser (here a
// stand-in xdg-open that records its arguments) with a one-time code and
// no token; the code buys the session cookie once and is refused the
// second time; the cookie authorises the API.
func TestInspectBrowserGetsCode(t *testing.T) {
	dir := t.TempDir()
	argvFile := filepath.Join(dir, "argv")
	opener := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGV_FILE.tmp\" && mv \"$ARGV_FILE.tmp\" \"$ARGV_FILE\"\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(opener), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testkit.ParleyBinary(t), "inspect", "http://127.0.0.1:9")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "ARGV_FILE="+argvFile)
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley inspect", KillAtCleanup: true})
	var argv []byte
	if err := p.WaitUntil(func() bool { b, err := os.ReadFile(argvFile); argv = b; return err == nil }, 15*time.Second); err != nil {
		t.Fatalf("the browser was not opened: %v\n%s", err, p.Stderr())
	}
	args := strings.Fields(string(argv))
	if len(args) != 1 {
		t.Fatalf("xdg-open arguments %q: want the URL alone", argv)
	}
	u, err := url.Parse(args[0])
	if err != nil {
		t.Fatal(err)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	code := frag.Get("code")
	if u.Host == "" || code == "" || u.RawQuery != "" || len(frag) != 2 || frag.Get("url") != "http://127.0.0.1:9" {
		t.Fatalf("the browser's URL %q: want only a code and the target, in the fragment", args[0])
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID()))
	if strings.Contains(string(cmdline), code) {
		t.Errorf("the code is on parley inspect's own command line")
	}

	base := "http://" + u.Host
	exchange := func() *http.Response {
		resp, err := http.Post(base+inspect.SessionPath, "text/plain", strings.NewReader(code))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := exchange()
	if first.StatusCode != http.StatusNoContent || len(first.Cookies()) != 1 || !first.Cookies()[0].HttpOnly {
		t.Fatalf("first use of the code: %d %q", first.StatusCode, first.Header.Get("Set-Cookie"))
	}
	if again := exchange(); again.StatusCode != http.StatusForbidden {
		t.Errorf("second use of the code: %d, want 403", again.StatusCode)
	}
	info := func(c *http.Cookie) int {
		req, _ := http.NewRequest("GET", base+"/api/info", nil)
		req.Header.Set(inspect.TokenHeader, inspect.SessionMarker)
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := info(first.Cookies()[0]); st != http.StatusOK {
		t.Errorf("API with the cookie: %d, want 200", st)
	}
	if st := info(nil); st != http.StatusForbidden {
		t.Errorf("API without the cookie: %d, want 403", st)
	}
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}
