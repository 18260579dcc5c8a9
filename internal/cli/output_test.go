package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
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

// TestStreamPrinterPiped: the text floor (A2A CLI SPEC §11.2): Label:
// value lines, an artifact as a block once reassembled (never interleaved
// with the status lines between its chunks), no colour or terminal codes.
func TestStreamPrinterPiped(t *testing.T) {
	var out bytes.Buffer
	o := &output{w: &out, errw: &out}
	p := newStreamPrinter(o)
	for _, ev := range streamEvents() {
		p.event(ev)
	}
	p.done()
	want := "Task ID: t-1\nContext ID: c-1\nState: TASK_STATE_SUBMITTED\n" +
		"State: TASK_STATE_WORKING\n" +
		"State: TASK_STATE_WORKING\n" +
		"Artifact ID: story\nArtifact:\n  Once upon a time.\n\n" +
		"State: TASK_STATE_COMPLETED\n"
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
		cBold + cGreen + "TASK_STATE_COMPLETED" + cReset,
		cBlue + "TASK_STATE_WORKING" + cReset,
		"Artifact:" + cReset + "\n  Once upon a time.\n\n",
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
	if _, err := e.parse(fs, []string{"--nope"}); (&env{}).classify(err).exit != ExitUsage {
		t.Errorf("unknown flag: %v (exit %d)", err, (&env{}).classify(err).exit)
	}
	if _, err := e.parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || (&env{}).classify(err).exit != ExitOK {
		t.Errorf("-h: %v", err)
	}
}

