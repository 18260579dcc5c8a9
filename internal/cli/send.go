package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"mime"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/version"
)

const sendSynopsis = `send -a AGENT [TEXT] [flags]
       send URL [TEXT] [flags]   (the older spelling)

Sends a message to the agent (--agent-card: its URL, a bare host or a card
file) and prints the answer: the task (its id, context id, state, status
message and artifacts) or the agent's direct reply. TEXT is the message's
first text part ("-" reads it from standard input); --text, --file and
--data add more parts, in the order given, each optionally followed by
--media-type. By default the call waits until the task is finished or
needs input; --async returns at once with the task's ids, --stream shows
the events as they arrive (and stops when the task needs input or
authorization). --task-id continues a task (one waiting for input, say);
--context-id starts a task within a context.

Exit status 0 whenever the agent's answer is shown, whatever state the
task is in: a task that ended FAILED, REJECTED or CANCELED, or waits
INPUT_REQUIRED or AUTH_REQUIRED, is named in a warning on stderr (with the
command that replies). 1 an error the agent returned, 2 bad usage, 3 the
agent could not be reached, 4 authentication missing or refused, 5
--timeout expired.

--if-generation N sends the follow-up only if the task is still at
generation N (A2A 1.1's ifGenerationMatch; the agent must serve 1.1, and
the call is sent as a 1.1 call); otherwise the agent refuses it with
TaskGenerationMismatchError and the task is left as it was.`

// sendCmd runs `parley send URL TEXT`.
func sendCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(sendSynopsis, true)
	f := addSendFlags(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 2, "the agent URL"); err != nil {
		return err
	}
	if f.stream && !c.givenAsFlag("async") {
		f.async = false // an explicit --stream wins over a configured --async
	}
	if err := f.check(); err != nil {
		return err
	}
	if err := c.askGenerations(f.ifGeneration != nil, "--if-generation"); err != nil {
		return err
	}
	msg, err := f.message(pos[1:])
	if err != nil {
		return err
	}
	req := f.request(msg)

	timeout := defaultTimeout
	if f.stream {
		timeout = 0
	}
	ctx, cl, done, err := c.dial(ctx, timeout, pos[0])
	if err != nil {
		return err
	}
	defer done()
	if f.stream && !e.streams(cl) {
		f.stream = false // one answer, which -o json prints as a one-line stream
	}
	if f.stream {
		err := e.showStream(ctx, cl.SendStreamingMessage(ctx, req), pos[0], msg.GetTaskId() != "")
		return withGenerationHint(err, pos[0], msg.GetTaskId())
	}
	resp, err := cl.SendMessage(ctx, req)
	if err != nil {
		return withGenerationHint(withPrivateWebhookHint(err), pos[0], msg.GetTaskId())
	}
	t := resp.GetTask()
	if c.json {
		err = e.out.jsonLine(resp)
	} else if m := resp.GetMessage(); m != nil {
		e.out.printMessage(m)
	} else {
		e.out.printTask(t, f.history >= 0 || c.verbose)
		e.nextSteps(pos[0], t)
	}
	if err != nil || f.async || t == nil {
		return err // --async: the task as the agent has it; a direct reply: no task
	}
	e.outcome(pos[0], t.GetId(), t.GetStatus().GetState())
	return nil
}

// sendFlags are the flags of `parley send` besides the common ones.
type sendFlags struct {
	stream, async, wait          bool
	taskID, contextID, messageID string
	history                      int
	parts                        []partFlag // --text, --file, --data, in order
	metadata                     *structpb.Struct
	accept                       multiFlag
	// --push-url, --push-token, --push-token-file: a push notification
	// configuration sent with the message.
	pushURL, pushToken, pushTokenFile string
	// --if-generation: the generation the task must be at (nil: any).
	ifGeneration *int64
}

