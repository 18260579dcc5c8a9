package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// The tests of this file drive the client commands by the A2A CLI
// specification's canonical spellings against the conformance agent over
// the wire; docs/a2a-cli-compliance.md cites them.

// TestCardGetReferences: card get reads the card an --agent-card
// reference names: the agent's URL, its card's URL, a bare loopback host,
// and a card file (file:// or a path); -o json prints the bare AgentCard.
func TestCardGetReferences(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "card", "get", "-a", url, "-o", "json")
	file := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{url, url + "/.well-known/agent-card.json", p.addr, file, "file://" + file} {
		out, _ := mustRun(t, 0, "card", "get", "--agent-card", ref, "-o", "json")
		card := jsonOf(t, out)
		if card["name"] == nil || card["supportedInterfaces"] == nil {
			t.Errorf("card get -a %s: not a bare AgentCard: %s", ref, out)
		}
	}
	// A card file is used to reach the agent it names.
	out, _ = mustRun(t, 0, "send", "-a", file, "hello", "-o", "json")
	if field(jsonOf(t, out), "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("send -a FILE: %s", out)
	}
	mustRun(t, 3, "card", "get", "-a", filepath.Join(t.TempDir(), "none.json"))

	// An agent that serves only A2A 0.3 is used only when --a2a-version
	// names 0.3 (A2A CLI SPEC §13.2): the card's v0.3 interfaces, alone.
	out, _ = mustRun(t, 0, "card", "get", "-a", url, "-o", "json")
	card := jsonOf(t, out)
	var old []any
	for _, in := range card["supportedInterfaces"].([]any) {
		if field(in, "protocolVersion") == "0.3" {
			old = append(old, in)
		}
	}
	card["supportedInterfaces"] = old
	b, _ := json.Marshal(card)
	legacy := filepath.Join(t.TempDir(), "legacy.json")
	os.WriteFile(legacy, b, 0o600)
	out, _ = mustRun(t, 1, "send", "-a", legacy, "hello", "-o", "json")
	contains(t, "a 0.3 agent", out, `"code":"VersionNotSupportedError"`, "--a2a-version 0.3")
	out, _ = mustRun(t, 0, "send", "-a", legacy, "hello", "--a2a-version", "0.3")
	contains(t, "a 0.3 agent, asked for", out, "State: TASK_STATE_COMPLETED")
}

