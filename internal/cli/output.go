package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// output writes what a client command shows. On a terminal it uses
// colours (unless NO_COLOR is set) and can keep a live status line at the
// bottom; piped, it writes plain lines and nothing decorative.
type output struct {
	w     io.Writer
	errw  io.Writer
	tty   bool // stdout is a terminal
	color bool
	json  bool

	mu       sync.Mutex
	live     string // the live line currently shown ("" if none)
	liveFunc func() string
	stopLive chan struct{}
	liveDone chan struct{}
}

// newOutput returns the output of a command writing to stdout and
// stderr; asJSON is --json.
func newOutput(stdout, stderr io.Writer, asJSON bool) *output {
	tty := isTerminal(stdout)
	return &output{w: stdout, errw: stderr, tty: tty, json: asJSON,
		color: tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

// ANSI colour codes.
const (
	cReset   = "\x1b[0m"
	cBold    = "\x1b[1m"
	cDim     = "\x1b[2m"
	cRed     = "\x1b[31m"
	cGreen   = "\x1b[32m"
	cYellow  = "\x1b[33m"
	cBlue    = "\x1b[34m"
	cMagenta = "\x1b[35m"
)

// paint wraps s in the colour code when colours are on.
func (o *output) paint(code, s string) string {
	if !o.color || s == "" || code == "" {
		return s
	}
	return code + s + cReset
}

// bold emphasises s.
func (o *output) bold(s string) string { return o.paint(cBold, s) }

// dim tones s down.
func (o *output) dim(s string) string { return o.paint(cDim, s) }

// state renders a task state without its prefix, coloured by class.
func (o *output) state(s a2a.TaskState) string { return o.paint(stateColor(s), stateName(s)) }

// stateColor is the colour of a task state's class.
func stateColor(s a2a.TaskState) string {
	switch s {
	case a2a.TaskState_TASK_STATE_COMPLETED:
		return cBold + cGreen
	case a2a.TaskState_TASK_STATE_FAILED, a2a.TaskState_TASK_STATE_REJECTED:
		return cBold + cRed
	case a2a.TaskState_TASK_STATE_CANCELED:
		return cYellow
	case a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		return cBold + cMagenta
	case a2a.TaskState_TASK_STATE_SUBMITTED, a2a.TaskState_TASK_STATE_WORKING:
		return cBlue
	}
	return ""
}

// stateName is a task state without its TASK_STATE_ prefix.
func stateName(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// printf writes to stdout, clearing the live line first.
func (o *output) printf(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearLive()
	fmt.Fprintf(o.w, format, args...)
	o.drawLive()
}

// hint writes advice for a person: on stderr, and only when stdout is a
// terminal (a script gets nothing it would have to filter out).
func (o *output) hint(format string, args ...any) {
	if !o.tty || o.json {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearLive()
	fmt.Fprintf(o.errw, o.dim("→ "+format)+"\n", args...)
	o.drawLive()
}

// jsonLine writes one protocol message as a line of ProtoJSON.
func (o *output) jsonLine(m proto.Message) error {
	b, err := a2a.Marshal(m)
	if err != nil {
		return err
	}
	o.printf("%s\n", b)
	return nil
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device (output sent to /dev/null is not shown to anyone).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// jsonQuote is s as a JSON string.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
