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
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents/execagent"
	"parley.dev/parley/internal/testkit"
)

// guard bounds every test's calls so that a bug fails instead of hanging.
const guard = 20 * time.Second

// start serves an exec agent running the shell script with o (Command is
// set from script) and returns a client for it.
func start(t *testing.T, script string, o execagent.Options) *client.Client {
	t.Helper()
	o.Command = []string{"sh", "-c", script}
	return startAgent(t, o)
}

// startAgent serves an exec agent with o and returns a client for it.
func startAgent(t *testing.T, o execagent.Options) *client.Client {
	t.Helper()
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

// TestCommandNotFound: a program that cannot be run is refused by New,
// before any message; one that goes away afterwards fails each task.
func TestCommandNotFound(t *testing.T) {
	for _, cmd := range []string{"/nonexistent/program", "./nonexistent", "no-such-program-in-path"} {
		if _, err := execagent.New(execagent.Options{Command: []string{cmd}}); err == nil || !strings.Contains(err.Error(), "cannot run") {
			t.Errorf("New(%q): %v, want cannot run", cmd, err)
		}
	}
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := execagent.New(execagent.Options{Command: []string{prog}, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(prog)
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
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), "timed out after 200ms") {
		t.Fatalf("status %v %q; want FAILED, timed out", task.GetStatus().GetState(), statusText(task))
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

// TestConcurrencyLimit: with one slot, a second message waits SUBMITTED,
// shown as queued, until the first program ends.
func TestConcurrencyLimit(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	c := start(t, `while [ ! -e "`+gate+`" ]; do sleep 0.02; done; echo done`, execagent.Options{Concurrency: 1})
	ctx := ctxFor(t)
	async := &a2a.SendMessageConfiguration{ReturnImmediately: true}
	first := testkit.SendTask(t, ctx, c, "1", async)
	second := testkit.SendTask(t, ctx, c, "2", async)
	if second.GetStatus().GetState() != a2a.TaskState_TASK_STATE_SUBMITTED || statusText(second) != "queued: 0 ahead" {
		t.Fatalf("second task %v, want SUBMITTED, queued: 0 ahead", second.GetStatus())
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

// lines reads a file the programs append to, one entry a line ("" lines
// dropped); a missing file has none.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// eventually fails the test unless cond holds within guard, saying what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQueueOrderAndBound: with two slots and six messages, two programs
// run and never more (each counts the running ones as it starts), the
// other four wait SUBMITTED as "queued: N ahead" with N following the
// queue, they start in the order they came, and a task canceled while
// queued leaves the queue without its program ever starting.
func TestQueueOrderAndBound(t *testing.T) {
	dir := t.TempDir()
	script := `d=` + dir + `
touch "$d/run.$PARLEY_TASK_ID"
ls "$d" | grep -c '^run\.' >>"$d/counts"
echo "$PARLEY_TASK_ID" >>"$d/started"
while [ ! -e "$d/go.$PARLEY_TASK_ID" ]; do sleep 0.02; done
rm "$d/run.$PARLEY_TASK_ID"`
	c := start(t, script, execagent.Options{Concurrency: 2})
	ctx := ctxFor(t)
	async := &a2a.SendMessageConfiguration{ReturnImmediately: true}
	var ids []string
	for i := range 6 {
		task := testkit.SendTask(t, ctx, c, strconv.Itoa(i), async)
		ids = append(ids, task.GetId())
		if i < 2 {
			continue
		}
		if want := "queued: " + strconv.Itoa(i-2) + " ahead"; task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_SUBMITTED || statusText(task) != want {
			t.Fatalf("task %d: %v %q; want SUBMITTED, %q", i, task.GetStatus().GetState(), statusText(task), want)
		}
	}
	started := filepath.Join(dir, "started")
	release := func(i int) {
		if err := os.WriteFile(filepath.Join(dir, "go."+ids[i]), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// shows waits until task i's status message is want.
	shows := func(i int, want string) {
		t.Helper()
		var got string
		eventually(t, "task "+strconv.Itoa(i)+" to show "+want, func() bool {
			task, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: ids[i]})
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			got = statusText(task)
			return got == want && task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_SUBMITTED
		})
	}
	eventually(t, "two programs to start", func() bool { return len(lines(t, started)) == 2 })

	// Task 3 leaves the queue; those behind it move up.
	task, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: ids[3]})
	if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", task.GetStatus(), err)
	}
	shows(4, "queued: 1 ahead")
	shows(5, "queued: 2 ahead")

	// Each slot freed goes to the first in line.
	order := [][2]int{{0, 2}, {1, 4}, {2, 5}} // finish this one, then that one starts
	for n, o := range order {
		release(o[0])
		eventually(t, "the next program to start", func() bool { return len(lines(t, started)) == 3+n })
		if got := lines(t, started)[2+n]; got != ids[o[1]] {
			t.Fatalf("after task %d ended, task %s started; want task %d (%s)", o[0], got, o[1], ids[o[1]])
		}
		if n == 0 {
			shows(4, "queued: 0 ahead")
			shows(5, "queued: 1 ahead")
		}
	}
	release(4)
	release(5)
	for _, i := range []int{0, 1, 2, 4, 5} {
		task, err := c.WaitForCompletion(ctx, ids[i])
		if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("task %d: %v, %v; want COMPLETED", i, task.GetStatus(), err)
		}
	}
	if got := lines(t, started); len(got) != 5 || strings.Contains(strings.Join(got, " "), ids[3]) {
		t.Errorf("started %q: want five, not the canceled task %s", got, ids[3])
	}
	for _, n := range lines(t, filepath.Join(dir, "counts")) {
		if n != "1" && n != "2" {
			t.Errorf("a program saw %s running, want at most 2 (counts %q)", n, lines(t, filepath.Join(dir, "counts")))
		}
	}
}

// TestTimeoutKillsTheGroup: a program that ignores SIGTERM and runs a
// child that runs a grandchild (both ignoring SIGTERM too) is killed with
// both when it times out, and its task ends FAILED saying so.
func TestTimeoutKillsTheGroup(t *testing.T) {
	c := start(t, `trap '' TERM; echo $$; sh -c 'echo $$; sleep 60 & echo $!; wait' & wait`,
		execagent.Options{Timeout: 2 * time.Second, Grace: 500 * time.Millisecond})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), "timed out after 2s") {
		t.Fatalf("status %v %q; want FAILED, timed out after 2s", task.GetStatus().GetState(), statusText(task))
	}
	ids := pids(t, output(task))
	if len(ids) != 3 {
		t.Fatalf("output %q: want the pids of the program, its child and its grandchild", output(task))
	}
	waitGone(t, ids...)
}