// TestJSONShapes: -o json prints one protocol object per command (A2A CLI
// SPEC Appendix B): send a SendMessageResponse, task get and cancel a bare
// Task, task list a ListTasksResponse; with --stream JSON Lines of
// StreamResponse, the last carrying the task's final state; --async the
// task's ids at once.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	one := func(args ...string) map[string]any {
		t.Helper()
		out, _ := mustRun(t, 0, args...)
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Fatalf("%s: more than one document:\n%s", strings.Join(args, " "), out)
		}
		return jsonOf(t, out)
	}
	sent := one("send", "-a", url, "hello", "-o", "json")
	id, _ := field(sent, "task", "id").(string)
	if id == "" || field(sent, "task", "contextId") == nil {
		t.Fatalf("send: not a SendMessageResponse with a task: %v", sent)
	}
	if m := one("send", "-a", url, "message", "-o", "json"); m["message"] == nil {
		t.Errorf("send of a direct reply: %v", m)
	}
	if got := one("task", "get", "-a", url, id, "-o", "json"); got["id"] != id || field(got, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("task get: not the bare Task: %v", got)
	}
	if got := one("task", "list", "-a", url, "-o", "json"); got["tasks"] == nil {
		t.Errorf("task list: not a ListTasksResponse: %v", got)
	}
	for _, alias := range []string{"--return-immediately", "--no-wait"} {
		if got := one("send", "-a", url, "slow 60000", alias, "-o", "json"); field(got, "task", "id") == nil ||
			field(got, "task", "status", "state") == "TASK_STATE_COMPLETED" {
			t.Errorf("send %s: %v", alias, got)
		}
	}
	async := one("send", "-a", url, "slow 60000", "--async", "-o", "json")
	slow, _ := field(async, "task", "id").(string)
	if slow == "" || field(async, "task", "contextId") == nil {
		t.Fatalf("send --async: no ids: %v", async)
	}
	if got := one("task", "cancel", "-a", url, slow, "-o", "json"); got["id"] != slow || field(got, "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("task cancel: not the bare Task: %v", got)
	}

	jsonl := func(args ...string) {
		t.Helper()
		out, _ := mustRun(t, 0, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var last map[string]any
		for _, l := range lines {
			last = nil
			if err := json.Unmarshal([]byte(l), &last); err != nil {
				t.Fatalf("not JSON Lines: %q: %v", l, err)
			}
		}
		if len(lines) < 2 || field(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" || field(last, "statusUpdate", "taskId") == nil {
			t.Errorf("%s: the stream's last line does not carry the final state:\n%s", strings.Join(args, " "), out)
		}
	}
	jsonl("send", "-a", url, "stream 5", "--stream", "-o", "json")
	// task subscribe: the terminal Task, or with --stream the events.
	next := func() string {
		out, _ := mustRun(t, 0, "send", "-a", url, "slow 400", "--async", "-o", "json")
		return field(jsonOf(t, out), "task", "id").(string)
	}
	id = next()
	if got := one("task", "subscribe", "-a", url, id, "-o", "json"); got["id"] != id || field(got, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("task subscribe -o json: not the terminal Task: %v", got)
	}
	jsonl("task", "subscribe", "-a", url, next(), "--stream", "-o", "json")
}

// TestTextIdentifiers: in text mode every command that touches a task
// ends with its id, context id and state, one Label: value line each (A2A
// CLI SPEC §8.2, §11.2), streamed or not.
func TestTextIdentifiers(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	ids := func(what, out string) (id, ctx, st string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 3 {
			t.Fatalf("%s: %s", what, out)
		}
		tail := lines[len(lines)-3:]
		for i, label := range []string{"Task ID: ", "Context ID: ", "State: "} {
			v, ok := strings.CutPrefix(tail[i], label)
			if !ok || v == "" {
				t.Fatalf("%s: the output does not end with the ids:\n%s", what, out)
			}
			tail[i] = v
		}
		return tail[0], tail[1], tail[2]
	}
	out, _ := mustRun(t, 0, "send", "-a", url, "input-required")
	id, ctx, st := ids("send", out)
	if st != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("send: state %s", st)
	}
	for _, args := range [][]string{
		{"task", "get", "-a", url, id},
		{"task", "subscribe", "-a", url, id},
		{"send", "-a", url, "--task-id", id, "more", "--stream"},
		{"task", "get", "-a", url, "--wait", id},
	} {
		out, _ := mustRun(t, 0, args...)
		if gid, gctx, _ := ids(strings.Join(args, " "), out); gid != id || gctx != ctx {
			t.Errorf("%s: ids %s %s, want %s %s", strings.Join(args, " "), gid, gctx, id, ctx)
		}
	}
	out, _ = mustRun(t, 0, "send", "-a", url, "slow 60000", "--async")
	ids("send --async", out)
}

