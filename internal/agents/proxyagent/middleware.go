package proxyagent

import (
	"context"
	"errors"
	"iter"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Middleware returns the server middleware (a2ahttp.Options.Middleware)
// that gives callers the upstream's own errors:
//
//   - SendMessage and SendStreamingMessage: when the upstream refused the
//     message with an A2A error before any event, the caller gets that
//     error (InvalidParams, ContentTypeNotSupported, TaskNotFound, …)
//     instead of the FAILED task Parley keeps for it.
//   - CancelTask: the cancel is sent upstream first; when the upstream
//     answers TaskNotCancelableError, so does Parley, and its task goes
//     on. Other upstream answers (the task is unknown there, it could not
//     be reached) leave Parley to cancel its own task.
//
// The agent works without it: callers then see FAILED tasks whose status
// message names the upstream error.
func (a *Agent) Middleware() a2a.Middleware {
	return func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{
			Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				switch m.Name {
				case a2a.MethodSendMessage:
					resp, err := next.Call(ctx, m, req)
					if t := taskOf(resp); err == nil && t != nil && t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_FAILED {
						if e := a.errs.take(t.GetId()); e != nil {
							return nil, e
						}
					}
					return resp, err
				case a2a.MethodCancelTask:
					if err := a.cancelFirst(ctx, next, req.(*a2a.CancelTaskRequest)); err != nil {
						return nil, err
					}
				}
				return next.Call(ctx, m, req)
			},
			StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
				if m.Name != a2a.MethodSendStreamingMessage {
					return next.Stream(ctx, m, req)
				}
				return a.refusedStream(next.Stream(ctx, m, req))
			},
		}
	}
}

// taskOf is the task of a SendMessage response, nil otherwise.
func taskOf(resp proto.Message) *a2a.Task {
	if r, ok := resp.(*a2a.SendMessageResponse); ok {
		return r.GetTask()
	}
	return nil
}

// refusedStream replaces the stream of a task the upstream refused with
// the upstream's error. The refusal is known as soon as the stream's first
// event: the agent records it before the FAILED status that creates the
// task (which the core streams as a SUBMITTED Task, then that status).
func (a *Agent) refusedStream(seq iter.Seq2[a2a.StreamEvent, error]) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		first := true
		for ev, err := range seq {
			if first && err == nil && ev.Kind() == a2a.EventTask {
				if e := a.errs.take(ev.TaskID()); e != nil {
					yield(a2a.StreamEvent{}, e)
					return
				}
			}
			first = false
			if !yield(ev, err) {
				return
			}
		}
	}
}

// cancelFirst sends the cancel of a task the caller may see (Parley's
// GetTask decides, with the caller's scope) to the upstream, and returns
// the upstream's TaskNotCancelableError when it refuses.
func (a *Agent) cancelFirst(ctx context.Context, next a2a.Invoker, req *a2a.CancelTaskRequest) error {
	got, err := next.Call(ctx, a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: req.GetId(), Tenant: req.GetTenant()})
	if err != nil {
		return nil // Parley's own CancelTask answers with the right error
	}
	if t, ok := got.(*a2a.Task); !ok || a2a.IsTerminal(t.GetStatus().GetState()) {
		return nil
	}
	// The pair is looked up in the caller's scope, as the core decides it
	// (decision B12): the tenant named and the principal.
	k := taskKey{tenant: req.GetTenant(), id: req.GetId()}
	if ci := a2a.CallInfoFrom(ctx); ci != nil {
		k.principal = ci.Principal
	}
	upID := a.ids.task(k)
	if upID == "" || !a.ids.markCanceled(k) {
		return nil
	}
	_, err = a.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: upID})
	if ae, ok := errors.AsType[*a2a.Error](err); ok && ae.Code == a2a.CodeTaskNotCancelable {
		a.ids.unmarkCanceled(k)
		return ae
	}
	if err != nil {
		a.log.Warn("upstream cancel failed; canceling Parley's task", "task", req.GetId(), "upstreamTask", upID, "err", err)
	}
	return nil
}
