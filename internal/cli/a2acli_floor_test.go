package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// fieldLine and blockLabel are the two kinds of line of the text floor
// (A2A CLI SPEC §11.2) outside a block: "Label: value" and "Label:".
var (
	fieldLine  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]*: .*$`)
	blockLabel = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]*:$`)
)

// checkFloor fails the test unless out is made of field lines and
// blocks (a label line, lines indented by two spaces, a blank line), with
// no control sequence, and ends with the task's ids and state when
// withTask.
func checkFloor(t *testing.T, what, out string, withTask bool) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("%s: control sequences in piped text:\n%q", what, out)
	}
	inBlock := false
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case inBlock && l == "":
			inBlock = false
		case inBlock && strings.HasPrefix(l, "  "):
		case inBlock:
			t.Errorf("%s: line %d %q inside a block is not indented, and no blank line closed the block:\n%s", what, i+1, l, out)
		case blockLabel.MatchString(l):
			inBlock = true
		case !fieldLine.MatchString(l):
			t.Errorf("%s: line %d %q is neither a Label: value field nor a block's label:\n%s", what, i+1, l, out)
		}
	}
	if inBlock {
		t.Errorf("%s: a block is not closed by a blank line:\n%s", what, out)
	}
	if withTask && !regexp.MustCompile(`Task ID: \S+\nContext ID: \S+\nState: TASK_STATE_[A-Z_]+\n$`).MatchString(out) {
		t.Errorf("%s: does not end with the Task ID, Context ID and State lines:\n%s", what, out)
	}
}

// TestTextFloor: piped text output is the specification's floor (A2A CLI
// SPEC §11.2, §6.1) for every client command against the conformance
// agent: one "Label: value" field per line with the same labels, block
// content (an artifact, a status message, the history, a message) under
// its own "Label:" line, indented and closed by a blank line, never
// interleaved with fields, and no terminal control sequences; a command
// that touches a task ends with its ids and state, a stream too.
func TestTextFloor(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "send", "-a", url, "hello")
	checkFloor(t, "send", out, true)
	contains(t, "send", out, "Artifact ID: echo\nArtifact:\n  hello\n\n")
	id := regexp.MustCompile(`Task ID: (\S+)`).FindStringSubmatch(out)[1]

	out, _ = mustRun(t, 0, "send", "-a", url, "stream 3", "--stream")
	checkFloor(t, "send --stream", out, true)
	out, _ = mustRun(t, 0, "send", "-a", url, "input-required")
	checkFloor(t, "send input-required", out, true)
	contains(t, "send input-required", out, "Status Message:\n  ")
	out, _ = mustRun(t, 0, "send", "-a", url, "message")
	checkFloor(t, "send message (a direct reply)", out, false)
	contains(t, "a direct reply", out, "Role: agent\n", "Message:\n  ")
	out, _ = mustRun(t, 0, "task", "get", "-a", url, id, "--history", "5")
	checkFloor(t, "task get --history", out, true)
	contains(t, "task get --history", out, "History:\n  user: hello\n")
	out, _ = mustRun(t, 0, "send", "-a", url, "stream 5 every 100", "--async")
	checkFloor(t, "send --async", out, true)
	running := regexp.MustCompile(`Task ID: (\S+)`).FindStringSubmatch(out)[1]
	out, _ = mustRun(t, 0, "task", "subscribe", "-a", url, running)
	checkFloor(t, "task subscribe", out, true)
	out, _ = mustRun(t, 0, "task", "get", "-a", url, "--wait", running)
	checkFloor(t, "task get --wait", out, true)
	out, _ = mustRun(t, 0, "task", "list", "-a", url)
	checkFloor(t, "task list", out, false)
	out, _ = mustRun(t, 0, "card", "get", "-a", url)
	checkFloor(t, "card get", out, false)
	out, _ = mustRun(t, 0, "config", "show")
	checkFloor(t, "config show", out, false)
}

// TestPollUnspecified: a task the agent reports in TASK_STATE_UNSPECIFIED
// is neither ended nor interrupted (A2A CLI SPEC §9.1, §9.3): `task get
// --wait` keeps polling until a real state comes, and a task that stays
// unspecified ends the wait only at --timeout (exit 5), never as done. The
// agent is a raw HTTP+JSON server, the only way to have a task in that
// state (no agent of Parley's sets it).
func TestPollUnspecified(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			io.WriteString(w, rawAgentCard("vague", base))
		case "/tasks/t-1":
			state := "TASK_STATE_UNSPECIFIED"
			if polls.Add(1) > 3 {
				state = "TASK_STATE_COMPLETED"
			}
			w.Write([]byte(`{"id":"t-1","contextId":"c-1","status":{"state":"` + state + `"}}`))
		case "/tasks/t-2":
			w.Write([]byte(`{"id":"t-2","contextId":"c-2","status":{"state":"TASK_STATE_UNSPECIFIED"}}`))
		default:
			http.NotFound(w, r)
		}
	})
	srv.Start()
	defer srv.Close()
	out, _ := mustRun(t, 0, "task", "get", "-a", base, "--wait", "t-1", "--poll-interval", "20ms")
	contains(t, "task get --wait", out, "State: TASK_STATE_COMPLETED\n")
	if n := polls.Load(); n < 4 {
		t.Errorf("the wait stopped after %d reads, at an unspecified state", n)
	}
	out, _ = mustRun(t, 5, "task", "get", "-a", base, "--wait", "t-2", "--poll-interval", "20ms", "--timeout", "500ms", "-o", "json")
	contains(t, "task get --wait on a task that stays unspecified", out, `"code":"A2ACLI_ERR_TIMEOUT"`)
}

// rawAgentCard is the card of a raw HTTP+JSON agent at base, for tests
// whose agent is a handler of their own.
func rawAgentCard(name, base string) string {
	return `{"name":"` + name + `","description":"d","version":"1","capabilities":{},"defaultInputModes":["text/plain"],
		"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
		"supportedInterfaces":[{"url":"` + base + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`
}
