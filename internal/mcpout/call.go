package mcpout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
)

// args are a tool's arguments (inputSchema).
type args struct {
	Message   string `json:"message"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
}

// parseArgs reads a call's arguments; what is wrong with them is said in
// words the model can act on.
func parseArgs(raw json.RawMessage) (args, error) {
	var a args
	if len(raw) == 0 || string(raw) == "null" {
		return a, errors.New(`missing the arguments: want {"message": "..."}`)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return a, fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"message", &a.Message}, {"taskId", &a.TaskID}, {"contextId", &a.ContextID}} {
		v, ok := m[f.name]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return a, fmt.Errorf("%s must be a string", f.name)
		}
	}
	if _, ok := m["message"]; !ok {
		return a, errors.New(`missing "message": the text to send to the agent`)
	}
	return a, nil
}

// call is every tool's handler: it sends the message (or, on a multi
// round-trip retry, the elicited answer), follows the task, and answers
// with what it ended with.
func (b *Bridge) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var (
		out outcome
		err error
	)
	if req.Params.InputResponses != nil || req.Params.RequestState != "" {
		out, err = b.resumed(ctx, req) // the client answered the elicitation this call asked for
	} else {
		a, perr := parseArgs(req.Params.Arguments)
		if perr != nil {
			return toolError(perr.Error()), nil
		}
		out, err = b.exchange(ctx, req, a2a.UserMessageFor(a.TaskID, a.ContextID, a.Message))
	}
	for err == nil && out.state() == a2a.TaskState_TASK_STATE_INPUT_REQUIRED && !out.dismissed && elicits(req) {
		if multiRoundTrip(req) {
			// MCP 2026-07-28 forbids a server-sent elicitation/create: the
			// question goes back in the result, and the client calls again
			// with the answer (the SDK's multi round-trip requests).
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{answerKey: elicitParams(out)},
				RequestState:  encodeState(out.task),
			}, nil
		}
		er, eerr := req.Session.Elicit(ctx, elicitParams(out))
		if eerr != nil {
			if ctx.Err() != nil {
				return nil, b.cancelled(ctx, out.task.GetId())
			}
			b.log.Warn("mcp: elicitation failed; returning the agent's question instead", "task", out.task.GetId(), "err", eerr)
			break
		}
		out, err = b.answer(ctx, req, out.task.GetId(), out.task.GetContextId(), er)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return toolError(agentError(err)), nil
	}
	return b.bounded(b.result(out, req.Params.Name), out), nil
}

// bounded is res, or, when its JSON is larger than Options.MaxResultBytes,
// a tool error saying so with the outcome's structuredContent: the task's
// result stays at the agent, where the client can read it by the task id.
func (b *Bridge) bounded(res *mcp.CallToolResult, out outcome) *mcp.CallToolResult {
	if b.maxRes < 0 {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil || len(raw) <= b.maxRes {
		return res // (an error is the SDK's to report, as it marshals the result too)
	}
	where := "The agent replied without a task, so the reply cannot be read again."
	if id := out.task.GetId(); id != "" {
		where = fmt.Sprintf("The task %s (%s) keeps it at the agent: read it there (GetTask, or `parley task get -a AGENT %s`).", id, out.state(), id)
	}
	b.log.Warn("mcp: a tool result too large for one MCP message was replaced by an error", "task", out.task.GetId(), "bytes", len(raw), "max", b.maxRes)
	r := toolError(fmt.Sprintf("The agent's answer is too large for one MCP message: %d bytes of JSON, past this bridge's %d (--max-result). %s",
		len(raw), b.maxRes, where))
	r.StructuredContent = out.structured()
	return r
}

// answerKey names the bridge's one elicitation field and input request.
const answerKey = "answer"

// elicits reports whether the client declared elicitation (form mode).
func elicits(req *mcp.CallToolRequest) bool {
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil)
}

// multiRoundTrip reports whether the call's protocol version has the
// server ask for input in its result (2026-07-28 and later, SEP-2322)
// rather than with a request of its own.
func multiRoundTrip(req *mcp.CallToolRequest) bool {
	return req.ProtocolVersion() >= "2026-07-28"
}

// elicitParams asks the user the agent's question: a form with one string
// field, "answer".
func elicitParams(out outcome) *mcp.ElicitParams {
	q := out.statusText()
	if q == "" {
		q = "The agent needs more input to continue."
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: q,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				answerKey: map[string]any{"type": "string", "title": "Answer", "description": "Your answer to the agent"},
			},
			"required": []any{answerKey},
		},
	}
}

// taskState is what a multi round-trip result asks the client to send back
// (requestState): the task waiting for the answer. The client holds it, so
// it is no more trusted than a taskId argument.
type taskState struct {
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId,omitempty"`
}

