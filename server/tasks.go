package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"iter"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// GetTask implements a2a.Service (brief §3.3).
func (s *Server) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c, err := s.begin(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if err := validate(req, historyCheck("historyLength", req.HistoryLength)); err != nil {
		return nil, err
	}
	t, err := s.store.GetTask(ctx, c.scope, req.Id)
	if err != nil {
		return nil, storeErr(err, req.Id)
	}
	return withHistory(t, req.HistoryLength, true), nil
}

// Page sizes of ListTasks (brief §3.4).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// ListTasks implements a2a.Service (brief §3.4, DESIGN B5): the caller's
// tasks only, newest status first, with an opaque signed cursor.
func (s *Server) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c, err := s.begin(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	var v []a2a.FieldViolation
	size := DefaultPageSize
	if req.PageSize != nil {
		size = int(*req.PageSize)
		if size < 1 || size > MaxPageSize {
			v = append(v, a2a.FieldViolation{Field: "pageSize", Description: "must be between 1 and 100 inclusive"})
		}
	}
	v = append(v, historyCheck("historyLength", req.HistoryLength)...)
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
	filter := filterDigest(c.scope, req)
	if req.PageToken != "" {
		cur, ok := s.decodeCursor(req.PageToken, filter)
		if !ok {
			v = append(v, a2a.FieldViolation{Field: "pageToken", Description: "is not a page token this server issued for these filters"})
		}
		q.After = cur
	}
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	res, err := s.store.ListTasks(ctx, c.scope, q)
	if err != nil {
		return nil, a2a.Internal(err)
	}
	out := &a2a.ListTasksResponse{Tasks: res.Tasks, PageSize: int32(size), TotalSize: int32(res.Total)}
	for _, t := range res.Tasks {
		if !req.GetIncludeArtifacts() {
			t.Artifacts = nil // brief §3.4: omitted entirely
		}
		withHistory(t, req.HistoryLength, true)
	}
	if res.More && len(res.Tasks) > 0 {
		last := res.Tasks[len(res.Tasks)-1]
		out.NextPageToken = s.encodeCursor(taskstore.Cursor{Time: last.GetStatus().GetTimestamp().AsTime(), ID: last.Id}, filter)
	}
	return out, nil
}

// CancelTask implements a2a.Service (brief §3.5). Cancelable states are
// SUBMITTED, WORKING, INPUT_REQUIRED and AUTH_REQUIRED; canceling a
// CANCELED task returns it unchanged (idempotent, §3.3.1); other terminal
// states are TaskNotCancelableError.
func (s *Server) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	c, err := s.begin(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if err := validate(req); err != nil {
		return nil, err
	}
	r := s.acquire(req.Id, c.scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	switch st := r.task.GetStatus().GetState(); {
	case st == a2a.TaskState_TASK_STATE_CANCELED:
	case a2a.IsTerminal(st):
		return nil, a2a.NewError(a2a.CodeTaskNotCancelable, "task %q is %s and cannot be canceled", req.Id, st).WithMeta("taskId", req.Id)
	default:
		if err := r.cancelTask(ctx); err != nil {
			return nil, err
		}
	}
	return proto.Clone(r.task).(*a2a.Task), nil
}

// SubscribeToTask implements a2a.Service (brief §3.6, DESIGN B2): a Task
// snapshot first, then every event until a terminal state. A task already
// terminal is refused with UnsupportedOperationError.
func (s *Server) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		c, err := s.begin(ctx, req.GetTenant())
		if err == nil && !s.streaming() {
			err = a2a.NewError(a2a.CodeUnsupportedOperation, "this agent does not support streaming")
		}
		if err == nil {
			err = validate(req)
		}
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		r := s.acquire(req.Id, c.scope)
		defer s.release(r)
		r.mu.Lock()
		if err := r.load(ctx); err != nil {
			r.mu.Unlock()
			yield(a2a.StreamEvent{}, err)
			return
		}
		if st := r.task.GetStatus().GetState(); a2a.IsTerminal(st) {
			r.mu.Unlock()
			yield(a2a.StreamEvent{}, a2a.NewError(a2a.CodeUnsupportedOperation,
				"task %q is already %s; read it with GetTask", req.Id, st).WithMeta("taskId", req.Id))
			return
		}
		snap := a2a.StreamEvent{Seq: r.seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(r.task).(*a2a.Task)}}}
		sub := r.subscribe()
		r.mu.Unlock()
		defer r.unsubscribe(sub)
		if !yield(snap, nil) {
			return
		}
		pump(ctx, sub, nil, false, yield)
	}
}