// TestSendContinuation: --context-id starts a new task in the context;
// --task-id continues the task; a task id the agent does not know fails
// with its error (exit 1), pointing at --debug, and starts no task; the
// command sends no id the caller did not give (--debug shows the request).
func TestSendContinuation(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, errs := mustRun(t, 0, "send", "-a", url, "input-required", "-o", "json", "--debug", "--transport", "jsonrpc")
	first := jsonOf(t, out)
	id, ctx := field(first, "task", "id").(string), field(first, "task", "contextId").(string)
	req, _, _ := strings.Cut(errs, "<--")
	if strings.Contains(req, "taskId") || strings.Contains(req, "contextId") {
		t.Errorf("a first message names ids the agent did not assign:\n%s", req)
	}
	out, _ = mustRun(t, 0, "send", "-a", url, "--context-id", ctx, "hello", "-o", "json")
	if next := jsonOf(t, out); field(next, "task", "contextId") != ctx || field(next, "task", "id") == id {
		t.Errorf("--context-id: %v", next)
	}
	// A task id and a context id that do not go together: the agent's
	// error, not a new task.
	_, errs = mustRun(t, 1, "send", "-a", url, "--task-id", id, "--context-id", "another-context", "more")
	contains(t, "a mismatched --context-id", errs, "Error")
	out, _ = mustRun(t, 0, "send", "-a", url, "--task-id", id, "the missing piece", "-o", "json")
	if cont := jsonOf(t, out); field(cont, "task", "id") != id || field(cont, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("--task-id: %v", cont)
	}
	count := func() int {
		out, _ := mustRun(t, 0, "task", "list", "-a", url, "-o", "json")
		tasks, _ := jsonOf(t, out)["tasks"].([]any)
		return len(tasks)
	}
	before := count()
	_, errs = mustRun(t, 1, "send", "-a", url, "--task-id", "no-such-task", "hi")
	contains(t, "stderr", errs, "TaskNotFoundError", "--debug")
	out, _ = mustRun(t, 1, "send", "-a", url, "--task-id", "no-such-task", "hi", "-o", "json")
	contains(t, "envelope", out, "--debug")
	if after := count(); after != before {
		t.Errorf("a rejected --task-id started a task: %d tasks, then %d", before, after)
	}
}

// TestSendParts: --text, --file and --data add parts in the order given;
// --media-type sets the type of the part flag before it (and alone is a
// usage error); --data reads a file or standard input; --metadata goes in
// the request. The conformance agent takes text only, so it refuses the
// message with its own error (exit 1) after --debug has shown the request.
func TestSendParts(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	dir := t.TempDir()
	bin, data := filepath.Join(dir, "report.bin"), filepath.Join(dir, "d.json")
	os.WriteFile(bin, []byte{1, 2, 3}, 0o600)
	os.WriteFile(data, []byte(`{"k":1}`), 0o600)
	cmd := exec.Command(testkit.ParleyBinary(t), "send", "-a", url, "first", "--text", "second", "--file", bin, "--media-type", "application/pdf",
		"--data", data, "--data", "-", "--text", "last", "--media-type", "text/markdown", "--metadata", `{"tenant":"acme"}`,
		"--transport", "rest", "--debug", "-o", "json")
	cmd.Stdin = strings.NewReader(`[true]`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `"code":"ContentTypeNotSupportedError"`) {
		t.Fatalf("send: %v\n%s%s", err, out, stderr.String())
	}
	var req map[string]any
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, `{"message"`) {
			json.Unmarshal([]byte(l), &req)
		}
	}
	parts, _ := field(req, "message", "parts").([]any)
	b, _ := json.Marshal(parts)
	want := `[{"text":"first"},{"text":"second"},{"filename":"report.bin","mediaType":"application/pdf","raw":"AQID"},` +
		`{"data":{"k":1},"mediaType":"application/json"},{"data":[true],"mediaType":"application/json"},{"mediaType":"text/markdown","text":"last"}]`
	if string(b) != want || field(req, "metadata", "tenant") != "acme" {
		t.Errorf("the request sent:\n%v\nwant parts\n%s\nand metadata tenant acme", req, want)
	}
	mustRun(t, 2, "send", "-a", url, "--media-type", "text/plain", "x")
	mustRun(t, 2, "send", "-a", url, "x", "--metadata", "[1]")
}

