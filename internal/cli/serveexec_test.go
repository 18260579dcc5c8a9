package cli_test

import (
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/cli"
)

// TestServeExec: `parley serve --exec` runs the program per message over
// the wire, with its own card.
func TestServeExec(t *testing.T) {
	p := serve(t, "--store", "memory", "--exec", `sh -c "tr a-z A-Z; echo \"said-$PARLEY_TASK_ID\" >&2"`, "--exec-timeout", "10s")
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if name, _ := field(card, "name").(string); !strings.Contains(name, "exec agent: sh") {
		t.Fatalf("card name %q, want the exec agent's", name)
	}
	m := p.post(t, "/message:send", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
	task := field(m, "task")
	if field(task, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("answer %v, want COMPLETED", m)
	}
	arts, _ := field(task, "artifacts").([]any)
	var text strings.Builder
	for _, part := range field(arts[0], "parts").([]any) {
		text.WriteString(field(part, "text").(string))
	}
	if text.String() != "HELLO\n" {
		t.Fatalf("artifact text %q, want HELLO", text.String())
	}
	// The program's standard error goes to the log, with the task id.
	id, _ := field(task, "id").(string)
	if err := p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "line=said-"+id) }, 5*time.Second); err != nil {
		t.Fatalf("stderr lacks the program's line: %v\n%s", err, p.Stderr())
	}
}

func TestServeExecUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--exec", "cat", "--agent", "conformance"}, "--agent chooses a built-in agent"},
		{[]string{"--exec", "'cat"}, "unterminated single quote"},
		{[]string{"--exec", "  "}, "the command is empty"},
		{[]string{"--exec", "cat", "--chunk", "word"}, `--chunk "word"`},
		{[]string{"--exec", "cat", "--exec-format", "xml"}, `--exec-format "xml"`},
		{[]string{"--exec", "cat", "--exec-grace", "0s"}, "--exec-grace"},
	} {
		_, errs, code := runInProcess(append([]string{"serve", "--store", "memory"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}