// addSendFlags defines the flags of `parley send` on fs.
func addSendFlags(fs *flag.FlagSet) *sendFlags {
	f := &sendFlags{}
	fs.BoolVar(&f.stream, "stream", false, "stream the events as they arrive (SendStreamingMessage)")
	fs.BoolVar(&f.async, "async", false, "return as soon as the task exists (returnImmediately)")
	fs.BoolVar(&f.async, "return-immediately", false, "the same as --async")
	fs.BoolVar(&f.async, "no-wait", false, "the same as --async")
	fs.BoolVar(&f.wait, "wait", false, "wait until the task is finished or needs input (the default; overrides $A2ACLI_ASYNC)")
	fs.BoolVar(&f.wait, "watch", false, "the same as --wait")
	fs.StringVar(&f.taskID, "task-id", "", "continue the task with this `ID` (the server finds its context)")
	fs.StringVar(&f.taskID, "task", "", "the same as --task-id `ID`")
	fs.StringVar(&f.contextID, "context-id", "", "start a task within the context with this `ID`")
	fs.StringVar(&f.contextID, "context", "", "the same as --context-id `ID`")
	fs.Func("metadata", "the request's metadata: a JSON `OBJECT` such as '{\"k\":\"v\"}'", func(v string) error {
		m := &structpb.Struct{}
		if err := m.UnmarshalJSON([]byte(v)); err != nil {
			return fmt.Errorf("want a JSON object: %v", err)
		}
		f.metadata = m
		return nil
	})
	fs.Func("text", "add a text part holding `TEXT` (repeatable; parts keep their order)", func(v string) error {
		f.parts = append(f.parts, partFlag{kind: "text", value: v})
		return nil
	})
	fs.Func("media-type", "the media `TYPE` of the part flag (--text, --file, --data) just before it", func(v string) error {
		if len(f.parts) == 0 {
			return errors.New("give it after the --text, --file or --data it applies to")
		}
		f.parts[len(f.parts)-1].mediaType = v
		return nil
	})
	fs.StringVar(&f.messageID, "message-id", "", "the message's `ID` (default: a new one; reuse one to resend a message)")
	fs.IntVar(&f.history, "history", -1, "at most `N` history messages in the returned task (historyLength; -1: the server's default)")
	fs.Func("file", "attach the file at `PATH` as a part: its bytes, its name, a media type guessed from its extension unless --media-type follows; "+
		"an http(s) URL is sent as a reference (repeatable)", func(v string) error {
		f.parts = append(f.parts, partFlag{kind: "file", value: v})
		return nil
	})
	fs.Func("data", "attach a data part: a `JSON` value, a JSON file's path, or - to read JSON from standard input (repeatable)", func(v string) error {
		f.parts = append(f.parts, partFlag{kind: "data", value: v})
		return nil
	})
	fs.Var(&f.accept, "accept", "a media `TYPE` the client accepts in answers (acceptedOutputModes; repeatable)")
	fs.StringVar(&f.pushURL, "push-url", "", "have the agent POST the task's updates to the webhook at `URL` (push notifications)")
	fs.StringVar(&f.pushToken, "push-token", "", "with --push-url: a `TOKEN` the agent sends with every notification, for the webhook to check")
	fs.StringVar(&f.pushTokenFile, "push-token-file", "", "like --push-token, with the token read from `FILE`")
	fs.Func("if-generation", "with --task-id: send only if the task is still at generation `N` (A2A 1.1's ifGenerationMatch; "+
		"the agent must serve 1.1, e.g. parley serve --protocol-versions 1.1,1.0,0.3)", func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number, the task's generation (parley task get --a2a-version 1.1 shows it)")
		}
		f.ifGeneration = &n
		return nil
	})
	return f
}

// check reports flags that contradict each other or are out of range.
func (f *sendFlags) check() error {
	if f.wait {
		f.async = false // --wait overrides a configured --async
	}
	if f.stream && f.async {
		return usageError{errors.New("--stream and --async cannot be combined")}
	}
	if f.history < -1 {
		return usageError{fmt.Errorf("--history %d: want 0 or more (or -1 for the server's default)", f.history)}
	}
	if f.ifGeneration != nil && f.taskID == "" {
		return usageError{errors.New("--if-generation needs --task: it is the generation of the task the message continues (a new task has none yet)")}
	}
	var err error
	if f.pushToken, err = valueOrFile("push-token", f.pushToken, f.pushTokenFile, nil); err != nil {
		return err
	}
	return checkPushURL(f.pushURL, f.pushToken)
}