// TestTransportsAndDebug: --transport, repeatable and ordered, picks the
// first binding the card offers (a binding it lacks is skipped); --debug
// shows each exchange on stderr, A2A-Version on every request, and never a
// credential.
func TestTransportsAndDebug(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	for _, c := range []struct {
		prefer []string
		want   string // in the logged request
	}{
		{[]string{"rest"}, "--> POST " + url + "/message:send"},
		{[]string{"jsonrpc", "rest"}, `"method":"SendMessage"`},
		{[]string{"grpc", "jsonrpc"}, "Content-Type: application/grpc"},
		{[]string{"rest,jsonrpc"}, "--> POST " + url + "/message:send"},
	} {
		args := []string{"send", "-a", url, "hello", "--debug", "--bearer", "s3cret-token", "--svc-param", "X-Trace:secret-trace"}
		for _, b := range c.prefer {
			args = append(args, "--transport", b)
		}
		_, errs := mustRun(t, 0, args...)
		contains(t, "--debug", errs, c.want, "A2a-Version: 1.0", "Authorization: [REDACTED]", "X-Trace: [REDACTED]")
		if strings.Contains(errs, "s3cret-token") || strings.Contains(errs, "secret-trace") {
			t.Errorf("--debug shows a credential:\n%s", errs)
		}
	}
	_, errs := mustRun(t, 0, "send", "-a", url, "hello", "--debug", "--extension", "https://ext.example/a", "--extension", "https://ext.example/b")
	contains(t, "--extension", errs, "A2a-Extensions: https://ext.example/a, https://ext.example/b")
	mustRun(t, 2, "send", "-a", url, "hello", "--transport", "carrier-pigeon")
	_, errs = mustRun(t, 0, "send", "-a", url, "hello", "--insecure")
	contains(t, "--insecure", errs, "WARNING: --insecure")
}

// TestCredentials: --bearer, --api-key (placed where the card's apiKey
// scheme says) and their variables authenticate; an agent that wants
// credentials and gets none exits 4 with A2ACLI_ERR_CREDENTIALS_MISSING,
// one that refuses them 4 with A2ACLI_ERR_AUTH_FAILED; --debug never shows
// the key.
func TestCredentials(t *testing.T) {
	t.Parallel()
	keyOut, _ := mustRun(t, 0, "apikey", "new", "bob")
	key := strings.Split(strings.TrimSpace(keyOut), "\n")
	keys := filepath.Join(t.TempDir(), "api-keys")
	os.WriteFile(keys, []byte(key[1]+"\n"), 0o600)
	p := serve(t, "--agent", "conformance", "--store", "memory", "--auth-token", "alice=s3cret", "--api-keys", keys)
	url := "http://" + p.addr
	mustRun(t, 0, "send", "-a", url, "hello", "--bearer", "s3cret")
	_, errs := mustRun(t, 0, "send", "-a", url, "hello", "--api-key", key[0], "--debug")
	if strings.Contains(errs, key[0]) || !strings.Contains(errs, ": [REDACTED]") {
		t.Errorf("--debug shows the API key, or no redaction:\n%s", errs)
	}
	if out, errs, code := parleyWithEnv(t, []string{"A2ACLI_API_KEY=" + key[0]}, "send", "-a", url, "hello"); code != 0 {
		t.Errorf("$A2ACLI_API_KEY: exit %d\n%s%s", code, out, errs)
	}
	mustRun(t, 4, "send", "-a", url, "hello", "--api-key", "pk_wrong")
	if out, errs, code := parleyWithEnv(t, []string{"A2ACLI_BEARER=s3cret"}, "send", "-a", url, "hello"); code != 0 {
		t.Errorf("$A2ACLI_BEARER: exit %d\n%s%s", code, out, errs)
	}
	out, _ := mustRun(t, 4, "send", "-a", url, "hello", "-o", "json")
	contains(t, "no credential", out, `"code":"A2ACLI_ERR_CREDENTIALS_MISSING"`)
	out, _ = mustRun(t, 4, "send", "-a", url, "hello", "--bearer", "wrong", "-o", "json")
	contains(t, "a wrong credential", out, `"code":"A2ACLI_ERR_AUTH_FAILED"`)
}