// TestClassify: the one mapping from a command's error to its code and
// exit status (A2A CLI SPEC §11.4, §11.6, Appendix D), over every kind of
// error and every A2A error code.
func TestClassify(t *testing.T) {
	withToken := &env{c: &common{token: "t"}}
	for _, c := range []struct {
		e    *env
		err  error
		code string
		exit int
	}{
		{&env{}, nil, "", ExitOK},
		{&env{}, flag.ErrHelp, "", ExitOK},
		{&env{}, usageError{errors.New("x")}, errUsage, ExitUsage},
		{&env{}, &client.TransportError{Op: "GetTask", Phase: client.PhaseConnect, Err: errors.New("refused")}, errUnreachable, ExitTransport},
		{&env{}, &client.TransportError{Op: "GetTask", Phase: client.PhaseResponse, GRPCStatus: "UNAVAILABLE"}, errUnreachable, ExitTransport},
		{&env{}, &client.StreamEndedError{TaskID: "t"}, errUnreachable, ExitTransport},
		{&env{}, &client.CardError{URL: "u", StatusCode: 404}, errCardNotFound, ExitTransport},
		{&env{}, &client.CardError{URL: "u"}, errCardInvalid, ExitError},
		{&env{}, &client.CardError{URL: "u", StatusCode: 401}, errCredentialsMissing, ExitAuth},
		{withToken, &client.CardError{URL: "u", StatusCode: 403}, errAuthFailed, ExitAuth},
		{&env{}, fmt.Errorf("GetTask: %w", context.DeadlineExceeded), errTimeout, ExitTimeout},
		{&env{}, &client.TransportError{Op: "GetTask", Phase: client.PhaseConnect, Err: context.DeadlineExceeded}, errTimeout, ExitTimeout},
		{&env{}, errors.New("something else"), errInternal, ExitError},
		{&env{}, codeError{errReported, ExitError}, errInternal, ExitError},
		{&env{}, codeError{&client.TransportError{Op: "x", Phase: client.PhaseConnect}, ExitTransport}, errUnreachable, ExitTransport},
		{&env{}, a2a.NewError(a2a.CodeUnauthenticated, "who?"), errCredentialsMissing, ExitAuth},
		{withToken, a2a.NewError(a2a.CodeUnauthenticated, "no"), errAuthFailed, ExitAuth},
		{withToken, a2a.NewError(a2a.CodePermissionDenied, "lacks tasks:write"), errAuthFailed, ExitAuth},
	} {
		f := c.e.classify(c.err)
		if f.code != c.code || f.exit != c.exit {
			t.Errorf("classify(%v) = %s, exit %d; want %s, exit %d", c.err, f.code, f.exit, c.code, c.exit)
		}
		if c.exit == ExitAuth && f.a2aCode != 401 && f.a2aCode != 403 {
			t.Errorf("classify(%v): a2aCode %d, want the HTTP status", c.err, f.a2aCode)
		}
	}
	if f := withToken.classify(a2a.NewError(a2a.CodePermissionDenied, "lacks the right %q", "tasks:write")); f.a2aCode != 403 || !strings.Contains(f.hint, "tasks:write") {
		t.Errorf("classify(PermissionDeniedError) = %+v, want a2aCode 403 and a hint naming the right", f)
	}
	// Every A2A error the agent can return: its own name (or a PARLEY_
	// code for the three only Parley's table names), exit 1, its number.
	codes := map[a2a.Code]string{
		a2a.CodeTaskNotFound: "TaskNotFoundError", a2a.CodeTaskNotCancelable: "TaskNotCancelableError",
		a2a.CodePushNotificationNotSupported: "PushNotificationNotSupportedError", a2a.CodeUnsupportedOperation: "UnsupportedOperationError",
		a2a.CodeContentTypeNotSupported: "ContentTypeNotSupportedError", a2a.CodeInvalidAgentResponse: "InvalidAgentResponseError",
		a2a.CodeExtendedAgentCardNotConfigured: "ExtendedAgentCardNotConfiguredError", a2a.CodeExtensionSupportRequired: "ExtensionSupportRequiredError",
		a2a.CodeVersionNotSupported: "VersionNotSupportedError", a2a.CodeTaskGenerationMismatch: "TaskGenerationMismatchError",
		a2a.CodeParseError: "JSONParseError", a2a.CodeInvalidRequest: "InvalidRequestError", a2a.CodeMethodNotFound: "MethodNotFoundError",
		a2a.CodeInvalidParams: "InvalidParamsError", a2a.CodeInternal: "InternalError",
		a2a.CodeRequestTooLarge: "PARLEY_REQUEST_TOO_LARGE", a2a.CodeRateLimited: "PARLEY_RATE_LIMITED", a2a.CodeUnavailable: "PARLEY_UNAVAILABLE",
	}
	for c, want := range codes {
		f := (&env{}).classify(fmt.Errorf("call: %w", a2a.NewError(c, "m")))
		if f.code != want || f.exit != ExitError || f.a2aCode != c.JSONRPC() {
			t.Errorf("classify(%s) = %+v, want %s, exit 1, a2aCode %d", c.Name(), f, want, c.JSONRPC())
		}
	}
	// Every code the table knows is in the map above (CodeForReason finds
	// a code by its reason).
	for _, r := range []string{"TASK_NOT_FOUND", "TASK_NOT_CANCELABLE", "PUSH_NOTIFICATION_NOT_SUPPORTED", "UNSUPPORTED_OPERATION",
		"CONTENT_TYPE_NOT_SUPPORTED", "INVALID_AGENT_RESPONSE", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "EXTENSION_SUPPORT_REQUIRED",
		"VERSION_NOT_SUPPORTED", "TASK_GENERATION_MISMATCH", "JSON_PARSE", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS",
		"INTERNAL", "UNAUTHENTICATED", "PERMISSION_DENIED", "REQUEST_TOO_LARGE", "RATE_LIMITED", "UNAVAILABLE"} {
		c, ok := a2a.CodeForReason(r)
		if _, in := codes[c]; !ok || (!in && c != a2a.CodeUnauthenticated && c != a2a.CodePermissionDenied) {
			t.Errorf("code %s (%v) is not covered", r, ok)
		}
	}
}

// TestErrorJSON: the error envelope of A2A CLI SPEC Appendix B.
func TestErrorJSON(t *testing.T) {
	err := a2a.NewError(a2a.CodeTaskNotFound, "task %q not found", "x")
	if got := errorJSON(err, (&env{}).classify(err)); got !=
		`{"error":{"code":"TaskNotFoundError","message":"task \"x\" not found","hint":"`+debugHint+`","a2aCode":-32001}}` {
		t.Errorf("errorJSON = %s", got)
	}
	boom := errors.New("boom")
	if got := errorJSON(boom, (&env{}).classify(boom)); got != `{"error":{"code":"A2ACLI_ERR_INTERNAL","message":"boom","hint":null,"a2aCode":null}}` {
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