// checkPushURL checks --push-url: an absolute http or https URL with a
// host, the webhook of a PushNotificationConfig (spec §4.3.1). A token
// without a URL is a mistake too.
func checkPushURL(raw, token string) error {
	if raw == "" {
		if token != "" {
			return usageError{errors.New("--push-token needs --push-url: the token goes with a webhook")}
		}
		return nil
	}
	u, err := neturl.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Errorf("--push-url %q: want an absolute http:// or https:// URL, such as https://example.com/hook", raw)}
	}
	return nil
}

// message builds the message to send: the text part of text (none or one
// argument), then the --file and --data parts.
func (f *sendFlags) message(text []string) (*a2a.Message, error) {
	msg := &a2a.Message{MessageId: f.messageID, Role: a2a.Role_ROLE_USER, TaskId: f.taskID, ContextId: f.contextID}
	if msg.MessageId == "" {
		msg.MessageId = a2a.NewID()
	}
	if len(text) == 1 {
		p, err := textPart(text[0])
		if err != nil {
			return nil, err
		}
		msg.Parts = append(msg.Parts, p)
	}
	for _, pf := range f.parts {
		p, err := pf.part()
		if err != nil {
			return nil, err
		}
		msg.Parts = append(msg.Parts, p)
	}
	if len(msg.Parts) == 0 {
		return nil, usageError{errors.New("nothing to send: give TEXT, --file or --data")}
	}
	return msg, nil
}

// request wraps msg in a request, with a configuration when a flag asks
// for one.
func (f *sendFlags) request(msg *a2a.Message) *a2a.SendMessageRequest {
	req := &a2a.SendMessageRequest{Message: msg, Metadata: f.metadata}
	cfg := &a2a.SendMessageConfiguration{ReturnImmediately: f.async, AcceptedOutputModes: f.accept}
	if f.history >= 0 {
		h := int32(f.history)
		cfg.HistoryLength = &h
	}
	if f.pushURL != "" { // the inline configuration of spec §3.2.2, registered with the task
		cfg.TaskPushNotificationConfig = &a2a.TaskPushNotificationConfig{Url: f.pushURL, Token: f.pushToken}
	}
	cfg.IfGenerationMatch = f.ifGeneration
	if cfg.ReturnImmediately || cfg.HistoryLength != nil || len(cfg.AcceptedOutputModes) > 0 || cfg.TaskPushNotificationConfig != nil ||
		cfg.IfGenerationMatch != nil {
		req.Configuration = cfg
	}
	return req
}

// streams reports whether the agent's card declares streaming (spec
// §4.4.3), which a streaming call needs (A2A CLI SPEC §13.3); when it does
// not, it says so on stderr: the command does without (a blocking call,
// or polling).
func (e *env) streams(cl *client.Client) bool {
	if cl.Card().GetCapabilities().GetStreaming() {
		return true
	}
	fmt.Fprintf(e.stderr, "parley %s: warning: the agent's card declares no streaming: waiting for the answer without a stream\n", e.name)
	return false
}

// nextSteps tells a person how to go on with a task.
func (e *env) nextSteps(url string, t *a2a.Task) {
	e.nextStepsFor(url, t.GetId(), t.GetStatus().GetState())
}

// nextStepsFor tells a person how to go on with the task id, in state st.
func (e *env) nextStepsFor(url, id string, st a2a.TaskState) {
	switch {
	case st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		e.out.hint("the agent needs more input: parley send %s --task %s \"...\"", url, id)
	case st == a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		e.out.hint("the agent needs authorization; then: parley task wait %s %s", url, id)
	case !a2a.IsTerminal(st):
		e.out.hint("follow it: parley task subscribe %s %s   (or: parley task wait / task get)", url, id)
	}
}