// TestConfigPrecedence: an option comes from the flag, else $A2ACLI_…, else
// the .env file (--config, or a .env found from the working directory up),
// else its default; --stream never comes from them.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o700)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("# the agent\nA2ACLI_AGENT_CARD="+url+"\nA2ACLI_OUTPUT=json\nA2ACLI_STREAM=true\nOTHER=x\n"), 0o600)
	other := filepath.Join(dir, "other.env")
	os.WriteFile(other, []byte("A2ACLI_AGENT_CARD=http://"+testkit.FreeAddr(t)+"\n"), 0o600)
	run := func(env []string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(testkit.ParleyBinary(t), args...)
		cmd.Dir, cmd.Env = sub, append(append(os.Environ(), "HOME="+dir, "NO_COLOR=1"), env...)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	// The local .env: the agent and json output; not --stream (one document).
	if out, code := run(nil, "send", "hello"); code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, `"task"`) {
		t.Errorf(".env: exit %d:\n%s", code, out)
	}
	// The environment over the file; the flag over the environment.
	if out, code := run([]string{"A2ACLI_OUTPUT=text"}, "send", "hello"); code != 0 || !strings.Contains(out, "State: TASK_STATE_COMPLETED") {
		t.Errorf("$A2ACLI_OUTPUT over .env: exit %d:\n%s", code, out)
	}
	if out, code := run([]string{"A2ACLI_OUTPUT=text"}, "send", "hello", "-o", "json"); code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("-o over $A2ACLI_OUTPUT: exit %d:\n%s", code, out)
	}
	// --config replaces the local .env: its agent is unreachable.
	if _, code := run(nil, "send", "hello", "--config", other); code != 3 {
		t.Errorf("--config: exit %d, want 3 (its agent)", code)
	}
	// The older spelling with a URL argument still works with the variable set.
	if _, code := run([]string{"A2ACLI_AGENT_CARD=http://" + testkit.FreeAddr(t)}, "send", url, "hello"); code != 0 {
		t.Errorf("send URL with $A2ACLI_AGENT_CARD: exit %d", code)
	}
	// A configured --async gives way to --stream and to --wait given as flags.
	if out, code := run([]string{"A2ACLI_ASYNC=true", "A2ACLI_OUTPUT=text"}, "send", "slow 60000", "--timeout", "20s"); code != 0 ||
		!strings.Contains(out, "State: TASK_STATE_SUBMITTED") && !strings.Contains(out, "State: TASK_STATE_WORKING") {
		t.Errorf("$A2ACLI_ASYNC: exit %d:\n%s", code, out)
	}
	for _, flag := range []string{"--stream", "--wait"} {
		if out, code := run([]string{"A2ACLI_ASYNC=true", "A2ACLI_OUTPUT=text"}, "send", "slow 300", flag); code != 0 || !strings.Contains(out, "State: TASK_STATE_COMPLETED") {
			t.Errorf("%s over $A2ACLI_ASYNC: exit %d:\n%s", flag, code, out)
		}
	}
	if _, code := run([]string{"A2ACLI_TIMEOUT=soon"}, "send", "hello"); code != 2 {
		t.Errorf("a bad variable: exit %d, want 2", code)
	}
	// A credential in a file others may read: used, with a warning.
	loose := filepath.Join(dir, "loose.env")
	os.WriteFile(loose, []byte("A2ACLI_AGENT_CARD="+url+"\nA2ACLI_BEARER=x\n"), 0o644)
	cmd := exec.Command(testkit.ParleyBinary(t), "send", "hello", "--config", loose)
	cmd.Dir, cmd.Env = sub, append(os.Environ(), "HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "A2ACLI_BEARER in "+loose+": mode 0644") {
		t.Errorf("a world-readable credential file: %v\n%s", err, b)
	}
	// config show: each value and where it came from; a credential hidden.
	out, code := run([]string{"A2ACLI_OUTPUT=text", "A2ACLI_BEARER=s3cret"}, "config", "show", "--transport", "rest")
	for _, want := range []string{
		"agent-card: " + url + " (A2ACLI_AGENT_CARD in " + filepath.Join(dir, ".env") + ")\n",
		"output: text ($A2ACLI_OUTPUT)\n", "transport: rest (flag)\n", "bearer: [REDACTED] ($A2ACLI_BEARER)\n",
		"poll-interval: 500ms (default)\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("config show: exit %d, no %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "stream:") || strings.Contains(out, "text:") {
		t.Errorf("config show shows a secret, --stream or a message's part:\n%s", out)
	}
}

