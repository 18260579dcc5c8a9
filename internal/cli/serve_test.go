package cli_test

import (
	"encoding/json"
	"errors"
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

func TestServeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--agent", "nope"},
		{"serve", "--store", "mysql://x"},
		{"serve", "--store", "postgres://%zz"},
		{"serve", "--lease", "10ms"},
		{"serve", "--store-timeout", "0s"},
		{"serve", "--auth-token", "no-equals-sign"},
		{"serve", "extra-arg"},
		{"frobnicate"},
	} {
		cmd := exec.Command(testkit.ParleyBinary(t), args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: exit %v, want 2\n%s", args, err, out)
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
