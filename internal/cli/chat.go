package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// chatInput is where `parley chat` reads the user's turns (a variable
// for the tests of this package).
var chatInput io.Reader = os.Stdin

// chatCmd runs `parley chat`: an interactive multi-turn conversation
// (A2A CLI SPEC §7.1, §8.1). Each line read is one turn, sent as a
// message that carries the conversation's contextId, and the taskId of
// the task while that task is interrupted (INPUT_REQUIRED or
// AUTH_REQUIRED), so that the line answers it; once a task has ended, the
// next turn starts a new task in the same context. The identifiers come
// from the agent, never made up (SPEC §4.1), and nothing is kept after
// the command ends (SPEC §8.3).
//
// On a terminal the turns are a conversation: a prompt on stderr, the
// agent's words, and a dimmed line with the task's state and id. When
// stdout is not a terminal the command degrades to the text floor (SPEC
// §11.2, §6.1): each turn's answer in the fields and blocks of `parley
// send`, no prompt and no control sequences; -o json prints each turn's
// SendMessageResponse as a line (JSON Lines). Either way the turns come
// from standard input, and the command ends at its end (or /quit).
func chatCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(`chat -a AGENT [flags] [TEXT]

A conversation with AGENT: each line you type is a message; the agent's
answer follows. The conversation's context is kept from turn to turn,
and while the agent's task waits for input (INPUT_REQUIRED) or
authorization (AUTH_REQUIRED) your next line answers that task. TEXT,
when given, is the first turn. /new starts a new conversation (a new
context), /quit (or the end of the input, Ctrl-D) ends the command.
Piped (stdout not a terminal), each answer is printed as parley send
prints it.`, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 2, "the agent (-a AGENT)"); err != nil {
		return err
	}
	ctx, cl, done, err := c.dial(ctx, 0, pos[0])
	if err != nil {
		return err
	}
	defer done()
	ch := &chat{e: e, cl: cl, url: pos[0], tty: e.out.tty && !c.json}
	if len(pos) == 2 {
		if err := ch.turn(ctx, pos[1]); err != nil {
			return err
		}
	}
	in := bufio.NewScanner(chatInput)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for ch.prompt(); in.Scan(); ch.prompt() {
		line := strings.TrimSpace(in.Text())
		switch line {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/new":
			ch.contextID, ch.taskID = "", ""
			ch.note("a new conversation: the next message starts a new context")
			continue
		}
		if err := ch.turn(ctx, line); err != nil {
			if !ch.tty || interrupted(ctx) {
				return err
			}
			e.reportError(err, e.classify(err)) // a person may try again
		}
	}
	if ch.tty {
		fmt.Fprintln(e.stderr)
	}
	return in.Err()
}

// chat is a conversation's state: the ids the agent gave.
type chat struct {
	e         *env
	cl        *client.Client
	url       string
	tty       bool   // a conversation on a terminal, not the text floor
	contextID string // the conversation's context, once the agent named it
	taskID    string // the task the next turn answers (interrupted), or ""
}

// prompt asks for the next line, on a terminal.
func (ch *chat) prompt() {
	if ch.tty {
		fmt.Fprint(ch.e.stderr, ch.e.out.bold("you> "))
	}
}

// note tells a person something about the conversation (on a terminal).
func (ch *chat) note(s string) {
	if ch.tty {
		fmt.Fprintln(ch.e.stderr, ch.e.out.dim("("+s+")"))
	}
}

// turn sends one line and shows the answer, waiting for the task to end
// or stop when the agent answers before.
func (ch *chat) turn(ctx context.Context, text string) error {
	msg := a2a.UserMessageFor(ch.taskID, ch.contextID, text)
	resp, err := ch.cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return err
	}
	t := resp.GetTask()
	if t != nil && !a2a.IsTerminal(t.GetStatus().GetState()) && !a2a.IsInterrupted(t.GetStatus().GetState()) {
		if t, err = ch.cl.WaitForCompletion(ctx, t.GetId()); err != nil {
			return err
		}
		resp = &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}}
	}
	if m := resp.GetMessage(); m != nil {
		if m.GetContextId() != "" {
			ch.contextID = m.GetContextId()
		}
		ch.taskID = ""
	} else if t != nil {
		ch.contextID, ch.taskID = t.GetContextId(), ""
		if a2a.IsInterrupted(t.GetStatus().GetState()) {
			ch.taskID = t.GetId()
		}
	} else {
		return errors.New("the agent answered neither a task nor a message")
	}
	o := ch.e.out
	switch {
	case ch.e.c.json:
		return o.jsonLine(resp)
	case !ch.tty:
		if m := resp.GetMessage(); m != nil {
			o.printMessage(m)
		} else {
			o.printTask(t, ch.e.c.verbose)
		}
		return nil
	}
	ch.say(resp)
	return nil
}

// say shows an answer as a conversation: the agent's words (a direct
// message, or the task's status message and artifacts), then the task's
// state and id, dimmed; an interrupted task says what the next line does.
func (ch *chat) say(resp *a2a.SendMessageResponse) {
	o := ch.e.out
	if m := resp.GetMessage(); m != nil {
		o.printf("%s %s\n", o.bold("agent>"), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n       "))
		return
	}
	t := resp.GetTask()
	var words []string
	if m := t.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
		words = append(words, partsText(m.GetParts()))
	}
	for _, a := range t.GetArtifacts() {
		words = append(words, artifactBody(a))
	}
	if len(words) > 0 {
		o.printf("%s %s\n", o.bold("agent>"), strings.ReplaceAll(strings.Join(words, "\n"), "\n", "\n       "))
	}
	o.printf("%s\n", o.dim(fmt.Sprintf("       [%s · task %s]", o.state(t.GetStatus().GetState()), t.GetId())))
	switch st := t.GetStatus().GetState(); {
	case st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		ch.note("the agent waits for your answer: your next line goes to this task")
	case st == a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		ch.note("the agent waits for authorization: once given (parley auth login), your next line goes to this task")
	}
}
