package cli_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestCommandExitCodes runs the client commands against the conformance agent
// and checks each exit code: 0 completed or a direct reply, 2 usage, 3
// unreachable, 4 an error answer, 5 FAILED/REJECTED/CANCELED, 6
// INPUT_REQUIRED/AUTH_REQUIRED (the command returns at once, even on a
// stream the server keeps open through AUTH_REQUIRED).
func TestCommandExitCodes(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr

	t.Run("send", func(t *testing.T) {
		modes := map[string][]string{
			"blocking":    nil,
			"json":        {"--json"},
			"stream":      {"--stream"},
			"stream json": {"--stream", "--json"},
		}
		for _, tc := range []struct {
			text  string
			want  int
			shown string // in the text output
		}{
			{"hello", 0, "COMPLETED"},
			{"message", 0, "agent: pong"},
			{"fail", 5, "FAILED"},
			{"reject", 5, "REJECTED"},
			{"input-required", 6, "INPUT_REQUIRED"},
			{"auth-required", 6, "AUTH_REQUIRED"},
		} {
			for mode, flags := range modes {
				t.Run(tc.text+" "+mode, func(t *testing.T) {
					t.Parallel()
					start := time.Now()
					out, _ := mustRun(t, tc.want, append([]string{"send", url, tc.text}, flags...)...)
					if !strings.Contains(mode, "json") {
						contains(t, "stdout", out, tc.shown)
					}
					if d := time.Since(start); d > 20*time.Second {
						t.Errorf("took %v: the command did not return when the task settled", d)
					}
				})
			}
		}
	})

	t.Run("async", func(t *testing.T) {
		// --async exits 0 once the agent has the task, whatever its state.
		for _, text := range []string{"hello", "fail", "input-required"} {
			mustRun(t, 0, "send", url, text, "--async")
		}
	})

	t.Run("follow-up stream", func(t *testing.T) {
		// The follow-up's stream starts with the task as it was
		// (INPUT_REQUIRED): not a stop; the task then completes.
		out, _ := mustRun(t, 6, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		out, _ = mustRun(t, 0, "send", url, "--task", id, "the missing piece", "--stream")
		contains(t, "follow-up stream", out, "task "+id+"  INPUT_REQUIRED", "status COMPLETED")
	})

	t.Run("task wait and get", func(t *testing.T) {
		ids := map[string]string{}
		for _, text := range []string{"hello", "fail", "reject", "input-required", "auth-required"} {
			out, _ := mustRun(t, 0, "send", url, text, "--async", "--json")
			ids[text] = field(jsonOf(t, out), "task", "id").(string)
		}
		for text, want := range map[string]int{"hello": 0, "fail": 5, "reject": 5, "input-required": 6, "auth-required": 6} {
			mustRun(t, want, "task", "wait", url, ids[text])
			mustRun(t, 0, "task", "get", url, ids[text]) // get only shows the task
		}
		// A canceled task: wait exits 5.
		out, _ := mustRun(t, 0, "send", url, "slow 60000", "--async", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		mustRun(t, 0, "task", "cancel", url, id)
		out, _ = mustRun(t, 5, "task", "wait", url, id)
		contains(t, "task wait", out, "CANCELED")
	})

	t.Run("task subscribe", func(t *testing.T) {
		// A task already waiting for input: subscribe returns at once.
		out, _ := mustRun(t, 6, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		out, _ = mustRun(t, 6, "task", "subscribe", url, id)
		contains(t, "task subscribe", out, "task "+id+"  INPUT_REQUIRED")

		// A task canceled while subscribed: 5.
		out, _ = mustRun(t, 0, "send", url, "slow 60000", "--async", "--json")
		id = field(jsonOf(t, out), "task", "id").(string)
		cmd := exec.Command(testkit.ParleyBinary(t), "task", "subscribe", url, id)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		sub := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley task subscribe", KillAtCleanup: true})
		if _, err := sub.WaitLine(func(l string) bool { return strings.Contains(l, "task "+id) }, 20*time.Second); err != nil {
			t.Fatalf("task subscribe showed no task: %v\n%s", err, sub.Stderr())
		}
		mustRun(t, 0, "task", "cancel", url, id)
		select {
		case <-sub.Exited():
		case <-time.After(20 * time.Second):
			t.Fatal("task subscribe did not return after the task was canceled")
		}
		var ee *exec.ExitError
		if err := sub.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 5 {
			t.Fatalf("task subscribe of a canceled task: %v, want exit status 5\n%s%s", err, sub.Stdout(), sub.Stderr())
		}
		contains(t, "task subscribe", sub.Stdout(), "status CANCELED")
	})

	t.Run("failures", func(t *testing.T) {
		mustRun(t, 2, "send")                                                  // usage
		mustRun(t, 2, "task", "wait", url)                                     // usage: no id
		mustRun(t, 3, "send", "http://"+testkit.FreeAddr(t), "hello")          // unreachable
		mustRun(t, 3, "task", "wait", "http://"+testkit.FreeAddr(t), "x")      // unreachable
		mustRun(t, 4, "task", "get", url, "no-such-task")                      // an error answer
		mustRun(t, 4, "task", "wait", url, "no-such-task")                     // an error answer
		mustRun(t, 4, "send", url, "--task", "no-such-task", "hi", "--stream") // an error answer
	})
}

// TestSubscribeShowsSnapshotArtifacts: `parley task subscribe` in text
// mode shows the artifact chunks that came before it subscribed (the Task
// snapshot holds them), continued by the chunks that follow, once each.
func TestSubscribeShowsSnapshotArtifacts(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	const n = 50
	out, _ := mustRun(t, 0, "send", url, fmt.Sprintf("stream %d every 150", n), "--async", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	deadline := time.Now().Add(20 * time.Second)
	for {
		arts, _ := field(p.getJSON(t, "/tasks/"+id), "artifacts").([]any)
		if len(arts) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task has no artifact yet")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, errs := mustRun(t, 0, "task", "subscribe", url, id)
	var all strings.Builder
	for i := range n {
		fmt.Fprintf(&all, "chunk %d", i)
	}
	contains(t, "task subscribe", out, "task "+id, "\nartifact stream: "+all.String()+"\n", "status COMPLETED")
	if c := strings.Count(out, "artifact stream"); c != 1 {
		t.Errorf("the artifact is shown %d times, want once:\n%s", c, out)
	}
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
}
