package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestServeLimitFlags: the limit flags are in `parley serve -h` and reach
// the core: an over-limit send is refused with InvalidParams naming the
// limit, and a second open task over -max-open-tasks with the quota error.
func TestServeLimitFlags(t *testing.T) {
	help, _ := exec.Command(testkit.ParleyBinary(t), "serve", "-h").CombinedOutput()
	for _, flag := range []string{"-max-parts", "-max-id-bytes", "-max-metadata-bytes", "-max-push-configs",
		"-max-push-url-bytes", "-max-push-secret-bytes", "-max-open-tasks", "-task-rate", "-task-burst"} {
		if !strings.Contains(string(help), flag+" ") {
			t.Errorf("serve -h does not list %s:\n%s", flag, help)
		}
	}

	addr := testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), "serve", "--addr", addr, "--store", "memory", "--agent", "conformance",
		"--max-parts", "2", "--max-open-tasks", "1")
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}
	n := 0
	send := func(parts string) (int, map[string]any) {
		t.Helper()
		n++
		body := `{"message":{"messageId":"limits-` + strconv.Itoa(n) + `","role":"ROLE_USER","parts":[` + parts + `]}}`
		req, _ := http.NewRequest("POST", "http://"+addr+"/message:send", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/a2a+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %s: %v", b, err)
		}
		return resp.StatusCode, m
	}
	status, m := send(`{"text":"a"},{"text":"b"},{"text":"c"}`)
	msg, _ := m["error"].(map[string]any)["message"].(string)
	if status != 400 || !strings.Contains(msg, "message.parts") || !strings.Contains(msg, "maxParts") {
		t.Errorf("three parts with --max-parts 2: %d %v", status, m)
	}
	if status, m := send(`{"text":"input-required"}`); status != 200 {
		t.Fatalf("first open task: %d %v", status, m)
	}
	status, m = send(`{"text":"input-required"}`)
	if b, _ := json.Marshal(m); status != 400 || !strings.Contains(string(b), `"quota":"maxOpenTasks"`) {
		t.Errorf("second open task with --max-open-tasks 1: %d %s", status, b)
	}
}
