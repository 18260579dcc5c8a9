package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestCommandExitCodes runs the client commands against the conformance
// agent and checks each exit code (A2A CLI SPEC §6.6, §11.6): 0 whenever
// the command did its job, whatever state the task ends or stops in (a
// state other than COMPLETED named in a warning on stderr; the command
// returns at once, even on a stream the server keeps open through
// AUTH_REQUIRED); 1 an error the agent returned; 2 usage; 3 unreachable;
// 5 --timeout expired.
func TestCommandExitCodes(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr

	t.Run("send", func(t *testing.T) {
		modes := map[string][]string{
			"blocking":    nil,
			"json":        {"-o", "json"},
			"stream":      {"--stream"},
			"stream json": {"--stream", "-o", "json"},
		}
		for _, tc := range []struct {
			text    string
			shown   string // in the text output
			warning string // on stderr
		}{
			{"hello", "COMPLETED", ""},
			{"message", "Role: agent\n", ""},
			{"fail", "FAILED", "ended FAILED"},
			{"reject", "REJECTED", "ended REJECTED"},
			{"input-required", "INPUT_REQUIRED", "stopped INPUT_REQUIRED; reply with: parley send -a " + url + " --task-id "},
			{"auth-required", "AUTH_REQUIRED", "stopped AUTH_REQUIRED"},
		} {
			for mode, flags := range modes {
				t.Run(tc.text+" "+mode, func(t *testing.T) {
					t.Parallel()
					start := time.Now()
					out, errs := mustRun(t, 0, append([]string{"send", "-a", url, tc.text}, flags...)...)
					if !strings.Contains(mode, "json") {
						contains(t, "stdout", out, tc.shown)
					}
					if tc.warning == "" && strings.Contains(errs, "warning") {
						t.Errorf("stderr warns of a completed task: %s", errs)
					}
					contains(t, "stderr", errs, tc.warning)
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
		out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		out, _ = mustRun(t, 0, "send", url, "--task", id, "the missing piece", "--stream")
		contains(t, "follow-up stream", out, "Task ID: "+id+"\n", "State: TASK_STATE_INPUT_REQUIRED\n", "State: TASK_STATE_COMPLETED")
	})

	t.Run("task wait and get", func(t *testing.T) {
		ids := map[string]string{}
		for _, text := range []string{"hello", "fail", "reject", "input-required", "auth-required"} {
			out, _ := mustRun(t, 0, "send", url, text, "--async", "--json")
			ids[text] = field(jsonOf(t, out), "task", "id").(string)
		}
		for text, warn := range map[string]string{"hello": "", "fail": "ended FAILED", "reject": "ended REJECTED",
			"input-required": "stopped INPUT_REQUIRED", "auth-required": "stopped AUTH_REQUIRED"} {
			for _, wait := range [][]string{{"task", "wait", url, ids[text]}, {"task", "get", "-a", url, "--wait", ids[text]}} {
				_, errs := mustRun(t, 0, wait...)
				contains(t, strings.Join(wait, " "), errs, warn)
			}
			mustRun(t, 0, "task", "get", url, ids[text]) // get only shows the task
		}
		// A canceled task: wait exits 0, and warns.
		out, _ := mustRun(t, 0, "send", url, "slow 60000", "--async", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		mustRun(t, 0, "task", "cancel", url, id)
		out, errs := mustRun(t, 0, "task", "wait", url, id)
		contains(t, "task wait", out, "CANCELED")
		contains(t, "task wait", errs, "ended CANCELED")
	})

	t.Run("task subscribe", func(t *testing.T) {
		// A task already waiting for input: subscribe returns at once.
		out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		out, _ = mustRun(t, 0, "task", "subscribe", url, id)
		contains(t, "task subscribe", out, "Task ID: "+id+"\n", "State: TASK_STATE_INPUT_REQUIRED\n")

		// A task canceled while subscribed: 0, with a warning.
		out, _ = mustRun(t, 0, "send", url, "slow 60000", "--async", "--json")
		id = field(jsonOf(t, out), "task", "id").(string)
		cmd := exec.Command(testkit.ParleyBinary(t), "task", "subscribe", url, id)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		sub := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley task subscribe", KillAtCleanup: true})
		if _, err := sub.WaitLine(func(l string) bool { return strings.Contains(l, "Task ID: "+id) }, 20*time.Second); err != nil {
			t.Fatalf("task subscribe showed no task: %v\n%s", err, sub.Stderr())
		}
		mustRun(t, 0, "task", "cancel", url, id)
		select {
		case <-sub.Exited():
		case <-time.After(20 * time.Second):
			t.Fatal("task subscribe did not return after the task was canceled")
		}
		if err := sub.Wait(); err != nil {
			t.Fatalf("task subscribe of a canceled task: %v, want exit status 0\n%s%s", err, sub.Stdout(), sub.Stderr())
		}
		contains(t, "task subscribe", sub.Stdout(), "State: TASK_STATE_CANCELED")
		contains(t, "task subscribe", sub.Stderr(), "ended CANCELED")
	})

	t.Run("failures", func(t *testing.T) {
		mustRun(t, 2, "send")                                                   // usage
		mustRun(t, 2, "task", "wait", url)                                      // usage: no id
		mustRun(t, 3, "send", "http://"+testkit.FreeAddr(t), "hello")           // unreachable
		mustRun(t, 3, "task", "wait", "http://"+testkit.FreeAddr(t), "x")       // unreachable
		mustRun(t, 1, "task", "get", url, "no-such-task")                       // an error answer
		mustRun(t, 1, "task", "wait", url, "no-such-task")                      // an error answer
		mustRun(t, 1, "send", url, "--task", "no-such-task", "hi", "--stream")  // an error answer
		mustRun(t, 5, "send", url, "slow 60000", "--timeout", "300ms")          // --timeout expired
		mustRun(t, 5, "task", "get", "-a", url, "--wait", "--timeout", "300ms", // --timeout expired while waiting
			field(jsonOf(t, must(mustRun(t, 0, "send", url, "slow 60000", "--async", "-o", "json"))), "task", "id").(string))
	})
}

// must is the first of two results.
func must(s, _ string) string { return s }

// TestErrorEnvelope: with -o json a failure is the one error envelope of
// A2A CLI SPEC Appendix B on stdout, and nothing else there; an error the
// agent returned carries its A2A name and number on every binding alike
// (SPEC §11.4), the command's own an A2ACLI_ERR_ code.
func TestErrorEnvelope(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	envelope := func(t *testing.T, want int, args ...string) map[string]any {
		t.Helper()
		out, _ := mustRun(t, want, args...)
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Fatalf("stdout holds more than the envelope:\n%s", out)
		}
		e, ok := jsonOf(t, out)["error"].(map[string]any)
		if !ok || e["message"] == "" {
			t.Fatalf("not an error envelope: %s", out)
		}
		for _, k := range []string{"code", "message", "hint", "a2aCode"} {
			if _, ok := e[k]; !ok {
				t.Errorf("the envelope lacks %q: %s", k, out)
			}
		}
		return e
	}
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{
				{"task", "get", "-a", url, "no-such-task"},
				{"task", "cancel", "-a", url, "no-such-task"},
				{"send", "-a", url, "--task-id", "no-such-task", "hi"},
				{"send", "-a", url, "--task-id", "no-such-task", "hi", "--stream"},
			} {
				e := envelope(t, 1, append(args, "-o", "json", "--transport", b)...)
				if e["code"] != "TaskNotFoundError" || e["a2aCode"] != float64(-32001) || e["hint"] == nil {
					t.Errorf("%s: %v", strings.Join(args, " "), e)
				}
			}
		})
	}
	for _, c := range []struct {
		want int
		code string
		args []string
	}{
		{2, "A2ACLI_ERR_USAGE", []string{"send", "-a", url, "-o", "json"}},
		{3, "A2ACLI_ERR_UNREACHABLE", []string{"send", "-a", "http://" + testkit.FreeAddr(t), "hi", "-o", "json"}},
		{3, "A2ACLI_ERR_CARD_NOT_FOUND", []string{"card", "get", "-a", url + "/nowhere/card.json", "-o", "json"}},
		{5, "A2ACLI_ERR_TIMEOUT", []string{"send", "-a", url, "slow 60000", "--timeout", "300ms", "-o", "json"}},
	} {
		if e := envelope(t, c.want, c.args...); e["code"] != c.code || e["a2aCode"] != nil {
			t.Errorf("%s: %v, want code %s", strings.Join(c.args, " "), e, c.code)
		}
	}
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
	contains(t, "task subscribe", out, "Task ID: "+id, "\nArtifact ID: stream\nArtifact:\n  "+all.String()+"\n\n", "State: TASK_STATE_COMPLETED")
	if c := strings.Count(out, "Artifact ID: stream"); c != 1 {
		t.Errorf("the artifact is shown %d times, want once:\n%s", c, out)
	}
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
}
