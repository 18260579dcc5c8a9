package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// parley runs the built binary with args and returns its stdout, stderr
// and exit code.
func parley(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return parleyWithEnv(t, nil, args...)
}

// parleyWithEnv runs parley like parley does, with env added to its
// environment.
func parleyWithEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.ParleyBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("parley %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// mustRun runs parley and fails the test unless it exits with want.
func mustRun(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	out, errs, code := parley(t, args...)
	if code != want {
		t.Fatalf("parley %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

// jsonOf decodes the first line of out.
func jsonOf(t *testing.T, out string) map[string]any {
	t.Helper()
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return m
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func TestCardCommand(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "card", url)
	contains(t, "card", out, "Parley conformance agent", "1. JSONRPC", "2. HTTP+JSON", "3. GRPC",
		"Capabilities: streaming, push notifications", "Skill Examples: ", `"stream 3"`)
	if strings.Contains(out, "not spoken by this build") {
		t.Errorf("an interface is marked as not spoken:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes in piped output:\n%s", out)
	}
	// --json: the card as served; flags after the URL; a card URL works too.
	out, _ = mustRun(t, 0, "card", url+"/.well-known/agent-card.json", "--json")
	if m := jsonOf(t, out); m["name"] != "Parley conformance agent" || m["supportedInterfaces"] == nil {
		t.Fatalf("card --json: %v", m)
	}
}

func TestCardBadInput(t *testing.T) {
	t.Parallel()
	// Unreachable host: exit 3.
	_, errs := mustRun(t, 3, "card", "http://"+testkit.FreeAddr(t))
	contains(t, "stderr", errs, "cannot connect")

	// A web page, not an agent: exit 1.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><html><body>Welcome</body></html>"))
	}))
	defer html.Close()
	_, errs = mustRun(t, 1, "card", html.URL)
	contains(t, "stderr", errs, "not a JSON object", "text/html")

	// A web server without a card: its HTML error page is named by its
	// title, not dumped, with advice.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<!DOCTYPE HTML>\n<html>\n<head><title>Error\n response</title></head><body><h1>Not here</h1>" + strings.Repeat("<p>filler</p>", 50) + "</body></html>"))
	}))
	defer page.Close()
	_, errs = mustRun(t, 3, "card", page.URL)
	contains(t, "stderr", errs, `an HTML page titled "Error response"`, "is it an A2A agent's base URL?")
	if strings.Contains(errs, "<") || strings.Count(errs, "\n") > 1 {
		t.Errorf("the page leaks into the message: %q", errs)
	}

	// Unreachable: one line naming the URL once, with the system's cause.
	dead := "http://" + testkit.FreeAddr(t)
	_, errs = mustRun(t, 3, "send", dead, "hi")
	contains(t, "stderr", errs, "cannot connect to "+dead+"/.well-known/agent-card.json: connection refused (is the agent running")
	if n := strings.Count(errs, dead); n != 1 || len(errs) > 160 {
		t.Errorf("want one short line naming the URL once, got %d mentions in %q", n, errs)
	}
	// TLS to a cleartext server says so.
	_, errs = mustRun(t, 3, "card", strings.Replace(page.URL, "http://", "https://", 1))
	contains(t, "stderr", errs, "does not speak TLS (use an http:// URL)")

	// A missing task ID is named alone.
	_, errs = mustRun(t, 2, "task", "get", page.URL)
	contains(t, "stderr", errs, "missing the task ID")
	if strings.Contains(errs, "agent URL") {
		t.Errorf("blames the URL that was given: %q", errs)
	}
	_, errs = mustRun(t, 2, "push", "get", page.URL)
	contains(t, "stderr", errs, "missing the task ID and the configuration ID")

	cards := map[string]string{
		// REQUIRED members missing.
		"/missing/.well-known/agent-card.json": `{"name":"half a card","supportedInterfaces":[{"url":"http://x/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		// A v0.3 card.
		"/old/.well-known/agent-card.json":        `{"name":"old","description":"d","url":"http://x/","protocolVersion":"0.3","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
		"/old-no-url/.well-known/agent-card.json": `{"name":"old","description":"d","protocolVersion":"0.3","version":"1"}`,
		// Not even JSON syntax.
		"/broken/.well-known/agent-card.json": `{"name": "broken",`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := cards[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	_, errs = mustRun(t, 1, "card", srv.URL+"/missing")
	contains(t, "stderr", errs, "REQUIRED", "description")
	// A v0.3 card is read (docs/versions.md); one without a url cannot be.
	out, _ := mustRun(t, 0, "card", srv.URL+"/old")
	contains(t, "stdout", out, "A2A Versions: 0.3 (no v1.0 interface")
	_, errs = mustRun(t, 1, "card", srv.URL+"/old-no-url")
	contains(t, "stderr", errs, "0.3")
	_, errs = mustRun(t, 1, "card", srv.URL+"/broken")
	contains(t, "stderr", errs, "not a JSON object")
	_, errs = mustRun(t, 3, "card", srv.URL+"/nothing-here") // no card at the reference
	contains(t, "stderr", errs, "404")
	// --json reports the error as JSON too.
	out, _ = mustRun(t, 1, "card", "--json", srv.URL+"/missing")
	if m := jsonOf(t, out); m["error"] == nil {
		t.Fatalf("card --json error: %v", m)
	}
}

func TestSendCommand(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, url string)
	}{
		{"blocking", sendBlocking},
		{"message reply", sendMessageReply},
		{"stream", sendStream},
		{"async then wait", sendAsyncThenWait},
		{"continue a task", sendContinueTask},
		{"file and data parts", sendFileAndDataParts},
		{"timeout", sendTimeout},
		{"version", sendVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, url)
		})
	}
}