// CreateTaskPushNotificationConfig implements a2a.Service (brief §3.7). The
// server assigns the id unless the client gave one (SPEC SILENT; a
// client-chosen id replaces the config with that id). With delivery on, the
// URL must pass the pusher's SSRF guard, and the new configuration's first
// notification is a snapshot of the task (see putPushConfig).
func (s *Server) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c, err := s.beginPush(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	v := a2a.CheckRequired(req)
	if req.TaskId == "" {
		v = append(v, a2a.FieldViolation{Field: "taskId", Description: "is required"})
	}
	if req.Url != "" {
		v = append(v, validatePushURL("url", req.Url)...)
	}
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	if _, err := s.store.GetTask(ctx, c.scope, req.TaskId); err != nil {
		return nil, storeErr(err, req.TaskId)
	}
	if err := s.checkPushURL(ctx, "url", req.Url); err != nil {
		return nil, err
	}
	cfg := proto.Clone(req).(*a2a.TaskPushNotificationConfig)
	if cfg.Id == "" {
		cfg.Id = a2a.NewID()
	}
	// Under the run's lock, so the snapshot and the events after it reach
	// the configuration in order.
	r := s.acquire(req.TaskId, c.scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	if err := r.putPushConfig(context.WithoutCancel(ctx), cfg); err != nil {
		return nil, storeErr(err, req.TaskId)
	}
	return cfg, nil
}

// GetTaskPushNotificationConfig implements a2a.Service (brief §3.8); a
// missing configuration is TaskNotFoundError.
func (s *Server) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	c, err := s.beginPush(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if err := validate(req); err != nil {
		return nil, err
	}
	cfg, err := s.store.GetPushConfig(ctx, c.scope, req.TaskId, req.Id)
	if err != nil {
		if errors.Is(err, taskstore.ErrNotFound) {
			return nil, a2a.NewError(a2a.CodeTaskNotFound, "push notification config %q of task %q not found", req.Id, req.TaskId).
				WithMeta("taskId", req.TaskId).WithMeta("configId", req.Id)
		}
		return nil, a2a.Internal(err)
	}
	return cfg, nil
}

// ListTaskPushNotificationConfigs implements a2a.Service (brief §3.9). All
// of a task's configurations come in one page.
func (s *Server) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	c, err := s.beginPush(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	v := a2a.CheckRequired(req)
	if req.PageSize < 0 {
		v = append(v, a2a.FieldViolation{Field: "pageSize", Description: "must not be negative"})
	}
	if req.PageToken != "" {
		v = append(v, a2a.FieldViolation{Field: "pageToken", Description: "this server returns every configuration in one page; there is no next page"})
	}
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	if _, err := s.store.GetTask(ctx, c.scope, req.TaskId); err != nil {
		return nil, storeErr(err, req.TaskId)
	}
	cfgs, err := s.store.ListPushConfigs(ctx, c.scope, req.TaskId)
	if err != nil {
		return nil, storeErr(err, req.TaskId)
	}
	return &a2a.ListTaskPushNotificationConfigsResponse{Configs: cfgs}, nil
}

// DeleteTaskPushNotificationConfig implements a2a.Service (brief §3.10):
// idempotent for a config already gone, TaskNotFoundError for an unknown
// task.
func (s *Server) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	c, err := s.beginPush(ctx, req.GetTenant())
	if err != nil {
		return err
	}
	if err := validate(req); err != nil {
		return err
	}
	if _, err := s.store.GetTask(ctx, c.scope, req.TaskId); err != nil {
		return storeErr(err, req.TaskId)
	}
	if err := s.store.DeletePushConfig(ctx, c.scope, req.TaskId, req.Id); err != nil {
		return storeErr(err, req.TaskId)
	}
	if p := s.opts.Push; p != nil {
		p.Forget(taskstore.PushTarget{Scope: c.scope, TaskID: req.TaskId, ConfigID: req.Id})
	}
	return nil
}

// beginPush is begin plus the push capability gate (brief §3.3.4).
func (s *Server) beginPush(ctx context.Context, tenant string) (call, error) {
	c, err := s.begin(ctx, tenant)
	if err == nil && !s.pushEnabled() {
		err = a2a.NewError(a2a.CodePushNotificationNotSupported, "this agent does not support push notifications")
	}
	return c, err
}

// GetExtendedAgentCard implements a2a.Service (brief §3.11, DESIGN B13).
func (s *Server) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	c, err := s.begin(ctx, req.GetTenant())
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

// validate checks REQUIRED fields plus extra violations.
func validate(m proto.Message, extra ...[]a2a.FieldViolation) error {
	v := a2a.CheckRequired(m)
	for _, e := range extra {
		v = append(v, e...)
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	return nil
}

// historyCheck rejects a negative historyLength (DESIGN B4).
func historyCheck(field string, n *int32) []a2a.FieldViolation {
	if n != nil && *n < 0 {
		return []a2a.FieldViolation{{Field: field, Description: "must be zero or positive"}}
	}
	return nil
}

// storeErr maps a store error for a task id.
func storeErr(err error, id string) error {
	if errors.Is(err, taskstore.ErrNotFound) {
		return taskNotFound(id)
	}
	return a2a.Internal(err)
}

// filterDigest binds a page token to the caller and the filters it was
// issued for, so a token replayed with other filters is refused.
func filterDigest(scope taskstore.Scope, req *a2a.ListTasksRequest) []byte {
	h := sha256.New()
	for _, s := range []string{scope.Tenant, scope.Owner, req.ContextId, req.Status.String()} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if ts := req.StatusTimestampAfter; ts != nil {
		_ = binary.Write(h, binary.BigEndian, ts.AsTime().UnixMilli())
	}
	return h.Sum(nil)[:8]
}

// encodeCursor makes a page token: the position (status time in ms and task
// id), a digest of the filters, and an HMAC over both, base64url-encoded.
func (s *Server) encodeCursor(c taskstore.Cursor, filter []byte) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(c.Time.UnixMilli()))
	b = append(b, filter...)
	b = append(b, c.ID...)
	mac := hmac.New(sha256.New, s.opts.CursorKey)
	mac.Write(b)
	b = mac.Sum(b)[:len(b)+16]
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor checks and opens a page token.
func (s *Server) decodeCursor(tok string, filter []byte) (*taskstore.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 8+len(filter)+16 {
		return nil, false
	}
	body, sum := b[:len(b)-16], b[len(b)-16:]
	mac := hmac.New(sha256.New, s.opts.CursorKey)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil)[:16], sum) || !hmac.Equal(body[8:8+len(filter)], filter) {
		return nil, false
	}
	ms := int64(binary.BigEndian.Uint64(body[:8]))
	return &taskstore.Cursor{Time: time.UnixMilli(ms).UTC(), ID: string(body[8+len(filter):])}, true
}
