package server

import (
	"context"
	"errors"
	"iter"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// GetTask implements a2a.Service (spec §3.1.3). With currentGeneration
// (A2A 1.1) at or above the task's generation it is a long poll, held
// until the task changes (see hold; spec §3.2.7).
func (s *Server) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c, err := s.begin(ctx, a2a.MethodGetTask, req.GetTenant())
	if err != nil {
		return nil, err
	}
	version.ClearRequest(c.info.Served, req)
	if err := validate(req, s.limits.id(nil, "", "id", req.Id), historyCheck("historyLength", req.HistoryLength),
		historyCheck("timelineLength", req.TimelineLength)); err != nil {
		return nil, err
	}
	t, err := s.getTask(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if err := s.timelined(ctx, c.scope, t, req.TimelineLength); err != nil {
		return nil, err
	}
	return t, nil
}

// getTask answers a valid GetTask: at once, or held (a long poll).
func (s *Server) getTask(ctx context.Context, c call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.CurrentGeneration != nil {
		// A long poll (A2A 1.1): the task's generation first, read in the
		// caller's scope without the task, which a hold does not need.
		seq, err := s.store.LastSeq(ctx, c.scope, req.Id)
		if err != nil {
			return nil, storeErr(err, req.Id)
		}
		if taskstore.Generation(seq) <= req.GetCurrentGeneration() {
			return s.hold(ctx, c.scope, req)
		}
	}
	t, err := s.store.GetTask(ctx, c.scope, req.Id)
	if err != nil {
		return nil, storeErr(err, req.Id)
	}
	return s.answer(ctx, t, req.HistoryLength, t.GetGeneration(), true), nil
}

// Page sizes of ListTasks (spec §3.1.4).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// ListTasks implements a2a.Service (spec §3.1.4; decision B5): the
// caller's tasks only, newest status first, with an opaque signed cursor.
func (s *Server) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c, err := s.begin(ctx, a2a.MethodListTasks, req.GetTenant())
	if err != nil {
		return nil, err
	}
	version.ClearRequest(c.info.Served, req)
	filter := filterDigest(c.scope, req)
	q, v := s.listQuery(req, filter)
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	res, err := s.store.ListTasks(ctx, c.scope, q)
	if err != nil {
		return nil, a2a.Internal(err)
	}
	out := &a2a.ListTasksResponse{Tasks: res.Tasks, PageSize: int32(q.Limit), TotalSize: int32(res.Total)}
	for _, t := range res.Tasks {
		if !req.GetIncludeArtifacts() {
			t.Artifacts = nil // spec §3.1.4: omitted entirely
		}
		s.taskAnswer(ctx, withHistory(t, req.HistoryLength, true), t.GetGeneration())
		if err := s.timelined(ctx, c.scope, t, req.TimelineLength); err != nil {
			return nil, err
		}
	}
	if res.More && len(res.Tasks) > 0 {
		last := res.Tasks[len(res.Tasks)-1]
		out.NextPageToken = s.encodeCursor(taskstore.Cursor{Time: last.GetStatus().GetTimestamp().AsTime(), ID: last.Id}, filter)
	}
	return out, nil
}

// listQuery turns a ListTasks request into a store query, checking every
// field; filter is the request's filterDigest, which its page token must
// carry.
func (s *Server) listQuery(req *a2a.ListTasksRequest, filter []byte) (taskstore.ListQuery, []a2a.FieldViolation) {
	var v []a2a.FieldViolation
	size := DefaultPageSize
	if req.PageSize != nil {
		size = int(*req.PageSize)
		if size < 1 || size > MaxPageSize {
			v = append(v, a2a.FieldViolation{Field: "pageSize", Description: "must be between 1 and 100 inclusive"})
		}
	}
	v = s.limits.id(v, "", "contextId", req.ContextId)
	v = append(v, historyCheck("historyLength", req.HistoryLength)...)
	v = append(v, historyCheck("timelineLength", req.TimelineLength)...)
	if _, ok := a2a.TaskState_name[int32(req.Status)]; !ok {
		v = append(v, a2a.FieldViolation{Field: "status", Description: "is not a TaskState value"})
	}
	q := taskstore.ListQuery{ContextID: req.ContextId, State: req.Status, Limit: size}
	if ts := req.StatusTimestampAfter; ts != nil {
		if err := ts.CheckValid(); err != nil {
			v = append(v, a2a.FieldViolation{Field: "statusTimestampAfter", Description: "is not a valid timestamp"})
		} else {
			q.Since = ts.AsTime()
		}
	}
	if req.PageToken != "" {
		cur, ok := s.decodeCursor(req.PageToken, filter)
		if !ok {
			v = append(v, a2a.FieldViolation{Field: "pageToken", Description: "is not a page token this server issued for these filters"})
		}
		q.After = cur
	}
	return q, v
}

