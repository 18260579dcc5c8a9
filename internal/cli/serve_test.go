package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// proc is a running `parley serve`.
type proc struct {
	*testenv.Process
	addr string
}

// serve starts `parley serve` with args and waits for its card. It is
// killed when the test ends.
func serve(t testing.TB, args ...string) *proc {
	t.Helper()
	return serveAt(t, testkit.FreeAddr(t), args...)
}

// serveAt is serve listening on addr.
func serveAt(t testing.TB, addr string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(testkit.ParleyBinary(t), append([]string{"serve", "--addr", addr}, args...)...)
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}
	return &proc{Process: p, addr: addr}
}

func (p *proc) post(t testing.TB, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+p.addr+path, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/a2a+json")
	return p.do(t, req)
}

func (p *proc) getJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+p.addr+path, nil)
	req.Header.Set("A2A-Version", "1.0")
	return p.do(t, req)
}

func (p *proc) do(t testing.TB, req *http.Request) map[string]any {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: %v", req.URL, err)
	}
	return m
}

func field(m any, keys ...string) any {
	for _, k := range keys {
		mm, _ := m.(map[string]any)
		m = mm[k]
	}
	return m
}

func TestServePrintsWhereTheCardIs(t *testing.T) {
	p := serve(t, "--store", "memory")
	out := p.Stdout()
	if !strings.Contains(out, "http://"+p.addr+"/.well-known/agent-card.json") || !strings.Contains(out, "curl") {
		t.Fatalf("stdout:\n%s", out)
	}
	// stderr is copied by another goroutine: give it a moment.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.Stderr(), "authentication is off"); {
		if time.Now().After(deadline) {
			t.Fatalf("no warning about the shared scope:\n%s", p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "name") != "Parley echo agent" {
		t.Fatalf("card %v", card)
	}
	// Graceful stop on SIGTERM.
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
		if err := p.Err(); err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.Stderr())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

// TestServeUsageErrors: every mistake in the configuration of `parley
// serve` (a flag, the store, a file it names) is reported as itself, with
// its exit status, before the server listens: the tests run with the
// default --addr held (TestMain), as a server left running holds it.
func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	if defaultAddrHolder == "" {
		t.Fatalf("%s is not held: this test cannot show that the configuration is checked before listening", a2ahttp.DefaultAddr)
	}
	dir := t.TempDir()
	badKeys := filepath.Join(dir, "keys")
	badCard := filepath.Join(dir, "card.json")
	for file, text := range map[string]string{badKeys: "not a key\n", badCard: "{"} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--agent", "nope"}, 2, "nope"},
		{[]string{"serve", "--store", "mysql://x"}, 2, "want memory, sqlite:PATH or postgres://URL"},
		{[]string{"serve", "--store", "postgres://%zz"}, 2, "not a PostgreSQL URL"},
		{[]string{"serve", "--store", "sqlite:"}, 2, "needs a path"},
		{[]string{"serve", "--store", "sqlite:" + filepath.Join(missing, "x.db")}, 2, "the directory " + missing + " does not exist"},
		{[]string{"serve", "--lease", "10ms"}, 2, "--lease"},
		{[]string{"serve", "--store-timeout", "0s"}, 2, "--store-timeout"},
		{[]string{"serve", "--push-host-rate", "0"}, 2, "--push-host-rate"},
		{[]string{"serve", "--auth-token", "no-equals-sign"}, 2, "--auth-token"},
		{[]string{"serve", "--push-allow-host", "10.0.0.0/99"}, 2, "10.0.0.0/99"},
		{[]string{"serve", "--push-key-file", badKeys}, 2, "--push-key-file " + badKeys},
		{[]string{"serve", "--push-key-file", filepath.Join(missing, "keys")}, 1, "--push-key-file"},
		{[]string{"serve", "--auth-token", "a=b", "--extended-card", badCard}, 1, "--extended-card " + badCard},
		{[]string{"serve", "--auth-token", "a=b", "--extended-card", filepath.Join(missing, "card.json")}, 1, filepath.Join(missing, "card.json")},
		{[]string{"serve", "--tls-cert", filepath.Join(missing, "c.pem"), "--tls-key", filepath.Join(missing, "k.pem")}, 1, filepath.Join(missing, "c.pem")},
		{[]string{"serve", "extra-arg"}, 2, "extra-arg"},
		{[]string{"frobnicate"}, 2, "frobnicate"},
	} {
		_, errs, code := parley(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Contains(errs, "already in use") {
			t.Errorf("parley %s: exit %d, want %d and an error naming %q\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, errs)
		}
	}
}

func TestServeAuthAndExtendedCard(t *testing.T) {
	dir := t.TempDir()
	ext := filepath.Join(dir, "ext.json")
	os.WriteFile(ext, []byte(`{"name":"Secret agent","description":"more","supportedInterfaces":[{"url":"http://x/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"version":"2","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`), 0o600)
	p := serve(t, "--store", "memory", "--auth-token", "alice=tok-a", "--extended-card", ext)
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "capabilities", "extendedAgentCard") != true || field(card, "securitySchemes", "bearer", "httpAuthSecurityScheme", "scheme") != "Bearer" {
		t.Fatalf("card %v", card)
	}
	req, _ := http.NewRequest("GET", "http://"+p.addr+"/extendedAgentCard", nil)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("anonymous extended card: %d", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer tok-a")
	if got := p.do(t, req); field(got, "name") != "Secret agent" {
		t.Fatalf("extended card %v", got)
	}
}

// TestSQLiteSurvivesKill9 kills the server without warning: a task the
// client was told about is there after a restart on the same file, and a
// task whose execution was lost is FAILED with a status message.
func TestSQLiteSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "parley.db")
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+db)
	done := p.post(t, "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"keep me"}]}}`)
	doneID, _ := field(done, "task", "id").(string)
	if field(done, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("send: %v", done)
	}
	running := p.post(t, "/message:send", `{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"slow 60000"}]},"configuration":{"returnImmediately":true}}`)
	runID, _ := field(running, "task", "id").(string)
	parked := p.post(t, "/message:send", `{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`)
	parkedID, _ := field(parked, "task", "id").(string)
	p.Signal(syscall.SIGKILL)
	p.Wait()

	q := serve(t, "--agent", "conformance", "--store", "sqlite:"+db)
	got := q.getJSON(t, "/tasks/"+doneID)
	if field(got, "status", "state") != "TASK_STATE_COMPLETED" || field(got, "artifacts") == nil {
		t.Fatalf("completed task after kill -9: %v", got)
	}
	got = q.getJSON(t, "/tasks/"+runID)
	if field(got, "status", "state") != "TASK_STATE_FAILED" || field(got, "status", "message") == nil {
		t.Fatalf("lost task after restart: %v", got)
	}
	got = q.getJSON(t, "/tasks/"+parkedID)
	if field(got, "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("parked task after restart: %v", got)
	}
	// The parked task can still be continued.
	cont := q.post(t, "/message:send", fmt.Sprintf(`{"message":{"messageId":"m-4","taskId":%q,"role":"ROLE_USER","parts":[{"text":"more"}]}}`, parkedID))
	if field(cont, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("continue after restart: %v", cont)
	}
	// A resend of a message the first process accepted is idempotent.
	again := q.post(t, "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"keep me"}]}}`)
	if field(again, "task", "id") != doneID {
		t.Fatalf("resend after restart: %v", again)
	}
}
