package execagent_test

// Tests of the exec agent over the wire: a Parley server on a loopback port
// runs small shell scripts, and Parley's client drives it.

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/agents/execagent"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// guard bounds every test's calls so that a bug fails instead of hanging.
const guard = 20 * time.Second

// start serves an exec agent running the shell script with o (Command is
// set from script) and returns a client for it.
func start(t *testing.T, script string, o execagent.Options) *client.Client {
	t.Helper()
	o.Command = []string{"sh", "-c", script}
	o.Logger = testkit.DiscardLogger
	a, err := execagent.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true, CheckClose: true})
	c, err := client.New(srv.Card, &client.Options{HTTPClient: testkit.H2CClient()})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// statusText is the text of the task's status message.
func statusText(task *a2a.Task) string {
	return a2a.JoinText(task.GetStatus().GetMessage().GetParts())
}

func output(task *a2a.Task) string {
	for _, a := range task.GetArtifacts() {
		if a.GetArtifactId() == execagent.OutputArtifactID {
			return a2a.ArtifactText(a)
		}
	}
	return ""
}

func TestTextInputAndOutput(t *testing.T) {
	c := start(t, `tr a-z A-Z`, execagent.Options{})
	task := testkit.SendTask(t, ctxFor(t), c, "hello\nworld", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || output(task) != "HELLO\nWORLD\n" {
		t.Fatalf("task %v, output %q; want COMPLETED, HELLO WORLD", task.GetStatus(), output(task))
	}
}

func TestEnvironment(t *testing.T) {
	c := start(t, `echo "$PARLEY_TASK_ID|$PARLEY_CONTEXT_ID|$PARLEY_TASK_STATE|$EXTRA"`, execagent.Options{Env: []string{"EXTRA=x"}})
	task := testkit.SendTask(t, ctxFor(t), c, "hi", nil)
	want := task.GetId() + "|" + task.GetContextId() + "||x\n"
	if got := output(task); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestExitStatusFails(t *testing.T) {
	c := start(t, `echo partial; echo first problem >&2; echo the real problem >&2; exit 3`, execagent.Options{})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	msg := statusText(task)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(msg, "status 3") || !strings.Contains(msg, "the real problem") {
		t.Fatalf("status %v %q; want FAILED naming status 3 and the last stderr line", task.GetStatus().GetState(), msg)
	}
	if output(task) != "partial\n" {
		t.Errorf("output %q, want the output written before the failure", output(task))
	}
}

func TestCommandNotFound(t *testing.T) {
	a, err := execagent.New(execagent.Options{Command: []string{"/nonexistent/program"}, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	srv := testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true})
	c, _ := client.New(srv.Card, &client.Options{HTTPClient: testkit.H2CClient()})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), "could not be started") {
		t.Fatalf("status %v %q; want FAILED, could not be started", task.GetStatus().GetState(), statusText(task))
	}
}

