package server

// The four push notification configuration operations (spec §3.1.7-§3.1.10).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// CreateTaskPushNotificationConfig implements a2a.Service (spec §3.1.7). The
// server assigns the id unless the client gave one (SPEC SILENT; a
// client-chosen id replaces the config with that id). With delivery on, the
// URL must pass the pusher's SSRF guard, and the new configuration's first
// notification is a snapshot of the task (see putPushConfig). A task holds
// at most Limits.MaxPushConfigs configurations.
func (s *Server) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c, err := s.beginPush(ctx, a2a.MethodCreateTaskPushNotificationConfig, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if v := s.limits.pushConfig(nil, "", req); len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	v := a2a.CheckRequired(req)
	if req.TaskId == "" {
		v = append(v, a2a.FieldViolation{Field: "taskId", Description: "is required"})
	}
	v = append(v, validatePushURL("url", req.Url)...)
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
	// the configuration in order, and two creations cannot both take the
	// last free place.
	r := s.acquire(req.TaskId, c.scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	if err := r.roomForPushConfig(ctx, cfg.Id, "taskId"); err != nil {
		return nil, err
	}
	stored := &taskstore.PushConfig{TaskPushNotificationConfig: cfg, Version: c.info.Served}
	if err := r.putPushConfig(context.WithoutCancel(ctx), stored); err != nil {
		return nil, storeErr(err, req.TaskId)
	}
	return cfg, nil
}

// GetTaskPushNotificationConfig implements a2a.Service (spec §3.1.8); a
// missing configuration is TaskNotFoundError.
func (s *Server) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	c, err := s.beginPush(ctx, a2a.MethodGetTaskPushNotificationConfig, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if err := validate(req, s.limits.id(s.limits.id(nil, "", "taskId", req.TaskId), "", "id", req.Id)); err != nil {
		return nil, err
	}
	cfg, err := s.store.GetPushConfig(ctx, c.scope, req.TaskId, req.Id)
	if err != nil {
		if errors.Is(err, taskstore.ErrNotFound) {
			id, task := clip(req.Id), clip(req.TaskId)
			return nil, a2a.NewError(a2a.CodeTaskNotFound, "push notification config %q of task %q not found", id, task).
				WithMeta("taskId", task).WithMeta("configId", id)
		}
		return nil, a2a.Internal(err)
	}
	return cfg.TaskPushNotificationConfig, nil
}

// ListTaskPushNotificationConfigs implements a2a.Service (spec §3.1.9): a
// page of the task's configurations in id order. pageSize is 1 to
// MaxPageSize, DefaultPageSize when unset (0), as for ListTasks; pageToken
// is an opaque token from the previous page, signed and bound to the caller
// and the task; nextPageToken is "" on the last page.
func (s *Server) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	c, err := s.beginPush(ctx, a2a.MethodListTaskPushNotificationConfigs, req.GetTenant())
	if err != nil {
		return nil, err
	}
	v := s.limits.id(nil, "", "taskId", req.TaskId)
	v = append(v, a2a.CheckRequired(req)...)
	size := DefaultPageSize
	if req.PageSize != 0 {
		size = int(req.PageSize)
		if size < 1 || size > MaxPageSize {
			v = append(v, a2a.FieldViolation{Field: "pageSize", Description: "must be between 1 and 100 inclusive"})
		}
	}
	filter := pushFilterDigest(c.scope, req.TaskId)
	var after *taskstore.Cursor
	if req.PageToken != "" {
		var ok bool
		if after, ok = s.decodeCursor(req.PageToken, filter); !ok {
			v = append(v, a2a.FieldViolation{Field: "pageToken", Description: "is not a page token this server issued for this task"})
		}
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
	page, more := pushPage(registered(cfgs), after, size)
	out := &a2a.ListTaskPushNotificationConfigsResponse{Configs: page}
	if more {
		out.NextPageToken = s.encodeCursor(taskstore.Cursor{ID: page[len(page)-1].Id}, filter)
	}
	return out, nil
}

// pushPage returns the page of at most size configurations whose ids come
// after the cursor's, from cfgs in id order (byte order, as the stores
// sort), and whether more follow. A configuration deleted since the token
// was issued does not move the page. (The store lists every configuration
// of the task; MaxPushConfigs keeps that short.)
func pushPage(cfgs []*a2a.TaskPushNotificationConfig, after *taskstore.Cursor, size int) (page []*a2a.TaskPushNotificationConfig, more bool) {
	if after != nil {
		i, found := slices.BinarySearchFunc(cfgs, after.ID, func(c *a2a.TaskPushNotificationConfig, id string) int {
			return strings.Compare(c.Id, id)
		})
		if found {
			i++
		}
		cfgs = cfgs[i:]
	}
	if len(cfgs) > size {
		return cfgs[:size], true
	}
	return cfgs, false
}

// registered returns the configurations of stored ones, as their callers
// registered them.
func registered(cfgs []*taskstore.PushConfig) []*a2a.TaskPushNotificationConfig {
	out := make([]*a2a.TaskPushNotificationConfig, len(cfgs))
	for i, c := range cfgs {
		out[i] = c.TaskPushNotificationConfig
	}
	return out
}

// roomForPushConfig refuses a configuration with a new id when the task
// already has Limits.MaxPushConfigs of them; field names the request field
// the violation is reported on. Callers hold r.mu, so the count cannot
// change before the configuration is stored.
func (r *run) roomForPushConfig(ctx context.Context, id, field string) error {
	max := r.s.limits.pushConfigs
	if max == noLimit {
		return nil
	}
	cfgs, err := r.s.store.ListPushConfigs(ctx, r.scope, r.id)
	if err != nil {
		return storeErr(err, r.id)
	}
	if len(cfgs) < max || slices.ContainsFunc(cfgs, func(c *taskstore.PushConfig) bool { return c.Id == id }) {
		return nil
	}
	return a2a.InvalidParams(a2a.FieldViolation{Field: field, Description: fmt.Sprintf(
		"the task already has %d push notification configurations; at most %d are allowed (limit maxPushConfigs): delete one, or replace one by its id",
		len(cfgs), max)})
}

// DeleteTaskPushNotificationConfig implements a2a.Service (spec §3.1.10):
// idempotent for a config already gone, TaskNotFoundError for an unknown
// task.
func (s *Server) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	c, err := s.beginPush(ctx, a2a.MethodDeleteTaskPushNotificationConfig, req.GetTenant())
	if err != nil {
		return err
	}
	if err := validate(req, s.limits.id(s.limits.id(nil, "", "taskId", req.TaskId), "", "id", req.Id)); err != nil {
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
