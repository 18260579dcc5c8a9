package execagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one running program: its own process group, its standard output
// as a pipe the agent reads, its standard error logged and its last lines
// kept.
type proc struct {
	cmd    *exec.Cmd
	stdout *os.File      // the read end of the program's standard output
	exited chan struct{} // closed when the program has exited (and was reaped)
	err    error         // what Wait returned; read after exited
	tail   *tailWriter
	grace  time.Duration

	once sync.Once
}

// start runs argv with env in dir, in a new process group, feeding it
// stdin. It returns once the program runs.
//
// The three standard streams are pipes the agent holds itself, so that
// the program's exit is seen at once even when something it left behind
// still holds one of them: the group is then killed, which closes them.
func start(argv, env []string, dir string, stdin []byte, onStderr func(line string), tailLines int, grace time.Duration) (*proc, error) {
	var files []*os.File // every end; those of the program are closed after Start
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var ends [3][2]*os.File // [stream][read, write]
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		ends[i] = [2]*os.File{r, w}
		files = append(files, r, w)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][1], ends[2][1]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	ends[0][0].Close() // the program holds its own copies of its ends
	ends[1][1].Close()
	ends[2][1].Close()
	tail := &tailWriter{max: tailLines, onLine: onStderr}
	p := &proc{cmd: cmd, stdout: ends[1][0], exited: make(chan struct{}), tail: tail, grace: grace}
	go func() { // the input; the write fails (EPIPE) once nothing can read it, which is fine
		_, _ = ends[0][1].Write(stdin)
		ends[0][1].Close()
	}()
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(tail, ends[2][0])
		ends[2][0].Close()
		close(stderrDone)
	}()
	go func() {
		p.err = cmd.Wait()
		// Whatever the program left behind in its group goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t := time.NewTimer(grace) // the rest of standard error, for the tail
		defer t.Stop()
		select {
		case <-stderrDone:
		case <-t.C:
		}
		close(p.exited)
	}()
	return p, nil
}

// terminate stops the program: SIGTERM to its process group, then SIGKILL
// when it has not exited after the grace period. It returns once the
// program has exited. It is safe to call more than once.
func (p *proc) terminate() {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		select {
		case <-p.exited:
			return
		default:
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	<-p.exited
}

// watch terminates the program when ctx ends before it exits.
func (p *proc) watch(ctx context.Context) {
	go func() {
		select {
		case <-ctx.Done():
			p.terminate()
		case <-p.exited:
		}
	}()
}

// exitReason describes how the program ended, "" when it exited with
// status 0.
func (p *proc) exitReason() string {
	if p.err == nil {
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("the program was killed by signal %s", ws.Signal())
		}
		return fmt.Sprintf("the program exited with status %d", ee.ExitCode())
	}
	return fmt.Sprintf("the program failed: %v", p.err)
}

// tailWriter keeps the last max complete lines written to it (each cut to
// maxTailLine bytes) and the line being written, and hands each complete
// line to onLine.
type tailWriter struct {
	mu     sync.Mutex
	max    int
	onLine func(line string)
	lines  []string
	cur    []byte
}

// maxTailLine bounds each kept line of standard error.
const maxTailLine = 512

// Write implements io.Writer.
func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range b {
		if c == '\n' {
			t.push()
			continue
		}
		if len(t.cur) < maxTailLine {
			t.cur = append(t.cur, c)
		}
	}
	return len(b), nil
}

// push ends the current line. Callers hold t.mu.
func (t *tailWriter) push() {
	line := string(t.cur)
	t.lines = append(t.lines, line)
	t.cur = t.cur[:0]
	if t.onLine != nil {
		t.onLine(line)
	}
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// String returns the kept lines, joined by newlines.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.cur) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.cur))
		if len(lines) > t.max {
			lines = lines[1:]
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
