package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// TestTaskGetWaitChange: `task get --wait-change` waits for the task's
// next change, through the server's timeouts (--long-poll-timeout), and
// prints the task then, on every binding; an agent that does not serve
// A2A 1.1 gets an error that says what it needs.
func TestTaskGetWaitChange(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--protocol-versions", "1.1,1.0,0.3", "--long-poll-timeout", "200ms")
	url := "http://" + p.addr
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
		id := field(jsonOf(t, out), "task", "id").(string)
		before, _ := mustRun(t, 0, "task", "get", url, id, "--a2a-version", "1.1", "--json")
		gen := fmt.Sprint(field(jsonOf(t, before), "generation"))

		cmd := exec.Command(testkit.ParleyBinary(t), "task", "get", url, id, "--wait-change", "--binding", b, "--json")
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		var waited, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &waited, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // not needed for the outcome: lets a hold or two time out first
		mustRun(t, 0, "send", url, "--task", id, "the missing piece")
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("--wait-change --binding %s: %v\nstdout:\n%s\nstderr:\n%s", b, err, &waited, &errb)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("--wait-change --binding %s never returned\nstderr:\n%s", b, &errb)
		}
		// The first change is the follow-up's own timeline entry (1.1,
		// spec §3.2.7), which the agent's COMPLETED may have followed
		// by the time the answer is made.
		m := jsonOf(t, waited.String())
		if field(m, "id") != id || fmt.Sprint(field(m, "generation")) == gen ||
			(field(m, "status", "state") != "TASK_STATE_COMPLETED" && !bytes.Contains(waited.Bytes(), []byte("the missing piece"))) {
			t.Errorf("--wait-change --binding %s printed %s; want the task changed past generation %s", b, &waited, gen)
		}
	}

	q := serve(t, "--agent", "conformance", "--store", "memory")
	out, _ := mustRun(t, 0, "send", "http://"+q.addr, "input-required", "--json")
	_, errs, code := parley(t, "task", "get", "http://"+q.addr, field(jsonOf(t, out), "task", "id").(string), "--wait-change")
	if code == 0 {
		t.Fatalf("--wait-change against an agent without 1.1: exit 0")
	}
	contains(t, "stderr", errs, "--protocol-versions 1.1")
}