// TestEnvironmentAllowList: a program that prints its environment sees
// only the allow-listed variables of the server's, those named in PassEnv,
// Env, and the task's; not a secret of the server's.
func TestEnvironmentAllowList(t *testing.T) {
	t.Setenv("PARLEY_PUSH_KEY", "a-secret-push-key")
	t.Setenv("EXECTEST_SECRET", "another-secret")
	t.Setenv("EXECTEST_PASSED", "passed-value")
	t.Setenv("LC_EXECTEST", "lc-value")
	c := startAgent(t, execagent.Options{
		Command: []string{"env"},
		PassEnv: []string{"EXECTEST_PASSED", "EXECTEST_UNSET"},
		Env:     []string{"EXTRA=x"},
	})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("status %v, want COMPLETED", task.GetStatus())
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "TZ": true, "TMPDIR": true,
		"EXECTEST_PASSED": true, "EXTRA": true, "PARLEY_TASK_ID": true, "PARLEY_CONTEXT_ID": true,
		"PARLEY_MESSAGE_ID": true, "PARLEY_PRINCIPAL": true, "PARLEY_TENANT": true, "PARLEY_TASK_STATE": true}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(output(task)), "\n") {
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("env printed %q", line)
		}
		got[name] = value
		if !allowed[name] && !strings.HasPrefix(name, "LC_") {
			t.Errorf("the program got %s", name)
		}
	}
	for name, want := range map[string]string{"PATH": os.Getenv("PATH"), "EXECTEST_PASSED": "passed-value",
		"LC_EXECTEST": "lc-value", "EXTRA": "x", "PARLEY_TASK_ID": task.GetId()} {
		if got[name] != want {
			t.Errorf("%s=%q, want %q", name, got[name], want)
		}
	}
	if _, ok := got["EXECTEST_UNSET"]; ok {
		t.Error("a PassEnv name the server lacks is set")
	}
	if strings.Contains(output(task), "secret") {
		t.Errorf("a secret reached the program:\n%s", output(task))
	}
}
