package cli

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// lockedBuffer is a bytes.Buffer safe for the live line's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func streamEvents() []a2a.StreamEvent {
	ev := func(r *a2a.StreamResponse) a2a.StreamEvent { return a2a.StreamEvent{Response: r} }
	chunk := func(text string, appendTo, last bool) a2a.StreamEvent {
		return ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Artifact: a2a.TextArtifact("story", text), Append: appendTo, LastChunk: last}}})
	}
	status := func(s a2a.TaskState) a2a.StreamEvent {
		return ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Status: &a2a.TaskStatus{State: s}}}})
	}
	return []a2a.StreamEvent{
		ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t-1", ContextId: "c-1",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}}}),
		status(a2a.TaskState_TASK_STATE_WORKING),
		chunk("Once ", false, false),
		chunk("upon ", true, false),
		status(a2a.TaskState_TASK_STATE_WORKING), // interrupts the artifact line when piped
		chunk("a time.", true, true),
		status(a2a.TaskState_TASK_STATE_COMPLETED),
	}
}

// TestStreamPrinterPiped: plain lines, artifact text written as it comes
// and reassembled, no colour or terminal codes.
func TestStreamPrinterPiped(t *testing.T) {
	var out bytes.Buffer
	o := &output{w: &out, errw: &out}
	p := newStreamPrinter(o)
	for _, ev := range streamEvents() {
		p.event(ev)
	}
	p.done()
	want := "task t-1  SUBMITTED  context c-1\n" +
		"status WORKING\n" +
		"artifact story: Once upon \n" +
		"status WORKING\n" +
		"artifact story: a time.\n" +
		"status COMPLETED\n"
	if out.String() != want {
		t.Fatalf("piped stream:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestStreamPrinterTerminal: colours, whole artifacts printed once
// reassembled, and a live line that is erased before every permanent
// line and at the end.
func TestStreamPrinterTerminal(t *testing.T) {
	defer func(d time.Duration) { liveAfter = d }(liveAfter)
	liveAfter = 0
	out := &lockedBuffer{}
	o := &output{w: out, errw: out, tty: true, color: true}
	p := newStreamPrinter(o)
	for _, ev := range streamEvents() {
		p.event(ev)
		time.Sleep(30 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond) // let the ticker redraw
	p.done()
	s := out.String()
	for _, want := range []string{
		cBold + cGreen + "COMPLETED" + cReset,
		cBlue + "WORKING" + cReset,
		"artifact" + cReset + " story\n    Once upon a time.\n",
		"\r\x1b[K", // the live line is erased
		"events",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
	if strings.Count(s, "Once upon a time.") != 1 {
		t.Errorf("the artifact should be printed once, whole:\n%q", s)
	}
	// Nothing is left on the live line at the end.
	if !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("live line left behind: %q", s[max(0, len(s)-80):])
	}
}

func TestParseInterspersed(t *testing.T) {
	e := &env{name: "send", stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	fs, c := e.newFlags("send URL TEXT", true)
	stream := fs.Bool("stream", false, "")
	task := fs.String("task", "", "")
	pos, err := e.parse(fs, []string{"--json", "http://a", "--task", "t-1", "hello world", "--stream", "--header", "X-A=1",
		"--a2a-version=", "--", "--not-a-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://a", "hello world", "--not-a-flag"}; !slices.Equal(pos, want) {
		t.Errorf("positional %q, want %q", pos, want)
	}
	if !c.json || !*stream || *task != "t-1" || c.header().Get("X-A") != "1" || !c.versionSet || c.version != "" {
		t.Errorf("flags: json %v stream %v task %q header %v version %v %q", c.json, *stream, *task, c.header(), c.versionSet, c.version)
	}
	if _, err := e.parse(fs, []string{"--nope"}); exitCode(err) != ExitUsage {
		t.Errorf("unknown flag: %v (exit %d)", err, exitCode(err))
	}
	if _, err := e.parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || exitCode(err) != ExitOK {
		t.Errorf("-h: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{usageError{errors.New("x")}, ExitUsage},
		{a2a.NewError(a2a.CodeTaskNotFound, "gone"), ExitA2A},
		{&client.TransportError{Op: "GetTask", Phase: client.PhaseConnect, Err: errors.New("refused")}, ExitTransport},
		{&client.StreamEndedError{TaskID: "t"}, ExitTransport},
		{&client.CardError{URL: "u"}, ExitError},
		{&client.TransportError{Op: "GetTask", Phase: client.PhaseResponse, GRPCStatus: "UNAVAILABLE"}, ExitTransport},
		{errors.New("something else"), ExitError},
		{codeError{errReported, ExitError}, ExitError},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if got := errorJSON(a2a.NewError(a2a.CodeTaskNotFound, "task %q not found", "x"), ExitA2A); got !=
		`{"error":{"kind":"a2a","code":-32001,"name":"TaskNotFoundError","reason":"TASK_NOT_FOUND","message":"task \"x\" not found","exitCode":4}}` {
		t.Errorf("errorJSON = %s", got)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]a2a.TaskState{
		"completed": a2a.TaskState_TASK_STATE_COMPLETED, "input-required": a2a.TaskState_TASK_STATE_INPUT_REQUIRED,
		"TASK_STATE_WORKING": a2a.TaskState_TASK_STATE_WORKING, "Auth_Required": a2a.TaskState_TASK_STATE_AUTH_REQUIRED,
	} {
		if got, ok := parseState(in); !ok || got != want {
			t.Errorf("parseState(%q) = %v, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "unspecified", "sleeping"} {
		if _, ok := parseState(bad); ok {
			t.Errorf("parseState(%q) accepted", bad)
		}
	}
}
