package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stopGrace is how long a process may take to exit after an interrupt
// before it is killed.
const stopGrace = 5 * time.Second

// ProcessOptions adjusts StartProcess.
type ProcessOptions struct {
	// Name is what messages and logs call the process; "" means the base
	// name of the command.
	Name string
	// KillAtCleanup kills the process at the end of the test at once,
	// instead of interrupting it and killing it only if it has not exited
	// 5 s later.
	KillAtCleanup bool
}

// Process is a child process started by StartProcess. Its standard output
// is kept line by line and its standard error as text; both are logged
// when the test fails. Its methods may be called from any goroutine.
type Process struct {
	cmd    *exec.Cmd
	name   string
	stdout lineWriter
	stderr SyncBuffer
	exited chan struct{} // closed once the process has exited
	err    error         // the exit status, set before exited is closed
}

// StartProcess starts cmd, taking over its Stdout and Stderr, and stops it
// when the test ends (see ProcessOptions). A command that cannot start
// fails the test.
func StartProcess(tb testing.TB, cmd *exec.Cmd, o *ProcessOptions) *Process {
	tb.Helper()
	if o == nil {
		o = &ProcessOptions{}
	}
	p := &Process{cmd: cmd, name: o.Name, exited: make(chan struct{})}
	if p.name == "" {
		p.name = filepath.Base(cmd.Path)
	}
	p.stdout.changed = make(chan struct{})
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	// A grandchild holding the output open must not keep Wait waiting.
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", p.name, err)
	}
	go func() {
		p.err = cmd.Wait()
		p.stdout.flush()
		close(p.exited)
	}()
	tb.Cleanup(func() {
		if o.KillAtCleanup {
			p.Kill()
		} else {
			p.Stop()
		}
		if tb.Failed() {
			tb.Logf("%s stdout:\n%s\n%s stderr:\n%s", p.name, p.Stdout(), p.name, p.Stderr())
		}
	})
	return p
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Err is the process's exit status (as from exec.Cmd.Wait), once Exited
// is closed.
func (p *Process) Err() error {
	<-p.exited
	return p.err
}

// Wait waits for the process to exit and returns its exit status.
func (p *Process) Wait() error { return p.Err() }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop interrupts the process and waits for it to exit, killing it if it
// has not exited after 5 s. Stopping a process that has exited does
// nothing.
func (p *Process) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		p.Kill()
	}
}

// Kill kills the process and waits for it to exit.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Lines returns the lines the process has written to its standard output
// so far.
func (p *Process) Lines() []string { return p.stdout.all() }

// Stdout returns what the process has written to its standard output so
// far, one complete line after another.
func (p *Process) Stdout() string {
	var b strings.Builder
	for _, l := range p.stdout.all() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Stderr returns what the process has written to its standard error so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// WaitLine waits up to timeout for a line of standard output for which
// match holds, and returns it. It returns an error, with the process's
// standard error, when the process exits or the time runs out first.
func (p *Process) WaitLine(match func(line string) bool, timeout time.Duration) (string, error) {
	deadline := time.After(timeout)
	seen := 0
	for {
		lines, changed := p.stdout.since(seen)
		for _, l := range lines {
			if match(l) {
				return l, nil
			}
		}
		seen += len(lines)
		select {
		case <-changed:
		case <-p.exited:
			if lines, _ := p.stdout.since(seen); len(lines) > 0 {
				continue // lines written just before the exit
			}
			return "", fmt.Errorf("%s exited (%v) before the awaited line; stderr:\n%s", p.name, p.err, p.Stderr())
		case <-deadline:
			return "", fmt.Errorf("%s printed no awaited line within %v; stderr:\n%s", p.name, timeout, p.Stderr())
		}
	}
}

// WaitReady waits up to timeout for the line "READY BASE_URL" that a
// test's server prints once it serves, and returns BASE_URL. It returns
// an error, with the process's standard error, when the process exits or
// the time runs out first.
func (p *Process) WaitReady(timeout time.Duration) (string, error) {
	line, err := p.WaitLine(func(l string) bool { return strings.HasPrefix(l, "READY ") }, timeout)
	return strings.TrimSpace(strings.TrimPrefix(line, "READY ")), err
}

// WaitUntil polls ready every 100 ms for up to timeout. It returns an
// error, with the process's output, when the process exits or the time
// runs out before ready holds.
func (p *Process) WaitUntil(ready func() bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !ready() {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before becoming ready (%v); output:\n%s%s", p.name, p.err, p.Stdout(), p.Stderr())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %v; output:\n%s%s", p.name, timeout, p.Stdout(), p.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// lineWriter keeps what is written to it as complete lines, and signals
// each new one.
type lineWriter struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	changed chan struct{} // closed and replaced when lines grow
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, b...)
	n := len(w.lines)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, strings.TrimSuffix(string(w.partial[:i]), "\r"))
		w.partial = w.partial[i+1:]
	}
	if len(w.lines) > n {
		w.notify()
	}
	return len(b), nil
}

// flush keeps a last line that has no end of line.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.lines = append(w.lines, string(w.partial))
		w.partial = nil
		w.notify()
	}
}

func (w *lineWriter) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *lineWriter) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// since returns the lines after the first n, and a channel closed when
// there are more.
func (w *lineWriter) since(n int) ([]string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines[n:]...), w.changed
}