// showStream prints a stream's events as they arrive, until the stream
// ends or the task stops in an interrupted state (INPUT_REQUIRED or
// AUTH_REQUIRED, spec §4.1.3): the command returns and the task waits for
// a follow-up. A server may keep the stream open there (spec §7.6.1 asks it
// to through AUTH_REQUIRED; so does a subscription, which ends only at a
// terminal state, spec §3.1.6), so the command stops reading itself. When
// snapshot is true (a follow-up message on a task), the stream's first
// Task is the state the follow-up answers, not a new stop. A state other
// than COMPLETED is named in a warning (outcome).
//
// When the user interrupts it (ctx canceled by Ctrl-C), it says that the
// task goes on and how to follow or cancel it, and the command exits 130.
func (e *env) showStream(ctx context.Context, seq iter.Seq2[a2a.StreamEvent, error], url string, snapshot bool) error {
	p := newStreamPrinter(e.out)
	var err error
	paused := false
	contextID := ""
	for ev, ierr := range seq {
		if ierr != nil {
			err = ierr
			break
		}
		if interrupted(ctx) {
			break
		}
		p.event(ev)
		if c := ev.Response.GetTask().GetContextId() + ev.Response.GetStatusUpdate().GetContextId(); c != "" {
			contextID = c
		}
		var st a2a.TaskState
		switch r := ev.Response; {
		case r.GetTask() != nil:
			if snapshot {
				snapshot = false
				continue
			}
			st = r.GetTask().GetStatus().GetState()
		case r.GetStatusUpdate() != nil:
			st = r.GetStatusUpdate().GetStatus().GetState()
		}
		if a2a.IsInterrupted(st) {
			paused = true
			break
		}
	}
	p.done()
	p.mu.Lock()
	id, st := p.taskID, p.state
	p.mu.Unlock()
	if id != "" && !e.out.json && !interrupted(ctx) {
		e.out.printIDs(id, contextID, st) // the stream's last lines restate them (SPEC §11.2)
	}
	if interrupted(ctx) {
		return e.interruptedTask(url, id, st)
	}
	if paused {
		e.nextStepsFor(url, id, st)
		e.outcome(url, id, st)
		return nil
	}
	var se *client.StreamEndedError
	if errors.As(err, &se) {
		why := "the server closed it"
		if se.Err != nil {
			why = se.Err.Error()
		}
		fmt.Fprintf(e.stderr, "parley %s: the stream ended before the task finished (task %s, last state %s): %s\n",
			e.name, orDash(se.TaskID), stateName(se.State), why)
		if se.TaskID != "" {
			fmt.Fprintf(e.stderr, "  follow it with: parley task subscribe %s %s   (or: parley task get %s %s)\n", url, se.TaskID, url, se.TaskID)
		}
	}
	if err != nil {
		return err
	}
	e.outcome(url, id, st) // a direct reply leaves no state
	return nil
}

// interrupted tells whether the user interrupted the command: ctx, the
// command's context, was canceled by its parent (Ctrl-C or SIGTERM), not
// by --timeout.
func interrupted(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// interruptedTask tells the user, after Ctrl-C, that the task id (""
// when no event named it yet) goes on at the agent and how to follow or
// cancel it; it returns the error that makes the command exit 130.
func (e *env) interruptedTask(url, id string, st a2a.TaskState) error {
	if e.out != nil {
		e.out.stopLiveLine()
	}
	if id == "" {
		fmt.Fprintf(e.stderr, "parley %s: interrupted before the agent named a task; any task it started goes on: parley task list %s\n", e.name, url)
		return codeError{errReported, ExitInterrupted}
	}
	if a2a.IsTerminal(st) {
		fmt.Fprintf(e.stderr, "parley %s: interrupted; task %s had already ended (%s): parley task get %s %s\n", e.name, id, stateName(st), url, id)
		return codeError{errReported, ExitInterrupted}
	}
	fmt.Fprintf(e.stderr, "parley %s: interrupted: task %s goes on at the agent (last state %s)\n", e.name, id, stateName(st))
	fmt.Fprintf(e.stderr, "  follow it: parley task subscribe %s %s   (or: parley task wait / task get)\n", url, id)
	fmt.Fprintf(e.stderr, "  cancel it: parley task cancel %s %s\n", url, id)
	return codeError{errReported, ExitInterrupted}
}

// textPart is the text part of TEXT; "-" reads it from standard input.
func textPart(text string) (*a2a.Part, error) {
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		text = strings.TrimRight(string(b), "\n")
	}
	return a2a.TextPart(text), nil
}

