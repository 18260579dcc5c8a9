package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// keyedServer is a `parley serve` started with its own environment.
type keyedServer struct {
	*testenv.Process
	base string
}

// serveKeyed starts `parley serve` with args and the environment variables
// in env (PARLEY_PUSH_KEY is removed from the inherited environment). With
// wantStart false it waits for the process to exit instead and returns it.
func serveKeyed(t *testing.T, env []string, wantStart bool, args ...string) *keyedServer {
	t.Helper()
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), append([]string{"serve", "--addr", addr}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_PUSH_KEY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve"})
	if !wantStart {
		select {
		case <-p.Exited():
		case <-time.After(15 * time.Second):
			t.Fatal("parley serve did not exit")
		}
		return &keyedServer{Process: p}
	}
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v\n%s", err, p.Stderr())
	}
	// The log has a pipe of its own and may lag the banner.
	p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "msg=serving") }, 10*time.Second)
	return &keyedServer{Process: p, base: "http://" + addr}
}

// call sends a REST request and decodes the JSON answer.
func (s *keyedServer) call(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/a2a+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %v", method, path, resp.Status, m)
	}
	return m
}

// newKey runs `parley serve -new-push-key` and returns the key it prints.
func newKey(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(testkit.ParleyBinary(t), "serve", "-new-push-key").Output()
	if err != nil {
		t.Fatalf("parley serve -new-push-key: %v", err)
	}
	key := strings.TrimSpace(string(out))
	if len(key) != 44 || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("parley serve -new-push-key printed %q, want one base64 key", out)
	}
	return key
}

// TestServePushKeys runs the operator's path through the real command: a
// key made by -new-push-key, a webhook that receives the decrypted
// credentials while the database holds none in plain text, a restart
// without the key that is refused, and a rotation through PARLEY_PUSH_KEY.
func TestServePushKeys(t *testing.T) {
	const cred, token, hookPath = "CRED-E2E-0123456789", "TOKEN-E2E-0123456789", "/HOOK-E2E-0123456789"
	auth := make(chan string, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case auth <- r.Header.Get("Authorization") + " | " + r.Header.Get("A2A-Notification-Token"):
		default:
		}
	}))
	defer hook.Close()

	dir := t.TempDir()
	db := filepath.Join(dir, "parley.db")
	keyA, keyB := newKey(t), newKey(t)
	keyFile := filepath.Join(dir, "push.key")
	if err := os.WriteFile(keyFile, []byte(keyA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--agent", "conformance", "--store", "sqlite:" + db, "--push-allow-private"}

	p := serveKeyed(t, nil, true, append(common, "--push-key-file", keyFile)...)
	parked := p.call(t, "POST", "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`)
	task, _ := parked["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	created := p.call(t, "POST", "/tasks/"+taskID+"/pushNotificationConfigs", fmt.Sprintf(
		`{"url":%q,"token":%q,"authentication":{"scheme":"Bearer","credentials":%q}}`, hook.URL+hookPath, token, cred))
	configID, _ := created["id"].(string)
	select {
	case got := <-auth:
		if want := "Bearer " + cred + " | " + token; got != want {
			t.Errorf("the webhook got %q, want %q", got, want)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the webhook got no notification")
	}
	p.Stop()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "parley.db" && !bytes.Contains(b, []byte(taskID)) {
			t.Error("the task id is not in the database: the search looks in the wrong place")
		}
		if bytes.Contains(b, []byte(cred)) || bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte(hookPath)) {
			t.Errorf("%s holds the push credentials or the webhook URL in plain text", e.Name())
		}
		if fi, _ := e.Info(); strings.HasPrefix(e.Name(), "parley.db") && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", e.Name(), fi.Mode().Perm())
		}
	}

	// Without the key: refused, with the way to give it.
	q := serveKeyed(t, nil, false, common...)
	if q.Err() == nil || !strings.Contains(q.Stderr(), "-push-key-file") || !strings.Contains(q.Stderr(), "PARLEY_PUSH_KEY") {
		t.Errorf("parley serve without the key: %v\n%s\nwant a refusal saying how to give the key", q.Err(), q.Stderr())
	}

	// Rotation: the new key first, the old one after it.
	r := serveKeyed(t, []string{"PARLEY_PUSH_KEY=" + keyB + "," + keyA}, true, common...)
	if !strings.Contains(r.Stderr(), "configs=1") {
		t.Errorf("the rotation did not encrypt the configuration again:\n%s", r.Stderr())
	}
	r.Stop()
	n := serveKeyed(t, []string{"PARLEY_PUSH_KEY=" + keyB}, true, common...)
	got := n.call(t, "GET", "/tasks/"+taskID+"/pushNotificationConfigs/"+configID, "")
	if a, _ := got["authentication"].(map[string]any); a["credentials"] != cred || got["token"] != token || got["url"] != hook.URL+hookPath {
		t.Errorf("config read with the new key alone = %v", got)
	}
}