// sendBlocking checks that send waits for the task and prints it, on
// every binding.
func sendBlocking(t *testing.T, url string) {
	out, _ := mustRun(t, 0, "send", url, "hello")
	contains(t, "send", out, "COMPLETED", "Artifact ID: echo", "Artifact:\n  hello\n\n")
	// Flags before the URL, every binding.
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		out, _ = mustRun(t, 0, "send", "--binding", b, "--json", url, "hello "+b)
		m := jsonOf(t, out)
		task, _ := m["task"].(map[string]any)
		st, _ := task["status"].(map[string]any)
		if st["state"] != "TASK_STATE_COMPLETED" {
			t.Fatalf("send --binding %s --json: %v", b, m)
		}
	}
}

// sendMessageReply checks that send prints the agent's direct reply.
func sendMessageReply(t *testing.T, url string) {
	out, _ := mustRun(t, 0, "send", url, "message")
	contains(t, "send", out, "Role: agent\n")
}

// sendStream checks that send --stream shows the events, and with --json
// writes one per line.
func sendStream(t *testing.T, url string) {
	out, _ := mustRun(t, 0, "send", url, "stream 4", "--stream")
	contains(t, "send --stream", out, "Task ID: ", "TASK_STATE_SUBMITTED", "State: TASK_STATE_WORKING", "Artifact ID: stream\nArtifact:\n  chunk 0chunk 1chunk 2chunk 3\n\n", "State: TASK_STATE_COMPLETED")
	// --json: one StreamResponse per line.
	out, _ = mustRun(t, 0, "send", "--stream", "--json", url, "stream 2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("send --stream --json: %d lines, want 5:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 1 {
			t.Fatalf("stream line %q: %v", l, err)
		}
	}
}

// sendAsyncThenWait checks that send --async returns before the task
// ends, and that task wait waits for it.
func sendAsyncThenWait(t *testing.T, url string) {
	out, _ := mustRun(t, 0, "send", url, "slow 500", "--async", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	if st := field(jsonOf(t, out), "task", "status", "state"); st == "TASK_STATE_COMPLETED" {
		t.Fatalf("--async waited: %v", st)
	}
	out, _ = mustRun(t, 0, "task", "wait", url, id)
	contains(t, "task wait", out, id, "COMPLETED", "slow 500")
}

// sendContinueTask checks that send continues a task (--task) and a
// context (--context), and that a finished task takes no more messages.
func sendContinueTask(t *testing.T, url string) {
	out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
	m := jsonOf(t, out)
	id, ctxID := field(m, "task", "id").(string), field(m, "task", "contextId").(string)
	out, _ = mustRun(t, 0, "send", url, "--task", id, "the missing piece")
	contains(t, "follow-up", out, id, "COMPLETED", "the missing piece")
	// A new task in the same context.
	out, _ = mustRun(t, 0, "send", url, "again", "--context", ctxID, "--json")
	if got := field(jsonOf(t, out), "task", "contextId"); got != ctxID {
		t.Fatalf("--context: task in context %v, want %s", got, ctxID)
	}
	// The finished task takes no more messages: an A2A error, exit 1.
	_, errs := mustRun(t, 1, "send", url, "--task", id, "too late")
	contains(t, "stderr", errs, "UnsupportedOperationError")
}

// sendFileAndDataParts checks the parts of --file and --data, and the
// usage errors of bad ones.
func sendFileAndDataParts(t *testing.T, url string) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("file content"), 0o600)
	out, _ := mustRun(t, 0, "send", url, "with a file", "--file", path, "--history", "1", "--json")
	hist, _ := field(jsonOf(t, out), "task", "history").([]any)
	if len(hist) != 1 {
		t.Fatalf("history %v", hist)
	}
	parts, _ := field(hist[0], "parts").([]any)
	if len(parts) != 2 || field(parts[1], "raw") != "ZmlsZSBjb250ZW50" || field(parts[1], "mediaType") != "text/plain" || field(parts[1], "filename") != "notes.txt" {
		t.Errorf("parts %v", parts)
	}
	// The conformance agent takes text/plain only: a data part
	// (application/json) is refused with an A2A error.
	_, errs := mustRun(t, 1, "send", url, "--data", `{"n":1}`)
	contains(t, "stderr", errs, "ContentTypeNotSupportedError", "application/json")
	_, errs = mustRun(t, 2, "send", url, "--data", "{not json")
	contains(t, "stderr", errs, "--data")
	_, errs = mustRun(t, 2, "send", url, "--file", filepath.Join(t.TempDir(), "absent"))
	contains(t, "stderr", errs, "--file")
}

