package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// hook is a running `parley webhook`.
type hook struct {
	*testenv.Process
	url string
}

// listening starts the line on which `parley webhook` says where it listens.
const listening = "Listening for push notifications on "

// startWebhook starts `parley webhook` with args and waits until it
// listens. It is killed when the test ends.
func startWebhook(t *testing.T, args ...string) *hook {
	t.Helper()
	cmd := exec.Command(testkit.ParleyBinary(t), append([]string{"webhook"}, args...)...)
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley webhook", KillAtCleanup: true})
	line, err := p.WaitLine(func(l string) bool { return strings.HasPrefix(l, listening) }, 15*time.Second)
	if err != nil {
		t.Fatalf("parley webhook did not start: %v", err)
	}
	return &hook{Process: p, url: strings.Fields(strings.TrimPrefix(line, listening))[0]}
}

// output returns the lines the webhook printed about notifications.
func (h *hook) output() []string {
	var out []string
	for _, l := range h.Lines() {
		if !strings.HasPrefix(l, listening) {
			out = append(out, l)
		}
	}
	return out
}

// waitLines waits until the webhook printed lines for which done holds.
func (h *hook) waitLines(t *testing.T, what string, done func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines := h.output()
		if done(lines) {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook: waiting for %s; printed:\n%s\nstderr:\n%s", what, strings.Join(lines, "\n"), h.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sendWithHook(t *testing.T, p *proc, id, text, url, extra string) map[string]any {
	t.Helper()
	return p.post(t, "/message:send", fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]},
		"configuration":{"taskPushNotificationConfig":{"url":%q%s}}}`, id, text, url, extra))
}

// TestWebhookEndToEnd: `parley serve` delivers to `parley webhook`, which
// checks the credentials, fails the first deliveries on request (the
// sender retries them) and prints each notification readably or as JSON.
func TestWebhookEndToEnd(t *testing.T) {
	t.Parallel()
	wh := startWebhook(t, "--addr", "127.0.0.1:0", "--auth", "Bearer xyz", "--token", "tk-1", "--fail-first", "2")
	js := startWebhook(t, "--addr", "127.0.0.1:0", "--json")
	p := serve(t, "--agent", "conformance", "--store", "memory", "--push-allow-private")
	creds := `,"token":"tk-1","authentication":{"scheme":"Bearer","credentials":"xyz"}`
	task := sendWithHook(t, p, "m-1", "stream 2", wh.url+"hook", creds)
	id, _ := field(task, "task", "id").(string)
	sendWithHook(t, p, "m-2", "hello", js.url, "")

	want := []string{"task " + id + " SUBMITTED", "status " + id + " WORKING", "artifact " + id + " stream", "artifact " + id + " stream append",
		"status " + id + " COMPLETED"}
	lines := wh.waitLines(t, "five notifications", func(l []string) bool { return len(l) >= 5 })
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[2], `"chunk 0"`) || !strings.Contains(lines[3], "last-chunk") {
		t.Errorf("artifact lines do not show the chunks:\n%s", strings.Join(lines, "\n"))
	}
	for _, s := range []string{"delivery 1 answered 500", "delivery 2 answered 500"} {
		if !strings.Contains(wh.Stderr(), s) {
			t.Errorf("webhook stderr lacks %q:\n%s", s, wh.Stderr())
		}
	}

	jl := js.waitLines(t, "four JSON notifications", func(l []string) bool { return len(l) >= 4 })
	for i, key := range []string{"task", "statusUpdate", "artifactUpdate", "statusUpdate"} {
		var m map[string]any
		if err := json.Unmarshal([]byte(jl[i]), &m); err != nil || m[key] == nil || len(m) != 1 {
			t.Errorf("JSON line %d = %s (%v), want one %q member", i, jl[i], err, key)
		}
	}

	// Wrong or missing credentials: 401, nothing printed.
	for _, hdr := range []map[string]string{
		{},
		{"Authorization": "Bearer nope", "A2A-Notification-Token": "tk-1"},
		{"Authorization": "bearer xyz", "A2A-Notification-Token": "wrong"},
	} {
		req, _ := http.NewRequest("POST", wh.url, strings.NewReader(`{"task":{"id":"x"}}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("headers %v: status %d, want 401", hdr, resp.StatusCode)
		}
	}
	if n := len(wh.output()); n != 5 {
		t.Errorf("webhook printed %d lines, want 5", n)
	}
}

