package cli_test

import (
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/agents/mcpagent/mcptest"
	"parley.dev/parley/internal/cli"
)

// TestServeMCP: `parley serve --mcp CMD` serves the child's tools on the
// wire, passes only the allow-listed variables and those of --mcp-env,
// logs the child's standard error, and `parley check` finds no MUST
// failed against it.
func TestServeMCP(t *testing.T) {
	t.Setenv("MCPTEST_PASSED", "passed-value")
	t.Setenv("MCPTEST_SECRET", "secret-value")
	p := serve(t, "--store", "memory", "--mcp", mcptest.GoServer(t), "--mcp-env", "MCPTEST_PASSED")
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "name") != "Parley's test MCP server" {
		t.Fatalf("card %v, want the MCP server's name", card)
	}
	text := func(id, msg string) string {
		m := p.post(t, "/message:send", `{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"text":`+msg+`}]}}`)
		arts, _ := field(m, "task", "artifacts").([]any)
		if len(arts) != 1 {
			t.Fatalf("%s: answer %v, want one artifact", msg, m)
		}
		return field(field(arts[0], "parts").([]any)[0], "text").(string)
	}
	if got := text("m1", `"env {\"name\": \"MCPTEST_PASSED\"}"`); got != "MCPTEST_PASSED=passed-value" {
		t.Errorf("--mcp-env variable: %q", got)
	}
	if got := text("m2", `"env {\"name\": \"MCPTEST_SECRET\"}"`); got != "MCPTEST_SECRET=" {
		t.Errorf("a variable not passed reached the child: %q", got)
	}
	rep := runCheck(t, 0, "http://"+p.addr)
	if got := rep.verdicts("FAIL"); len(got) > 0 {
		rep.dump(t)
		t.Fatalf("check against serve --mcp: %v", got)
	}
	m := p.post(t, "/message:send", `{"message":{"messageId":"crash","role":"ROLE_USER","parts":[{"text":"crash"}]}}`)
	if field(m, "task", "status", "state") != "TASK_STATE_FAILED" {
		t.Fatalf("crash: %v, want FAILED", m)
	}
	if err := p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), "crashing on purpose") }, 5*time.Second); err != nil {
		t.Errorf("the child's stderr is not in the log: %v\n%s", err, p.Stderr())
	}
}

func TestServeMCPUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mcp", "cat", "--agent", "conformance"}, "--agent chooses a built-in agent"},
		{[]string{"--mcp", "cat", "--exec", "cat"}, "--exec, --proxy and --mcp each choose the agent"},
		{[]string{"--mcp", "'cat"}, "unterminated single quote"},
		{[]string{"--mcp", "  "}, "the command is empty"},
		{[]string{"--mcp", "http://"}, "not a URL with a host"},
		{[]string{"--mcp", "http://127.0.0.1:1/mcp", "--mcp-env", "HOME"}, "--mcp-env is for a --mcp command"},
		{[]string{"--mcp", "cat", "--mcp-env", "A=B"}, `--mcp-env "A=B"`},
		{[]string{"--mcp", "cat", "--mcp-call-timeout", "-1s"}, "--mcp-call-timeout cannot be negative"},
	} {
		_, errs, code := runInProcess(append([]string{"serve", "--store", "memory"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}