// sendTimeout checks that send gives up after --timeout, with exit 5.
func sendTimeout(t *testing.T, url string) {
	// A task that works longer than --timeout, waited for and streamed.
	_, errs := mustRun(t, 5, "send", url, "slow 10000", "--timeout", "1s")
	contains(t, "stderr", errs, "timed out after 1s")
	out, errs := mustRun(t, 5, "send", url, "slow 10000", "--stream", "--timeout", "1s")
	contains(t, "stdout", out, "State: TASK_STATE_WORKING")
	contains(t, "stderr", errs, "timed out after 1s")
}

// sendVersion checks that --a2a-version "" sends no A2A-Version, which
// Parley refuses.
func sendVersion(t *testing.T, url string) {
	// No A2A-Version means 0.3, which Parley refuses: exit 1.
	out, errs := mustRun(t, 1, "send", url, "hello", "--a2a-version", "", "--json")
	contains(t, "stderr", errs, "VersionNotSupportedError")
	if field(jsonOf(t, out), "error", "code") != "VersionNotSupportedError" {
		t.Fatalf("json error %s", out)
	}
}

func TestTaskCommands(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr

	out, _ := mustRun(t, 0, "send", url, "hello", "--json")
	m := jsonOf(t, out)
	id, ctxID := field(m, "task", "id").(string), field(m, "task", "contextId").(string)

	out, _ = mustRun(t, 0, "task", "get", url, id, "--history", "5")
	contains(t, "task get", out, id, "COMPLETED", "History Messages: 1", "History:\n  user: hello\n")
	out, _ = mustRun(t, 0, "task", "get", "--json", url, id)
	if field(jsonOf(t, out), "id") != id {
		t.Fatalf("task get --json: %s", out)
	}

	// Unknown task: an A2A error, exit 1, on every binding.
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		out, errs := mustRun(t, 1, "task", "get", url, "no-such-task", "--binding", b, "--json")
		contains(t, "stderr", errs, "TaskNotFoundError")
		if field(jsonOf(t, out), "error", "a2aCode") != -32001.0 {
			t.Fatalf("json error %s", out)
		}
	}

	mustRun(t, 0, "send", url, "hello again", "--context", ctxID)
	out, _ = mustRun(t, 0, "task", "list", url, "--context", ctxID, "--status", "completed", "--page-size", "1", "--include-artifacts")
	contains(t, "task list", out, "Task ID: ", "State: TASK_STATE_COMPLETED", "Tasks Shown: 1\nTotal Size: 2\n", "Next Page Token: ")
	token := out[strings.LastIndex(out, "Next Page Token: ")+len("Next Page Token: "):]
	token = strings.TrimSpace(token)
	out, _ = mustRun(t, 0, "task", "list", url, "--context", ctxID, "--status", "completed", "--page-size", "1", "--include-artifacts", "--page-token", token, "--json")
	l := jsonOf(t, out)
	if tasks, _ := l["tasks"].([]any); len(tasks) != 1 || l["nextPageToken"] != "" {
		t.Fatalf("second page %v", l)
	}
	out, _ = mustRun(t, 0, "task", "list", url, "--since", "1h", "--json")
	if tasks, _ := jsonOf(t, out)["tasks"].([]any); len(tasks) != 2 {
		t.Fatalf("--since 1h: %s", out)
	}
	mustRun(t, 2, "task", "list", url, "--status", "sleeping")
	// The artifacts are counted when they were asked for; without them the
	// count is left out, and a note says how to get them.
	out, _ = mustRun(t, 0, "task", "list", url, "--context", ctxID, "--include-artifacts")
	if !regexp.MustCompile(`(?m)^Artifacts: \d+$`).MatchString(out) || strings.Contains(out, "left out") {
		t.Errorf("task list --include-artifacts: no artifact count:\n%s", out)
	}
	out, _ = mustRun(t, 0, "task", "list", url, "--context", ctxID)
	if strings.Contains(out, "Artifacts:") || !strings.Contains(out, "Note: artifacts left out: --include-artifacts counts them") {
		t.Errorf("task list without --include-artifacts: want no artifact count and a note:\n%s", out)
	}

	// Cancel a running task; cancelling a completed one is an A2A error.
	out, _ = mustRun(t, 0, "send", url, "slow 5000", "--async", "--json")
	running := field(jsonOf(t, out), "task", "id").(string)
	out, _ = mustRun(t, 0, "task", "cancel", url, running)
	contains(t, "task cancel", out, running, "CANCELED")
	_, errs := mustRun(t, 1, "task", "cancel", url, id)
	contains(t, "stderr", errs, "TaskNotCancelableError")

	// Subscribe to a running task until it ends.
	out, _ = mustRun(t, 0, "send", url, "slow 400", "--async", "--json")
	sub := field(jsonOf(t, out), "task", "id").(string)
	out, _ = mustRun(t, 0, "task", "subscribe", url, sub)
	contains(t, "task subscribe", out, "Task ID: "+sub, "Artifact ID: echo\nArtifact:\n  slow 400\n\n", "State: TASK_STATE_COMPLETED")
	// A finished task cannot be subscribed to.
	_, errs = mustRun(t, 1, "task", "subscribe", url, sub)
	contains(t, "stderr", errs, "UnsupportedOperationError")
}

