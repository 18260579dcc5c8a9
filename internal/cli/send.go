package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// sendCmd runs `parley send URL TEXT`.
func sendCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(`send URL [TEXT] [flags]

Sends a message to the agent at URL and prints the answer: the task (its
state, status message and artifacts) or the agent's direct reply. TEXT is
the message's text part ("-" reads it from standard input); --file and
--data add more parts. By default the call waits until the task is
finished or needs input; --async returns at once, --stream shows the events
as they arrive.`, true)
	stream := fs.Bool("stream", false, "stream the events as they arrive (SendStreamingMessage)")
	async := fs.Bool("async", false, "return as soon as the task exists (returnImmediately)")
	taskID := fs.String("task", "", "continue the task with this `ID`")
	contextID := fs.String("context", "", "send within the conversation (context) with this `ID`")
	messageID := fs.String("message-id", "", "the message's `ID` (default: a new one; reuse one to resend a message)")
	history := fs.Int("history", -1, "at most `N` history messages in the returned task (historyLength; -1: the server's default)")
	var files, data, accept multiFlag
	fs.Var(&files, "file", "attach the file at `PATH` as a part: its bytes, a media type guessed from its extension, its name (repeatable)")
	fs.Var(&data, "data", "attach a data part holding the `JSON` value (repeatable)")
	fs.Var(&accept, "accept", "a media `TYPE` the client accepts in answers (acceptedOutputModes; repeatable)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 2, "the agent URL"); err != nil {
		return err
	}
	if *stream && *async {
		return usageError{errors.New("--stream and --async cannot be combined")}
	}
	if *history < -1 {
		return usageError{fmt.Errorf("--history %d: want 0 or more (or -1 for the server's default)", *history)}
	}
	msg := &a2a.Message{MessageId: *messageID, Role: a2a.Role_ROLE_USER, TaskId: *taskID, ContextId: *contextID}
	if msg.MessageId == "" {
		msg.MessageId = a2a.NewID()
	}
	if len(pos) == 2 {
		text := pos[1]
		if text == "-" {
			b, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
			if err != nil {
				return fmt.Errorf("reading standard input: %w", err)
			}
			text = strings.TrimRight(string(b), "\n")
		}
		msg.Parts = append(msg.Parts, a2a.TextPart(text))
	}
	for _, path := range files {
		p, err := filePart(path)
		if err != nil {
			return usageError{err}
		}
		msg.Parts = append(msg.Parts, p)
	}
	for _, d := range data {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			return usageError{fmt.Errorf("--data %q: not JSON: %v", abridgeArg(d), err)}
		}
		val, err := structpb.NewValue(v)
		if err != nil {
			return usageError{fmt.Errorf("--data: %v", err)}
		}
		msg.Parts = append(msg.Parts, &a2a.Part{Content: &a2a.Part_Data{Data: val}, MediaType: "application/json"})
	}
	if len(msg.Parts) == 0 {
		return usageError{errors.New("nothing to send: give TEXT, --file or --data")}
	}
	req := &a2a.SendMessageRequest{Message: msg}
	cfg := &a2a.SendMessageConfiguration{ReturnImmediately: *async, AcceptedOutputModes: accept}
	if *history >= 0 {
		h := int32(*history)
		cfg.HistoryLength = &h
	}
	if cfg.ReturnImmediately || cfg.HistoryLength != nil || len(cfg.AcceptedOutputModes) > 0 {
		req.Configuration = cfg
	}

	def := defaultTimeout
	if *stream {
		def = 0
	}
	ctx, cancel := c.context(ctx, def)
	defer cancel()
	cl, err := c.connect(ctx, pos[0])
	if err != nil {
		return err
	}
	defer cl.Close()
	if *stream {
		return e.showStream(cl.SendStreamingMessage(ctx, req), pos[0])
	}
	resp, err := cl.SendMessage(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return e.out.jsonLine(resp)
	}
	if m := resp.GetMessage(); m != nil {
		e.out.printMessage(m)
		return nil
	}
	t := resp.GetTask()
	e.out.printTask(t, cfg.HistoryLength != nil)
	e.nextSteps(pos[0], t)
	return nil
}

// nextSteps tells a person how to go on with a task.
func (e *env) nextSteps(url string, t *a2a.Task) {
	switch st := t.GetStatus().GetState(); {
	case st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		e.out.hint("the agent needs more input: parley send %s --task %s \"...\"", url, t.GetId())
	case st == a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		e.out.hint("the agent needs authorization; then: parley task wait %s %s", url, t.GetId())
	case !a2a.IsTerminal(st):
		e.out.hint("follow it: parley task subscribe %s %s   (or: parley task wait / task get)", url, t.GetId())
	}
}

// showStream prints a stream's events as they arrive.
func (e *env) showStream(seq iter.Seq2[a2a.StreamEvent, error], url string) error {
	p := newStreamPrinter(e.out)
	var err error
	for ev, ierr := range seq {
		if ierr != nil {
			err = ierr
			break
		}
		p.event(ev)
	}
	p.done()
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
	return err
}

// filePart reads a file into a raw part.
func filePart(path string) (*a2a.Part, error) {
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

func abridgeArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