// TestTaskPushConfig: task push-config create, get, list and delete.
func TestTaskPushConfig(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--push-allow-private")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "send", "-a", url, "slow 60000", "--async", "-o", "json")
	id := field(jsonOf(t, out), "task", "id").(string)
	out, _ = mustRun(t, 0, "task", "push-config", "create", "-a", url, id, "--url", "http://127.0.0.1:9/hook", "-o", "json")
	cfg := jsonOf(t, out)["id"].(string)
	mustRun(t, 0, "task", "push-config", "get", "-a", url, id, cfg)
	out, _ = mustRun(t, 0, "task", "push-config", "list", "-a", url, id, "-o", "json")
	contains(t, "list", out, cfg)
	mustRun(t, 0, "task", "push-config", "delete", "-a", url, id, cfg)
	out, _ = mustRun(t, 0, "task", "push-config", "list", "-a", url, id, "-o", "json")
	if strings.Contains(out, cfg) {
		t.Errorf("deleted, still listed: %s", out)
	}
}

// reportRows reads the requirement rows of the compliance report: id,
// status and the tests named as evidence.
func reportRows(t *testing.T) map[string][2]string {
	t.Helper()
	f, err := os.Open(filepath.Join(testkit.ModuleRoot(t), "docs", "a2a-cli-compliance.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][2]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`A2ACLI_") {
			continue
		}
		id := strings.Trim(strings.TrimSpace(cells[1]), "`")
		rows[id] = [2]string{strings.TrimSpace(cells[3]), cells[4]}
	}
	return rows
}

// TestComplianceReport: docs/a2a-cli-compliance.md has a row for each of
// the 66 requirements of the A2A CLI specification's three tiers, the
// YAML form beside it the same statuses, and a row it marks passed names
// its evidence: tests that exist in the module.
func TestComplianceReport(t *testing.T) {
	rows := reportRows(t)
	if len(rows) != 66 {
		t.Errorf("the report has %d requirement rows, want 66 (39 + 15 + 12)", len(rows))
	}
	yaml, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "docs", "a2a-cli-compliance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	word := map[string]string{"✅ Pass": "pass", "◐ Partial": "partial", "❌ Fail": "fail", "⊘ Not measured": "not_measured", "— N/A": "na"}
	for id, r := range rows {
		w, ok := word[r[0]]
		_, block, found := strings.Cut(string(yaml), "\n  "+id+":\n")
		if !ok || !found || !strings.Contains(block[:strings.Index(block+"\n  A2ACLI_", "\n  A2ACLI_")], "\n    status: "+w+"\n") {
			t.Errorf("%s: status %q in the report, not the same in the YAML form", id, r[0])
		}
	}
	root := testkit.ModuleRoot(t)
	var src strings.Builder
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, "_test.go") {
			b, _ := os.ReadFile(path)
			src.Write(b)
		}
		return nil
	})
	all := src.String()
	for id, r := range rows {
		status, evidence := r[0], r[1]
		if !strings.Contains(status, "Pass") {
			continue
		}
		tests := 0
		for _, w := range strings.FieldsFunc(evidence, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
		}) {
			if !strings.HasPrefix(w, "Test") {
				continue
			}
			tests++
			if !strings.Contains(all, "func "+w+"(") {
				t.Errorf("%s: its evidence %s is no test in the module", id, w)
			}
		}
		if tests == 0 {
			t.Errorf("%s is marked passed without a test as evidence", id)
		}
	}
}