// partFlag is a part flag of `parley send` (--text, --file, --data) and
// the --media-type that follows it.
type partFlag struct{ kind, value, mediaType string }

// part is the message part the flag asks for.
func (pf partFlag) part() (*a2a.Part, error) {
	var p *a2a.Part
	var err error
	switch pf.kind {
	case "text":
		p = a2a.TextPart(pf.value)
	case "file":
		if p, err = filePart(pf.value); err != nil {
			return nil, usageError{err}
		}
	default:
		if p, err = dataPart(pf.value); err != nil {
			return nil, err
		}
	}
	if pf.mediaType != "" {
		p.MediaType = pf.mediaType
	}
	return p, nil
}

// dataPart is the data part of a --data value: JSON, "-" for JSON on
// standard input, or the path of a JSON file. A value that parses as JSON
// is taken as it is (a file named like a JSON value needs ./ before it).
func dataPart(s string) (*a2a.Part, error) {
	if s == "-" || (!json.Valid([]byte(s)) && fileExists(s)) {
		var b []byte
		var err error
		if s == "-" {
			b, err = io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
		} else {
			b, err = os.ReadFile(s)
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("--data %s: %v", s, err)}
		}
		s = string(b)
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, usageError{fmt.Errorf("--data %q: not JSON: %v", abridgeArg(s), err)}
	}
	val, err := structpb.NewValue(v)
	if err != nil {
		return nil, usageError{fmt.Errorf("--data: %v", err)}
	}
	return &a2a.Part{Content: &a2a.Part_Data{Data: val}, MediaType: "application/json"}, nil
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// filePart reads a file into a raw part; an http(s) URL becomes a part
// referring to it, which the agent fetches (A2A CLI SPEC §10.2).
func filePart(path string) (*a2a.Part, error) {
	if isHTTPURL(path) {
		mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
		if base, _, err := mime.ParseMediaType(mt); err == nil {
			mt = base
		}
		return &a2a.Part{Content: &a2a.Part_Url{Url: path}, MediaType: mt, Filename: filepath.Base(path)}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
	if mt == "" {
		mt = "application/octet-stream"
	}
	if base, params, err := mime.ParseMediaType(mt); err == nil && params["charset"] != "" {
		mt = base // "text/plain; charset=utf-8" → "text/plain"
	}
	return &a2a.Part{Content: &a2a.Part_Raw{Raw: b}, MediaType: mt, Filename: filepath.Base(path)}, nil
}

// abridgeArg shortens a command-line value for an error message.
func abridgeArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// askGenerations makes the command's calls 1.1 calls when flag, a member
// only A2A 1.1 has (the task generation's), is given: --a2a-version 1.1
// unless --a2a-version was given, and then it must be a version that has
// the member (a 1.0 agent would ignore it).
func (c *common) askGenerations(given bool, flag string) error {
	switch {
	case !given:
		return nil
	case !c.versionSet:
		c.version, c.versionSet = version.V11, true
		return nil
	case !version.ShowsGeneration(c.version):
		return usageError{fmt.Errorf("%s is an A2A 1.1 member, which a %q call does not have: leave out --a2a-version, or give 1.1", flag, c.version)}
	}
	return nil
}

// withGenerationHint adds to a TaskGenerationMismatchError what to do
// next: the task changed since the generation the send expected.
func withGenerationHint(err error, url, taskID string) error {
	_, cur, ok := a2a.MismatchedGenerations(err)
	if !ok {
		return err
	}
	return fmt.Errorf("%w\n  hint: task %s changed (it is at generation %d now): read it (parley task get %s %s --a2a-version 1.1) "+
		"and, if the message still applies, send it again with --if-generation %d", err, taskID, cur, url, taskID, cur)
}