func TestPushCommands(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)

	out, _ = mustRun(t, 0, "push", "create", url, id, "--url", "https://hooks.invalid/a2a", "--token-value", "tok",
		"--auth-scheme", "Bearer", "--auth-credentials", "secret", "--json")
	cfg := jsonOf(t, out)
	cid, _ := cfg["id"].(string)
	if cid == "" || cfg["url"] != "https://hooks.invalid/a2a" || field(cfg, "authentication", "scheme") != "Bearer" {
		t.Fatalf("push create: %v", cfg)
	}
	out, _ = mustRun(t, 0, "push", "get", url, id, cid)
	contains(t, "push get", out, cid, "https://hooks.invalid/a2a", "Bearer (set)")
	out, _ = mustRun(t, 0, "push", "list", url, id)
	contains(t, "push list", out, cid, "Configs Shown: 1")
	out, _ = mustRun(t, 0, "push", "delete", url, id, cid)
	contains(t, "push delete", out, "Deleted Config ID: "+cid)
	_, errs := mustRun(t, 1, "push", "get", url, id, cid)
	contains(t, "stderr", errs, "TaskNotFoundError")
	_, errs = mustRun(t, 1, "push", "list", url, "no-such-task")
	contains(t, "stderr", errs, "TaskNotFoundError")
	_, errs = mustRun(t, 2, "push", "create", url, id)
	contains(t, "stderr", errs, "--url")
}

func TestClientUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"card"},
		{"card", "http://a", "http://b"},
		{"send", "http://x"}, // nothing to send
		{"send", "http://x", "hi", "--no-such-flag"},
		{"send", "http://x", "hi", "--stream", "--async"},
		{"send", "http://x", "hi", "--binding", "carrier-pigeon"},
		{"send", "http://x", "hi", "--header", "no-equals"},
		{"send", "http://x", "hi", "--timeout", "soon"},
		{"task"},
		{"task", "frobnicate", "http://x"},
		{"task", "get", "http://x"},
		{"push", "get", "http://x", "task"},
		{"push", "create", "http://x", "task", "--auth-credentials", "c", "--url", "http://h"},
		{"check"},
	} {
		out, errs, code := parley(t, args...)
		if code != 2 {
			t.Errorf("parley %v: exit %d, want 2\n%s%s", args, code, out, errs)
		}
		if !strings.HasPrefix(errs, "parley ") {
			t.Errorf("parley %v: stderr %q", args, errs)
		}
	}
	// -h is not an error.
	out, _ := mustRun(t, 0, "send", "-h")
	contains(t, "send -h", out, "usage: parley send -a AGENT", "send URL [TEXT]", "--stream")
	out, _ = mustRun(t, 0, "help")
	contains(t, "help", out, "parley check URL", "3    the agent or its card could not be reached", "4    authentication missing or refused",
		"5    --timeout expired", "0    success, whatever state the task is in")
}

