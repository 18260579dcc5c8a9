package server

// The four push notification configuration operations (brief §3.7-§3.10).

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

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
