package mcpout

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
)

// exchange sends msg and follows what it starts until the agent replies or
// the task is terminal or interrupted (spec §4.1.3). With a card that
// declares streaming the message is streamed (§3.1.2): the task is known
// from its first event, and every event is a progress notification when
// the call carries a progress token. Otherwise it is sent with
// returnImmediately and the task is followed until it settles
// (client.WaitForCompletion). When ctx ends (the MCP client cancelled the
// call) the task is canceled (§3.1.5).
func (b *Bridge) exchange(ctx context.Context, req *mcp.CallToolRequest, msg *a2a.Message) (outcome, error) {
	if b.card.GetCapabilities().GetStreaming() {
		return b.stream(ctx, req, msg)
	}
	resp, err := b.cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg,
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		return outcome{}, err
	}
	if m := resp.GetMessage(); m != nil {
		return outcome{reply: m}, nil
	}
	t := resp.GetTask()
	if settled(t.GetStatus().GetState()) && msg.GetTaskId() == "" {
		return outcome{task: t}, nil
	}
	t, err = b.cl.WaitForCompletion(ctx, t.GetId())
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, b.cancelled(ctx, resp.GetTask().GetId())
		}
		return outcome{}, err
	}
	return outcome{task: t}, nil
}

// settled reports whether a task in state s waits for nobody but its
// client: terminal or interrupted.
func settled(s a2a.TaskState) bool { return a2a.IsTerminal(s) || a2a.IsInterrupted(s) }

// stream sends msg with SendStreamingMessage and reads until a direct
// reply, a terminal or an interrupted state (AUTH_REQUIRED included: the
// stream stays open through it, spec §7.6.1, but the MCP call cannot wait
// for authorization given elsewhere), then reads the task whole (GetTask:
// its artifacts assembled by the agent's server, without history).
func (b *Bridge) stream(ctx context.Context, req *mcp.CallToolRequest, msg *a2a.Message) (outcome, error) {
	token := req.Params.GetProgressToken()
	var (
		taskID string
		n      int
	)
	ctx2, stop := context.WithCancel(ctx)
	defer stop()
	for ev, err := range b.cl.SendStreamingMessage(ctx2, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			if ctx.Err() != nil {
				return outcome{}, b.cancelled(ctx, taskID)
			}
			return outcome{}, err
		}
		r := ev.Response
		if m := r.GetMessage(); m != nil {
			return outcome{reply: m}, nil
		}
		id, st := eventTask(r)
		if taskID == "" {
			taskID = id
		}
		n++
		if token != nil {
			p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: describe(r)}
			if err := req.Session.NotifyProgress(ctx, p); err != nil {
				b.log.Debug("mcp: a progress notification was not sent", "err", err)
			}
		}
		// The first event of a follow-up's stream may be the task as the
		// follow-up found it, still waiting for input (spec §3.1.2: the
		// stream starts with the Task): an interrupted state counts only
		// once the agent has had the message.
		if a2a.IsTerminal(st) || (a2a.IsInterrupted(st) && (n > 1 || r.GetTask() == nil || msg.GetTaskId() == "")) {
			break
		}
	}
	if ctx.Err() != nil {
		return outcome{}, b.cancelled(ctx, taskID)
	}
	if taskID == "" {
		return outcome{}, fmt.Errorf("the agent's stream ended before it named a task")
	}
	t, err := b.cl.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID, HistoryLength: new(int32(0))})
	if err != nil {
		return outcome{}, err
	}
	return outcome{task: t}, nil
}

// eventTask is the task id an event is about and the state it reports
// (UNSPECIFIED for an artifact update).
func eventTask(r *a2a.StreamResponse) (string, a2a.TaskState) {
	switch {
	case r.GetTask() != nil:
		return r.GetTask().GetId(), r.GetTask().GetStatus().GetState()
	case r.GetStatusUpdate() != nil:
		return r.GetStatusUpdate().GetTaskId(), r.GetStatusUpdate().GetStatus().GetState()
	case r.GetArtifactUpdate() != nil:
		return r.GetArtifactUpdate().GetTaskId(), a2a.TaskState_TASK_STATE_UNSPECIFIED
	}
	return "", a2a.TaskState_TASK_STATE_UNSPECIFIED
}

// progressText is how many characters of the agent's text a progress
// message carries.
const progressText = 200

// describe is a progress message for one event: the state and the status
// message's text, or the artifact and the chunk's text, on one line.
func describe(r *a2a.StreamResponse) string {
	switch {
	case r.GetTask() != nil:
		s := r.GetTask().GetStatus()
		return oneLine(withText(s.GetState().String(), a2a.JoinText(s.GetMessage().GetParts())), progressText)
	case r.GetStatusUpdate() != nil:
		s := r.GetStatusUpdate().GetStatus()
		return oneLine(withText(s.GetState().String(), a2a.JoinText(s.GetMessage().GetParts())), progressText)
	case r.GetArtifactUpdate() != nil:
		a := r.GetArtifactUpdate().GetArtifact()
		name := a.GetName()
		if name == "" {
			name = a.GetArtifactId()
		}
		return oneLine(withText("artifact "+name, a2a.ArtifactText(a)), progressText)
	}
	return ""
}

// withText is head, then ": " and text when there is text.
func withText(head, text string) string {
	if text == "" {
		return head
	}
	return head + ": " + text
}