// TestClientGRPCBinding runs the client commands over gRPC (--binding
// grpc) against parley serve: the card's GRPC interface, a host:port dial
// target on the same port, called over cleartext HTTP/2.
func TestClientGRPCBinding(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--auth-token", "alice=tok-a")
	url := "http://" + p.addr
	g := []string{"--binding", "grpc", "--token", "tok-a"}
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		return mustRun(t, want, append(args, g...)...)
	}

	// send: blocking, --json, --stream, --async then task wait.
	out, _ := run(0, "send", url, "hello")
	contains(t, "send", out, "COMPLETED", "Artifact ID: echo", "Artifact:\n  hello\n\n")
	out, _ = run(0, "send", url, "hello", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	ctxID := field(jsonOf(t, out), "task", "contextId").(string)
	out, _ = run(0, "send", url, "stream 3", "--stream")
	contains(t, "send --stream", out, "State: TASK_STATE_WORKING", "Artifact ID: stream\nArtifact:\n  chunk 0chunk 1chunk 2\n\n", "State: TASK_STATE_COMPLETED")
	out, _ = run(0, "send", url, "slow 300", "--async", "--json")
	slow := field(jsonOf(t, out), "task", "id").(string)
	out, _ = run(0, "task", "wait", url, slow)
	contains(t, "task wait", out, slow, "COMPLETED")

	// task get, list, cancel, subscribe.
	out, _ = run(0, "task", "get", url, id, "--history", "5")
	contains(t, "task get", out, id, "COMPLETED", "user: hello")
	out, _ = run(0, "task", "list", url, "--context", ctxID, "--json")
	if tasks, _ := jsonOf(t, out)["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("task list --context: %s", out)
	}
	out, _ = run(0, "send", url, "slow 5000", "--async", "--json")
	running := field(jsonOf(t, out), "task", "id").(string)
	out, _ = run(0, "task", "cancel", url, running)
	contains(t, "task cancel", out, running, "CANCELED")
	out, _ = run(0, "send", url, "slow 400", "--async", "--json")
	sub := field(jsonOf(t, out), "task", "id").(string)
	out, _ = run(0, "task", "subscribe", url, sub)
	contains(t, "task subscribe", out, "Task ID: "+sub, "State: TASK_STATE_COMPLETED")

	// push create, get, list, delete.
	out, _ = run(0, "send", url, "input-required", "--json")
	parked := field(jsonOf(t, out), "task", "id").(string)
	out, _ = run(0, "push", "create", url, parked, "--url", "https://hooks.invalid/a2a", "--auth-scheme", "Bearer", "--auth-credentials", "s", "--json")
	cid, _ := jsonOf(t, out)["id"].(string)
	if cid == "" {
		t.Fatalf("push create: %s", out)
	}
	out, _ = run(0, "push", "get", url, parked, cid)
	contains(t, "push get", out, cid, "https://hooks.invalid/a2a")
	out, _ = run(0, "push", "list", url, parked)
	contains(t, "push list", out, "Configs Shown: 1")
	run(0, "push", "delete", url, parked, cid)

	// Errors the server sends over gRPC: exit 1, named as on the other
	// bindings.
	out, errs := run(1, "task", "get", url, "no-such-task", "--json")
	contains(t, "stderr", errs, "TaskNotFoundError")
	if field(jsonOf(t, out), "error", "a2aCode") != -32001.0 {
		t.Fatalf("json error %s", out)
	}
	_, errs = run(1, "task", "cancel", url, id)
	contains(t, "stderr", errs, "TaskNotCancelableError")
	_, errs = run(1, "send", url, "hello", "--a2a-version", "")
	contains(t, "stderr", errs, "VersionNotSupportedError")
	_, errs = mustRun(t, 4, "task", "get", url, id, "--binding", "grpc") // no token
	contains(t, "stderr", errs, "UnauthenticatedError")
}

