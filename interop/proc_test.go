package interop_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// child is a server process a test started.
type child struct {
	cmd     *exec.Cmd
	logs    *syncBuffer
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
}

// startChild starts cmd and watches for its exit.
func startChild(cmd *exec.Cmd, logs *syncBuffer) (*child, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	c := &child{cmd: cmd, logs: logs, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// stop interrupts the process, and kills it if it has not exited after 5 s.
func (c *child) stop() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// stopAtCleanup stops the process when the test ends, logging its output if
// the test failed.
func (c *child) stopAtCleanup(t *testing.T, what string) {
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", what, c.logs.String())
		}
	})
}

// startOnFreePort calls try with a free port, up to three times: a port
// found free can be taken by someone else before the server binds it.
func startOnFreePort(t *testing.T, what string, try func(port int) (string, error)) string {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		base, err := try(freePort(t))
		if err == nil {
			return base
		}
		lastErr = err
	}
	t.Fatalf("%s did not start: %v", what, lastErr)
	return ""
}