// TestStreamsBeforeExit: the first line reaches the client while the
// program is still running (it waits for a file the test creates only
// after seeing that line).
func TestStreamsBeforeExit(t *testing.T) {
	for _, chunk := range []execagent.Chunking{execagent.Lines, execagent.Bytes} {
		t.Run(strconv.Itoa(int(chunk)), func(t *testing.T) {
			gate := filepath.Join(t.TempDir(), "gate")
			c := start(t, `printf 'first\n'; while [ ! -e "`+gate+`" ]; do sleep 0.02; done; printf 'second\n'`, execagent.Options{Chunk: chunk})
			ctx := ctxFor(t)
			var as a2a.ArtifactAssembler
			var kinds []string
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("go")}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				as.Add(ev)
				kinds = append(kinds, testkit.Kinds([]a2a.StreamEvent{ev})...)
				if u := ev.Response.GetArtifactUpdate(); u != nil && a2a.ArtifactText(u.GetArtifact()) == "first\n" {
					if err := os.WriteFile(gate, nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			if as.Text(execagent.OutputArtifactID) != "first\nsecond\n" || !as.Done(execagent.OutputArtifactID) {
				t.Fatalf("artifact %q (done %v), events %q; want first, second, finished", as.Text(execagent.OutputArtifactID), as.Done(execagent.OutputArtifactID), kinds)
			}
			if kinds[len(kinds)-1] != "status:TASK_STATE_COMPLETED" {
				t.Fatalf("events %q, want COMPLETED last", kinds)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	c := start(t, `sleep 30`, execagent.Options{Timeout: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	began := time.Now()
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), "ran longer than 200ms") {
		t.Fatalf("status %v %q; want FAILED, ran longer", task.GetStatus().GetState(), statusText(task))
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("took %v: the program was not stopped", d)
	}
}

// TestFloodIsBounded: a program writing without end is stopped at
// MaxOutput, its task fails, and the artifact holds exactly the bound.
func TestFloodIsBounded(t *testing.T) {
	for _, f := range []execagent.Format{execagent.Text, execagent.JSONLines} {
		c := start(t, `yes '{"state":"WORKING"}'`, execagent.Options{MaxOutput: 64 << 10, Format: f})
		task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
		if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), "more than 65536 bytes") {
			t.Fatalf("format %d: status %v %q; want FAILED, more than 65536 bytes", f, task.GetStatus().GetState(), statusText(task))
		}
		if f == execagent.Text && len(output(task)) != 64<<10 {
			t.Errorf("output of %d bytes, want 65536", len(output(task)))
		}
	}
}

// alive reports whether pid runs (a zombie no longer counts).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// waitGone fails the test unless every pid has stopped within guard.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pids reads the process ids a script printed, one per line.
func pids(t *testing.T, text string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(text) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q: %v", text, err)
		}
		out = append(out, n)
	}
	return out
}

// TestCancelIgnoringSIGTERM: a program that ignores SIGTERM, with a child,
// is killed with its whole group after the grace period once its task is
// canceled.
func TestCancelIgnoringSIGTERM(t *testing.T) {
	c := start(t, `trap '' TERM; echo $$; sleep 30 & echo $!; wait; wait`, execagent.Options{Grace: 300 * time.Millisecond})
	ctx := ctxFor(t)
	var as a2a.ArtifactAssembler
	var taskID string
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		as.Add(ev)
		taskID = ev.TaskID()
		if strings.Count(as.Text(execagent.OutputArtifactID), "\n") == 2 {
			break
		}
	}
	ids := pids(t, as.Text(execagent.OutputArtifactID))
	task, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: taskID})
	if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", task.GetStatus(), err)
	}
	waitGone(t, ids...)
}

// TestGroupCleanedUp: a background child the program leaves behind is
// killed when the program exits.
func TestGroupCleanedUp(t *testing.T) {
	c := start(t, `sleep 30 >/dev/null 2>&1 & echo $!`, execagent.Options{})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("status %v, want COMPLETED", task.GetStatus())
	}
	waitGone(t, pids(t, output(task))...)
}

// TestChildHoldingTheStreams: a background child that keeps standard
// output and error open does not hold the task past the program's exit.
func TestChildHoldingTheStreams(t *testing.T) {
	c := start(t, `sleep 30 & echo $!; echo bye >&2`, execagent.Options{Grace: 10 * time.Second})
	began := time.Now()
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("status %v, want COMPLETED", task.GetStatus())
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took %v: the task waited for the child", d)
	}
	waitGone(t, pids(t, output(task))...)
}

// TestConcurrencyLimit: with one slot, a second message waits SUBMITTED
// until the first program ends.
func TestConcurrencyLimit(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	c := start(t, `while [ ! -e "`+gate+`" ]; do sleep 0.02; done; echo done`, execagent.Options{Concurrency: 1})
	ctx := ctxFor(t)
	async := &a2a.SendMessageConfiguration{ReturnImmediately: true}
	first := testkit.SendTask(t, ctx, c, "1", async)
	second := testkit.SendTask(t, ctx, c, "2", async)
	if second.GetStatus().GetState() != a2a.TaskState_TASK_STATE_SUBMITTED || !strings.Contains(statusText(second), "waiting") {
		t.Fatalf("second task %v, want SUBMITTED with a waiting message", second.GetStatus())
	}
	if got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: first.GetId()}); err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_WORKING {
		t.Fatalf("first task %v, %v; want WORKING", got.GetStatus(), err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first.GetId(), second.GetId()} {
		task, err := c.WaitForCompletion(ctx, id)
		if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("task %s: %v, %v; want COMPLETED", id, task.GetStatus(), err)
		}
	}
}