// TestServePushFlags: delivery is on by default and declared on the card;
// loopback webhooks are refused without -push-allow-private; -push=false
// takes the capability off the card and refuses the config operations.
func TestServePushFlags(t *testing.T) {
	t.Parallel()
	on := serve(t, "--store", "memory")
	if got := field(on.getJSON(t, "/.well-known/agent-card.json"), "capabilities", "pushNotifications"); got != true {
		t.Errorf("default card pushNotifications = %v, want true", got)
	}
	resp := sendWithHook(t, on, "m-1", "hello", "http://127.0.0.1:9/hook", "")
	if s := fmt.Sprint(resp); !strings.Contains(s, "INVALID_ARGUMENT") || !strings.Contains(s, "loopback") {
		t.Errorf("loopback webhook without -push-allow-private: %v, want InvalidParams naming loopback", resp)
	}

	off := serve(t, "--store", "memory", "--push=false")
	if got := field(off.getJSON(t, "/.well-known/agent-card.json"), "capabilities", "pushNotifications"); got == true {
		t.Errorf("card with -push=false declares pushNotifications")
	}
	task := off.post(t, "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	id, _ := field(task, "task", "id").(string)
	got := off.post(t, "/tasks/"+id+"/pushNotificationConfigs", `{"url":"https://hooks.example/x"}`)
	if !strings.Contains(fmt.Sprint(got), "PUSH_NOTIFICATION_NOT_SUPPORTED") {
		t.Errorf("create config with -push=false: %v, want PushNotificationNotSupportedError", got)
	}
	got = sendWithHook(t, off, "m-2", "hello", "https://hooks.example/x", "")
	if !strings.Contains(fmt.Sprint(got), "PUSH_NOTIFICATION_NOT_SUPPORTED") {
		t.Errorf("inline config with -push=false: %v, want PushNotificationNotSupportedError", got)
	}
}

// TestPushSurvivesKill9: notifications pending when the server is killed
// (the receiver is down) are all delivered, at least once, by the next
// server on the same SQLite file once the receiver is up.
func TestPushSurvivesKill9(t *testing.T) {
	t.Parallel()
	db := t.TempDir() + "/parley.db"
	down := testkit.FreeAddr(t) // nothing listens there yet
	url := "http://" + down + "/hook"
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+db, "--push-allow-private")
	want := map[string][]string{}
	for i, text := range []string{"hello", "stream 3", "hello", "input-required"} {
		task := sendWithHook(t, p, fmt.Sprintf("m-%d", i), text, url, `,"token":"tk"`)
		id, _ := field(task, "task", "id").(string)
		switch text {
		case "hello":
			want[id] = []string{"task:SUBMITTED", "status:WORKING", "artifact:echo", "status:COMPLETED"}
		case "stream 3":
			want[id] = []string{"task:SUBMITTED", "status:WORKING", "artifact:stream", "artifact:stream", "artifact:stream", "status:COMPLETED"}
		case "input-required":
			want[id] = []string{"task:SUBMITTED", "status:INPUT_REQUIRED"}
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.Stderr(), "delivery failed") {
		if time.Now().After(deadline) {
			t.Fatalf("no failed delivery logged:\n%s", p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Signal(syscall.SIGKILL)
	p.Wait()

	wh := startWebhook(t, "--addr", down, "--json", "--token", "tk")
	serve(t, "--agent", "conformance", "--store", "sqlite:"+db, "--push-allow-private")
	total := 0
	for _, w := range want {
		total += len(w)
	}
	lines := wh.waitLines(t, fmt.Sprintf("%d notifications", total), func(l []string) bool { return len(l) >= total })
	got := map[string][]string{}
	for _, l := range lines {
		var m map[string]map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		var id, k string
		switch {
		case m["task"] != nil:
			id, k = fmt.Sprint(m["task"]["id"]), "task:"+state(field(m["task"], "status", "state"))
		case m["statusUpdate"] != nil:
			id, k = fmt.Sprint(m["statusUpdate"]["taskId"]), "status:"+state(field(m["statusUpdate"], "status", "state"))
		case m["artifactUpdate"] != nil:
			id, k = fmt.Sprint(m["artifactUpdate"]["taskId"]), "artifact:"+fmt.Sprint(field(m["artifactUpdate"], "artifact", "artifactId"))
		}
		got[id] = append(got[id], k)
	}
	for id, w := range want {
		if g := got[id]; strings.Join(g, " ") != strings.Join(w, " ") {
			t.Errorf("task %s: notifications %v, want %v (in order)", id, g, w)
		}
	}
}

func state(v any) string { return strings.TrimPrefix(fmt.Sprint(v), "TASK_STATE_") }