// TestCapabilities: a command checks the card's capabilities before a
// call that needs one (A2A CLI SPEC §13.3): against a card without
// streaming, send --stream waits without a stream (and -o json still
// prints JSON Lines: one line) and task subscribe polls; against one
// without push notifications, task push-config fails with the protocol's
// PushNotificationNotSupportedError, without a call.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "card", "get", "-a", url, "-o", "json")
	card := jsonOf(t, out)
	card["capabilities"] = map[string]any{}
	b, _ := json.Marshal(card)
	file := filepath.Join(t.TempDir(), "plain.json")
	os.WriteFile(file, b, 0o600)

	out, errs := mustRun(t, 0, "send", "-a", file, "stream 3", "--stream", "-o", "json")
	contains(t, "stderr", errs, "declares no streaming")
	if strings.Count(strings.TrimSpace(out), "\n") != 0 || field(jsonOf(t, out), "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("send --stream without streaming: %s", out)
	}
	out, _ = mustRun(t, 0, "send", "-a", url, "slow 500", "--async", "-o", "json")
	id := field(jsonOf(t, out), "task", "id").(string)
	out, errs = mustRun(t, 0, "task", "subscribe", "-a", file, id, "--poll-interval", "50ms")
	contains(t, "task subscribe without streaming", errs, "declares no streaming")
	contains(t, "task subscribe without streaming", out, "State: TASK_STATE_COMPLETED")
	out, _ = mustRun(t, 1, "task", "push-config", "list", "-a", file, id, "-o", "json")
	contains(t, "push-config without push", out, `"code":"PushNotificationNotSupportedError"`)
}

// TestTaskDownload: task download writes a task's artifacts to files:
// bytes under the part's file name, data as JSON, text as text; a URL part
// is named, not fetched; an existing file is never overwritten.
func TestTaskDownload(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	dir := t.TempDir()
	task := func(text string) string {
		out, _ := mustRun(t, 0, "send", "-a", url, text, "-o", "json")
		return field(jsonOf(t, out), "task", "id").(string)
	}
	for _, c := range []struct {
		text, file, content, shown string // shown: by task get, in text
	}{
		{"tck-artifact-file", "output.txt", "tck", "[file output.txt, text/plain, 3 bytes]"},
		{"tck-artifact-data", "data.json", `"count": 42`, `{"count":42,"key":"value"}`},
		{"hello", "", "hello", "hello"},
	} {
		id := task(c.text)
		out, _ := mustRun(t, 0, "task", "get", "-a", url, id)
		contains(t, "task get", out, c.shown)
		sub := filepath.Join(dir, c.text)
		os.Mkdir(sub, 0o700)
		out, _ = mustRun(t, 0, "task", "download", "-a", url, id, "--dir", sub)
		contains(t, "task download", out, "File: "+filepath.Join(sub, c.file), "Task ID: "+id)
		files, _ := filepath.Glob(filepath.Join(sub, "*"))
		if len(files) != 1 {
			t.Fatalf("%s: files %v", c.text, files)
		}
		b, _ := os.ReadFile(files[0])
		if !strings.Contains(string(b), c.content) {
			t.Errorf("%s: %s holds %q, want %q", c.text, files[0], b, c.content)
		}
		_, errs := mustRun(t, 1, "task", "download", "-a", url, id, "--dir", sub)
		contains(t, "again", errs, "exists")
	}
	out, _ := mustRun(t, 0, "task", "download", "-a", url, task("tck-artifact-file-url"), "--dir", dir)
	contains(t, "a URL part", out, "Reference: https://example.com/output.txt (not fetched)")
}