// TestClientGRPCDeadTarget runs the client commands against a card whose
// only gRPC interface is on a closed port: exit 3.
func TestClientGRPCDeadTarget(t *testing.T) {
	t.Parallel()
	dead := testkit.FreeAddr(t)
	card := `{"name":"ghost","description":"d","version":"1","capabilities":{},"defaultInputModes":["text/plain"],
		"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
		"supportedInterfaces":[{"url":"` + dead + `","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(card))
	}))
	defer srv.Close()
	_, errs := mustRun(t, 3, "send", srv.URL, "hi", "--binding", "grpc")
	contains(t, "stderr", errs, "cannot connect", dead)
	// Without --binding the card's order applies, gRPC included.
	_, errs = mustRun(t, 3, "task", "get", srv.URL, "x")
	contains(t, "stderr", errs, "cannot connect")
}

func TestSendUnreachableAndStreamCut(t *testing.T) {
	t.Parallel()
	// Unreachable: exit 3, for every command that calls the agent.
	url := "http://" + testkit.FreeAddr(t)
	for _, args := range [][]string{{"send", url, "hi"}, {"task", "get", url, "x"}, {"push", "list", url, "x"}} {
		_, errs := mustRun(t, 3, args...)
		contains(t, "stderr", errs, "cannot connect")
	}
	// A server that answers the card but whose interface is gone: the
	// client falls back, then reports a transport failure.
	dead := "http://" + testkit.FreeAddr(t)
	card := `{"name":"ghost","description":"d","version":"1","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],
		"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
		"supportedInterfaces":[{"url":"` + dead + `/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(card))
	}))
	defer srv.Close()
	_, errs := mustRun(t, 3, "send", srv.URL, "hi", "--timeout", "20s")
	contains(t, "stderr", errs, "cannot connect")
}

// TestSendDataPartWire checks the wire form of --data and --file parts
// against a recording HTTP+JSON endpoint.
func TestSendDataPartWire(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 1)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			w.Write([]byte(`{"name":"recorder","description":"d","version":"1","capabilities":{},"defaultInputModes":["*/*"],
				"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
				"supportedInterfaces":[{"url":"` + base + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`))
		case "/message:send":
			b, _ := io.ReadAll(r.Body)
			got <- b
			w.Write([]byte(`{"message":{"messageId":"r-1","contextId":"c-1","role":"ROLE_AGENT","parts":[{"text":"noted"}]}}`))
		default:
			http.NotFound(w, r)
		}
	})
	srv.Start()
	defer srv.Close()
	img := filepath.Join(t.TempDir(), "dot.png")
	os.WriteFile(img, []byte{0x89, 'P', 'N', 'G'}, 0o600)
	out, _ := mustRun(t, 0, "send", srv.URL, "--file", img, "--data", `{"n":1,"tags":["a"]}`, "--message-id", "m-fixed")
	contains(t, "send", out, "Role: agent\n", "Message:\n  noted\n\n")
	var req map[string]any
	if err := json.Unmarshal(<-got, &req); err != nil {
		t.Fatal(err)
	}
	if field(req, "message", "messageId") != "m-fixed" {
		t.Errorf("messageId %v", field(req, "message", "messageId"))
	}
	parts, _ := field(req, "message", "parts").([]any)
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if field(parts[0], "filename") != "dot.png" || field(parts[0], "mediaType") != "image/png" || field(parts[0], "raw") != "iVBORw==" {
		t.Errorf("file part %v", parts[0])
	}
	if field(parts[1], "data", "n") != 1.0 || field(parts[1], "mediaType") != "application/json" {
		t.Errorf("data part %v", parts[1])
	}
}

// TestSendStreamEndsEarly: a stream the server closes before the task is
// finished ends with exit 3 and advice on how to follow the task.
func TestSendStreamEndsEarly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"name":"quitter","description":"d","version":"1","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],
				"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
				"supportedInterfaces":[{"url":"` + base + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`))
		case "/message:stream":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"task\":{\"id\":\"t-9\",\"contextId\":\"c-9\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n"))
		default:
			http.NotFound(w, r)
		}
	})
	srv.Start()
	defer srv.Close()
	out, errs := mustRun(t, 3, "send", srv.URL, "hello", "--stream")
	contains(t, "stdout", out, "Task ID: t-9\n", "State: TASK_STATE_WORKING\n")
	contains(t, "stderr", errs, "the stream ended before the task finished (task t-9, last state WORKING)", "parley task subscribe "+srv.URL+" t-9")
}
