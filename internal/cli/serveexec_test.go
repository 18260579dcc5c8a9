package cli_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
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
		{[]string{"--exec", "cat", "--exec-concurrency", "-1"}, "cannot be negative"},
		{[]string{"--exec", "cat", "--exec-env", "A=B"}, `--exec-env "A=B"`},
	} {
		_, errs, code := runInProcess(append([]string{"serve", "--store", "memory"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want usage error with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestServeExecEnvironment: the program gets the allow-listed variables
// and those named by --exec-env, never the server's push key; the limits
// default to twice the CPUs and 10m, and 0 turns them off.
func TestServeExecEnvironment(t *testing.T) {
	t.Setenv("PARLEY_PUSH_KEY", strings.Repeat("ab", 32)) // a valid key: the memory store only warns
	t.Setenv("EXECTEST_PASSED", "passed-value")
	t.Setenv("EXECTEST_SECRET", "secret-value")
	p := serve(t, "--store", "memory", "--exec", "env", "--exec-env", "EXECTEST_PASSED")
	m := p.post(t, "/message:send", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]}}`)
	task := field(m, "task")
	if field(task, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("answer %v, want COMPLETED", m)
	}
	var text strings.Builder
	for _, part := range field(field(task, "artifacts").([]any)[0], "parts").([]any) {
		text.WriteString(field(part, "text").(string))
	}
	env := "\n" + text.String()
	if !strings.Contains(env, "\nEXECTEST_PASSED=passed-value\n") || !strings.Contains(env, "\nPATH=") {
		t.Errorf("the program lacks EXECTEST_PASSED or PATH:%s", env)
	}
	if strings.Contains(env, "PARLEY_PUSH_KEY") || strings.Contains(env, "EXECTEST_SECRET") {
		t.Errorf("a secret of the server reached the program:%s", env)
	}
	// Standard error is read apart from the line serve waited for.
	logged := func(p *proc, want string) bool {
		return p.WaitUntil(func() bool { return strings.Contains(p.Stderr(), want) }, 5*time.Second) == nil
	}
	for _, want := range []string{"concurrency=" + strconv.Itoa(2*runtime.NumCPU()), "timeout=10m0s"} {
		if !logged(p, want) {
			t.Errorf("log lacks %s:\n%s", want, p.Stderr())
		}
	}

	off := serve(t, "--store", "memory", "--exec", "cat", "--exec-concurrency", "0", "--exec-timeout", "0")
	if !logged(off, "concurrency=none timeout=none") {
		t.Errorf("log of --exec-concurrency 0 --exec-timeout 0 lacks the limits turned off:\n%s", off.Stderr())
	}
}

// TestServeExecMissingProgram: a program that cannot be run stops serve
// before it listens (exit 2, naming the program), instead of a server
// that fails every message.
func TestServeExecMissingProgram(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	code := cli.Run(ctx, []string{"serve", "--exec", "./no-such-program", "--addr", "127.0.0.1:0", "--store", "memory"}, &out, &errs)
	if code != cli.ExitUsage || !strings.Contains(errs.String(), `cannot run "./no-such-program"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errs.String())
	}
}