func encodeState(t *a2a.Task) string {
	b, _ := json.Marshal(taskState{TaskID: t.GetId(), ContextID: t.GetContextId()})
	return string(b)
}

// resumed continues a call the client retried with the answer to the
// elicitation the bridge asked for.
func (b *Bridge) resumed(ctx context.Context, req *mcp.CallToolRequest) (outcome, error) {
	var st taskState
	if err := json.Unmarshal([]byte(req.Params.RequestState), &st); err != nil || st.TaskID == "" {
		return outcome{}, errors.New("the call's requestState is not one this bridge returned")
	}
	er, _ := req.Params.InputResponses[answerKey].(*mcp.ElicitResult)
	return b.answer(ctx, req, st.TaskID, st.ContextID, er)
}

// answer acts on the user's response to the agent's question: accepted,
// the answer goes to the agent as a follow-up on the task; declined, the
// task is canceled (the user will not give what it waits for); dismissed
// (cancel, or no response, or an accept without the answer, which a
// client answering a multi round-trip request may send: nothing checks
// its content against the schema), the task is left waiting and the call
// returns the question, as for a client without elicitation.
func (b *Bridge) answer(ctx context.Context, req *mcp.CallToolRequest, taskID, contextID string, er *mcp.ElicitResult) (outcome, error) {
	switch {
	case er != nil && er.Action == "accept" && er.Content[answerKey] != nil:
		text, ok := er.Content[answerKey].(string)
		if !ok {
			text = fmt.Sprint(er.Content[answerKey])
		}
		return b.exchange(ctx, req, a2a.UserMessageFor(taskID, contextID, text))
	case er != nil && er.Action == "decline":
		t, err := b.cl.CancelTask(ctx, &a2a.CancelTaskRequest{Id: taskID})
		if err != nil {
			return outcome{}, err
		}
		return outcome{task: t, note: "The user declined to answer the agent's question; the task was canceled."}, nil
	}
	t, err := b.cl.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID, HistoryLength: new(int32(0))})
	return outcome{task: t, dismissed: true}, err
}

// result is the tool result of an outcome. FAILED, REJECTED and
// AUTH_REQUIRED (which the MCP client cannot resolve in band), and a
// declined question, are errors; INPUT_REQUIRED is not: its content asks
// the question and says how to answer.
func (b *Bridge) result(out outcome, tool string) *mcp.CallToolResult {
	content := out.content()
	if out.note != "" {
		content = append([]mcp.Content{&mcp.TextContent{Text: out.note}}, content...)
	}
	st := out.state()
	switch st {
	case a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		content = append(content, &mcp.TextContent{Text: fmt.Sprintf(
			"The agent needs more input (task %s). To answer, call %s again with the answer as message and taskId %q.", out.task.GetId(), tool, out.task.GetId())})
	case a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		content = append(content, &mcp.TextContent{Text: fmt.Sprintf(
			"The agent needs authorization outside this conversation (task %s); once given, call %s again with taskId %q.", out.task.GetId(), tool, out.task.GetId())})
	}
	if len(content) == 0 {
		content = []mcp.Content{&mcp.TextContent{Text: "The task ended " + st.String() + "."}}
	}
	isErr := out.note != "" || st == a2a.TaskState_TASK_STATE_FAILED || st == a2a.TaskState_TASK_STATE_REJECTED ||
		st == a2a.TaskState_TASK_STATE_AUTH_REQUIRED
	return &mcp.CallToolResult{Content: content, StructuredContent: out.structured(), IsError: isErr}
}

// toolError is a tool result saying what went wrong (MCP tool execution
// errors are results with isError, so that the model can read and act).
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// agentError words an error of the A2A exchange for the model: the A2A
// error's name and message, or the failure to reach the agent.
func agentError(err error) string {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("The A2A agent answered %s: %s", ae.Code.Name(), ae.WireMessage())
	}
	return "The A2A agent could not be called: " + err.Error()
}

// cancelTimeout bounds the CancelTask a cancelled call sends.
const cancelTimeout = 10 * time.Second

// cancelled cancels the A2A task of a call the MCP client cancelled
// (notifications/cancelled ends the call's context) and returns the
// context's error, which the SDK sends as the call's answer (it answers
// every request; the client discards the answer to one it cancelled).
func (b *Bridge) cancelled(ctx context.Context, taskID string) error {
	if taskID != "" {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		defer cancel()
		if _, err := b.cl.CancelTask(cctx, &a2a.CancelTaskRequest{Id: taskID}); err != nil {
			b.log.Warn("mcp: the call was cancelled, and cancelling its A2A task failed", "task", taskID, "err", err)
		} else {
			b.log.Info("mcp: the call was cancelled; its A2A task too", "task", taskID)
		}
	}
	return ctx.Err()
}

// oneLine shortens s to one line of at most n runes, for a progress message.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