// CancelTask implements a2a.Service (spec §3.1.5). Cancelable states are
// SUBMITTED, WORKING, INPUT_REQUIRED and AUTH_REQUIRED; canceling a
// CANCELED task returns it unchanged (idempotent, §3.3.1); other terminal
// states are TaskNotCancelableError.
func (s *Server) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (out *a2a.Task, err error) {
	c, err := s.begin(ctx, a2a.MethodCancelTask, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if err := validate(req, s.limits.id(nil, "", "id", req.Id)); err != nil {
		return nil, err
	}
	r := s.acquire(req.Id, c.scope)
	defer s.release(r)
	defer func() { // after r.mu is let go; the whole timeline (CancelTask has no timelineLength)
		if err == nil {
			err = s.timelined(ctx, c.scope, out, nil)
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	// With Options.Cluster the task may run on another replica: this one
	// writes CANCELED itself (ordered with the runner's writes by the
	// sequence number; append reads what the runner wrote first) and
	// wakes the runner, which stops its agent when it reads the log. So
	// the answer is the task as canceled, whichever replica runs it
	// (spec §3.1.5: "returns its updated state"); when the runner ended
	// the task first, the answer is TaskNotCancelableError, as on one
	// process.
	for try := 0; ; try++ {
		switch st := r.task.GetStatus().GetState(); {
		case st == a2a.TaskState_TASK_STATE_CANCELED:
		case a2a.IsTerminal(st):
			return nil, a2a.NewError(a2a.CodeTaskNotCancelable, "task %q is %s and cannot be canceled", req.Id, st).WithMeta("taskId", req.Id)
		default:
			err := r.cancelTask(ctx)
			if errors.Is(err, taskstore.ErrSeq) && s.opts.Cluster != nil {
				// The runner wrote first every time: it is busy and alive;
				// it writes the cancellation itself when asked.
				err = r.askRunnerToCancel(ctx)
				if err == nil {
					err = ErrTaskClosed
				}
			}
			if (errors.Is(err, ErrTaskClosed) || errors.Is(err, ErrTaskTaken)) && try < 2 {
				continue // ended meanwhile (canceled, or finished), or another replica runs it now: answer as of now
			}
			if err != nil {
				return nil, err
			}
			if c := s.opts.Cluster; c != nil {
				if err := c.Bus.Notify(ctx, cancelKey(req.Id), 0); err != nil {
					s.log.Warn("cluster: waking the replica running a canceled task failed", "task", req.Id, "err", err)
				}
			}
		}
		break
	}
	return s.answerRun(ctx, r, nil), nil
}

// SubscribeToTask implements a2a.Service (spec §3.1.6; decision B2):
// a Task snapshot first, then every event until a terminal state. A task
// already terminal is refused with UnsupportedOperationError.
//
// With a resume position (CallInfo.LastEventID: the SSE Last-Event-ID
// header, gRPC last-event-id metadata) it sends the events after that one
// instead, from the task's log, then live ones: no gap, no duplicate and no
// snapshot, unless the missed events were pruned (then a snapshot first).
// A task that ended meanwhile is caught up, not refused; one whose last
// event was the one named gives an empty stream.
func (s *Server) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.StreamEvent, error] {
	return s.viewStream(ctx, func(yield func(a2a.StreamEvent, error) bool) {
		c, err := s.begin(ctx, a2a.MethodSubscribeToTask, req.GetTenant())
		if err == nil && !s.streaming() {
			err = a2a.NewError(a2a.CodeUnsupportedOperation, "this agent does not support streaming")
		}
		if err == nil {
			err = validate(req, s.limits.id(nil, "", "id", req.Id))
		}
		var after uint64
		var resuming bool
		if err == nil {
			after, resuming, err = resumePosition(ctx)
		}
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		r := s.acquire(req.Id, c.scope)
		defer s.release(r)
		r.mu.Lock()
		err = r.load(ctx)
		if err == nil {
			err = s.refuseUnfinished(c.scope, req.Id)
		}
		if err != nil {
			r.mu.Unlock()
			yield(a2a.StreamEvent{}, err)
			return
		}
		if resuming {
			p, err := r.planResume(ctx, after)
			r.mu.Unlock()
			if err != nil {
				yield(a2a.StreamEvent{}, err)
				return
			}
			if p.sub != nil {
				defer r.unsubscribe(p.sub)
			}
			r.replay(ctx, p, yield)
			return
		}
		if st := r.task.GetStatus().GetState(); a2a.IsTerminal(st) {
			r.mu.Unlock()
			yield(a2a.StreamEvent{}, a2a.NewError(a2a.CodeUnsupportedOperation,
				"task %q is already %s; read it with GetTask", req.Id, st).WithMeta("taskId", req.Id))
			return
		}
		snap := r.snapshot()
		sub := r.subscribe()
		r.follow()
		r.shed()
		r.mu.Unlock()
		defer r.unsubscribe(sub)
		if !yield(snap, nil) {
			return
		}
		pump(ctx, sub, nil, false, yield)
	})
}

// GetExtendedAgentCard implements a2a.Service (spec §3.1.11; decision
// B13: only for an authenticated caller, and only when the card declares
// and the server is given one).
func (s *Server) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	c, err := s.begin(ctx, a2a.MethodGetExtendedAgentCard, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if !s.card.GetCapabilities().GetExtendedAgentCard() {
		return nil, a2a.NewError(a2a.CodeUnsupportedOperation, "this agent does not declare an extended agent card")
	}
	if c.info.Principal == "" {
		return nil, a2a.NewError(a2a.CodeUnauthenticated, "the extended agent card needs an authenticated caller")
	}
	if s.opts.ExtendedCard == nil {
		return nil, a2a.NewError(a2a.CodeExtendedAgentCardNotConfigured, "this agent declares an extended agent card but none is configured")
	}
	return proto.Clone(s.opts.ExtendedCard).(*a2a.AgentCard), nil
}
