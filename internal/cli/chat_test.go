package cli_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestChatTerminal: `parley chat` under a real pseudo-terminal (util-linux
// script(1) runs it on one) against the conformance agent is a
// conversation: a prompt, the agent's words, the task's state; a turn
// that leaves the task INPUT_REQUIRED makes the next line answer that
// task (the same task id), and the turn after the task ended starts a new
// task in the same context (A2A CLI SPEC §8.1).
func TestChatTerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		testenv.SkipOrFailInCI(t, "script(1) (util-linux) is not installed: it gives parley chat a pseudo-terminal")
	}
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-q", "-e", "-c", testkit.ParleyBinary(t)+" chat -a "+url, "/dev/null")
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.Env = slicesWithout(cmd.Env, "NO_COLOR=")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	status := regexp.MustCompile(`\[(?:\x1b\[[0-9;]*m)*([A-Z_]+)(?:\x1b\[[0-9;]*m)* · task (\S+)\]`)
	var tasks []string
	turns := []string{"input-required", "blue", "hello", "/quit"}
	io.WriteString(in, turns[0]+"\n")
	r := bufio.NewReader(outPipe)
	for {
		line, err := r.ReadString('\n')
		all.WriteString(line)
		if m := status.FindStringSubmatch(line); m != nil {
			tasks = append(tasks, m[1]+" "+m[2])
			io.WriteString(in, turns[len(tasks)]+"\n")
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("parley chat: %v\n%q", err, all.String())
	}
	out := all.String()
	if !strings.Contains(out, "you> ") || !strings.Contains(out, "agent>") || !strings.Contains(out, "\x1b[") {
		t.Errorf("not a conversation on a terminal (prompt, agent's words, colours):\n%q", out)
	}
	if len(tasks) != 3 {
		t.Fatalf("turns answered: %v\n%q", tasks, out)
	}
	first, second, third := strings.Fields(tasks[0]), strings.Fields(tasks[1]), strings.Fields(tasks[2])
	if first[0] != "INPUT_REQUIRED" || second[0] != "COMPLETED" || second[1] != first[1] {
		t.Errorf("the reply to INPUT_REQUIRED did not go to its task: %v", tasks)
	}
	if third[1] == first[1] || third[0] != "COMPLETED" {
		t.Errorf("the turn after the task ended did not start a new task: %v", tasks)
	}
	ctxOf := func(id string) any {
		out, _ := mustRun(t, 0, "task", "get", "-a", url, id, "-o", "json")
		return field(jsonOf(t, out), "contextId")
	}
	if a, b := ctxOf(first[1]), ctxOf(third[1]); a != b || a == nil {
		t.Errorf("the new task is in context %v, the conversation's is %v", b, a)
	}
}

// slicesWithout is env without the variables that start with prefix.
func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// TestChatPiped: with stdout not a terminal, chat degrades to the text
// floor (each answer as send prints it, no prompt, no control sequence)
// and reads its turns from standard input without waiting for a person;
// -o json prints each turn's SendMessageResponse as a line. /new starts a
// new context.
func TestChatPiped(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	run := func(input string, args ...string) string {
		cmd := exec.Command(testkit.ParleyBinary(t), append([]string{"chat", "-a", url}, args...)...)
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("parley chat %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("blue\n/quit\nnever sent\n", "input-required")
	checkFloor(t, "chat, piped", out, true)
	if strings.Contains(out, "you>") || strings.Contains(out, "never sent") {
		t.Errorf("a prompt, or a turn after /quit:\n%s", out)
	}
	ids := regexp.MustCompile(`Task ID: (\S+)\nContext ID: (\S+)\nState: (\S+)`).FindAllStringSubmatch(out, -1)
	if len(ids) != 2 || ids[0][1] != ids[1][1] || ids[0][3] != "TASK_STATE_INPUT_REQUIRED" || ids[1][3] != "TASK_STATE_COMPLETED" {
		t.Errorf("the follow-up did not answer the INPUT_REQUIRED task: %v\n%s", ids, out)
	}

	// AUTH_REQUIRED is resolved the same way, in the task (A2A CLI SPEC
	// §12.3): the line after it goes to the task, which the agent then
	// finishes.
	out = run("authorized now\n", "auth-required")
	ids = regexp.MustCompile(`Task ID: (\S+)\nContext ID: (\S+)\nState: (\S+)`).FindAllStringSubmatch(out, -1)
	if len(ids) != 2 || ids[0][1] != ids[1][1] || ids[0][3] != "TASK_STATE_AUTH_REQUIRED" || ids[1][3] != "TASK_STATE_COMPLETED" {
		t.Errorf("the turn after AUTH_REQUIRED did not go to its task: %v\n%s", ids, out)
	}

	out = run("hello\n/new\nhello\n", "-o", "json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("chat -o json: want a line a turn:\n%s", out)
	}
	a, b := jsonOf(t, lines[0]), jsonOf(t, lines[1])
	if field(a, "task", "contextId") == field(b, "task", "contextId") {
		t.Errorf("/new kept the context: %s", out)
	}
}
