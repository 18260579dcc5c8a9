package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/cli"
	"parley.dev/parley/internal/testkit"
)

// TestServeProxy: `parley serve --proxy` in front of another `parley
// serve` (with authentication on both sides): the upstream's skills on the
// proxy's card, a stream relayed, cancel forwarded, and push notifications
// sent by the proxy, which the upstream never had.
func TestServeProxy(t *testing.T) {
	t.Parallel()
	up := serve(t, "--agent", "conformance", "--store", "memory", "--push=false", "--auth-token", "proxy=up-secret")
	px := serve(t, "--proxy", "http://"+up.addr, "--proxy-token", "up-secret", "--store", "memory", "--push-allow-private")
	card := px.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "name") != "Parley conformance agent" || field(card, "capabilities", "pushNotifications") != true {
		t.Fatalf("proxy card %v: want the upstream's name, push notifications", card)
	}
	skills, _ := field(card, "skills").([]any)
	if len(skills) != 1 || field(skills[0], "id") != "echo" {
		t.Fatalf("proxy skills %v, want the upstream's", skills)
	}

	wh := startWebhook(t, "--addr", "127.0.0.1:0", "--json")
	task := sendWithHook(t, px, "m-1", "stream 2", wh.url, "")
	if field(task, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("answer %v, want COMPLETED", task)
	}
	lines := wh.waitLines(t, "the task's notifications", func(l []string) bool {
		return len(l) > 0 && strings.Contains(l[len(l)-1], "TASK_STATE_COMPLETED")
	})
	if !strings.Contains(strings.Join(lines, "\n"), `"chunk 1"`) {
		t.Errorf("notifications lack the relayed chunks:\n%s", strings.Join(lines, "\n"))
	}

	// Cancel: the proxy's task and the upstream's both end CANCELED.
	m := px.post(t, "/message:send", `{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"slow 20000"}]},"configuration":{"returnImmediately":true}}`)
	id, _ := field(m, "task", "id").(string)
	waitState(t, px, id, "TASK_STATE_WORKING")
	if c := px.post(t, "/tasks/"+id+":cancel", `{}`); field(c, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v", c)
	}
	list := up.getJSONAuth(t, "/tasks", "up-secret")
	tasks, _ := field(list, "tasks").([]any)
	var slow any
	for _, tk := range tasks {
		if hist, _ := field(tk, "history").([]any); len(hist) > 0 && strings.Contains(fmtJSON(hist[0]), "slow 20000") {
			slow = tk
		}
	}
	if field(slow, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("upstream task %v, want CANCELED", slow)
	}
}

// waitState polls the task until it is in state.
func waitState(t *testing.T, p *proc, id, state string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		if field(p.getJSON(t, "/tasks/"+id), "status", "state") == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never reached %s", id, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeProxyUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--proxy", "127.0.0.1:1"}, "did you mean http://127.0.0.1:1"},
		{[]string{"--proxy", "http://127.0.0.1:1", "--exec", "cat"}, "give one of them"},
		{[]string{"--proxy", "http://127.0.0.1:1", "--proxy-binding", "soap"}, `--proxy-binding "soap"`},
	} {
		_, errs, code := runInProcess(append([]string{"serve", "--store", "memory"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
	// An upstream that cannot be reached stops the server at start.
	down := "http://" + testkit.FreeAddr(t) // nothing listens there any more
	_, errs, code := runInProcess("serve", "--store", "memory", "--addr", "127.0.0.1:0", "--proxy", down)
	if code != cli.ExitError || !strings.Contains(errs, "--proxy "+down) {
		t.Errorf("unreachable upstream: exit %d, stderr %q", code, errs)
	}
}

// getJSONAuth is getJSON with a bearer token.
func (p *proc) getJSONAuth(t *testing.T, path, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+p.addr+path, nil)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	return p.do(t, req)
}

// fmtJSON is v as JSON.
func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