// TestCompletion: parley completion bash prints a script bash runs, which
// completes the commands, subcommands and each command's flags; zsh's is
// the same through bashcompinit; fish's names the flags per command.
func TestCompletion(t *testing.T) {
	t.Parallel()
	script, _ := mustRun(t, 0, "completion", "bash")
	for _, c := range []struct {
		words, want string
	}{
		{"parley se", "send serve"},
		{"parley task ", "cancel download get list push-config subscribe"},
		{"parley task push-config ", "create delete get list"},
		{"parley send --tra", "--transport"},
		{"parley task get -a URL --wa", "--wait --wait-change --watch"},
	} {
		words := strings.Fields(c.words)
		if strings.HasSuffix(c.words, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		cmd := exec.Command("bash", "--norc", "-c", script+"\nCOMP_WORDS=("+strings.Join(quoted, " ")+"); COMP_CWORD="+
			strconv.Itoa(len(words)-1)+"; _parley; echo \"${COMPREPLY[*]}\"")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("%q completes to %q (%v), want %q", c.words, out, err, c.want)
		}
	}
	out, _ := mustRun(t, 0, "completion", "zsh")
	contains(t, "zsh", out, "bashcompinit", "complete -o default -F _parley parley")
	out, _ = mustRun(t, 0, "completion", "fish")
	contains(t, "fish", out, "complete -c parley -n '__fish_seen_subcommand_from send' -l task-id\n")
	mustRun(t, 2, "completion", "tcsh")
}

// TestExtendedCardAndDemoServer: parley demo-server serves the
// conformance agent; card get --extended reads the authenticated extended
// card with a credential a public scheme takes, and refuses without one
// or against a card that declares none.
func TestExtendedCardAndDemoServer(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	out, _ := mustRun(t, 0, "card", "get", "-a", "http://"+p.addr, "-o", "json")
	card := jsonOf(t, out)
	card["name"] = "The extended card"
	b, _ := json.Marshal(card)
	ext := filepath.Join(t.TempDir(), "extended.json")
	os.WriteFile(ext, b, 0o600)
	mustRun(t, 1, "card", "get", "-a", "http://"+p.addr, "--extended", "-o", "json") // the card declares none
	card["capabilities"] = map[string]any{"extendedAgentCard": true}                 // and no security scheme
	b, _ = json.Marshal(card)
	noScheme := filepath.Join(t.TempDir(), "no-scheme.json")
	os.WriteFile(noScheme, b, 0o600)
	_, errs := mustRun(t, 2, "card", "get", "-a", noScheme, "--extended", "--bearer", "tok")
	contains(t, "a bearer no scheme takes", errs, "declares no security scheme that takes a bearer token")

	addr := testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), "demo-server", "--addr", addr, "--auth-token", "alice=tok", "--extended-card", ext)
	demo := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley demo-server", KillAtCleanup: true})
	if _, err := demo.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley demo-server did not start: %v\n%s", err, demo.Stderr())
	}
	url := "http://" + addr
	out, _ = mustRun(t, 0, "card", "get", "-a", url, "--extended", "--bearer", "tok", "-o", "json")
	if jsonOf(t, out)["name"] != "The extended card" {
		t.Errorf("card get --extended: %s", out)
	}
	out, _ = mustRun(t, 0, "card", "get", "-a", url, "--extended", "--bearer", "tok")
	contains(t, "card get --extended", out, "The extended card")
	mustRun(t, 4, "card", "get", "-a", url, "--extended")
	out, _ = mustRun(t, 0, "send", "-a", url, "hello", "--bearer", "tok")
	contains(t, "send to the demo server", out, "State: TASK_STATE_COMPLETED")
}
