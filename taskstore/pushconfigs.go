package taskstore

import (
	"context"

	"parley.dev/parley/a2a"
)

// PushConfigs keeps the push notification configurations of tasks. The
// server core calls it for the push configuration operations, always
// within the caller's scope. A configuration belongs to a task: it goes
// when the task goes (Tasks.DeleteFinished). All methods may be called
// concurrently.
type PushConfigs interface {
	// PutPushConfig creates or replaces the configuration with the same
	// task id and config id. The task must exist in the scope. Replacing a
	// configuration drops its queued notifications and lifts a suspension.
	// With ev.Push set, ev.Response is queued for this configuration, as
	// its first notification, in the same write.
	PutPushConfig(ctx context.Context, s Scope, c *a2a.TaskPushNotificationConfig, ev Event) error
	// GetPushConfig returns one configuration, or ErrNotFound.
	GetPushConfig(ctx context.Context, s Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error)
	// ListPushConfigs returns a task's configurations ordered by id.
	ListPushConfigs(ctx context.Context, s Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error)
	// DeletePushConfig removes one configuration and its queued
	// notifications; removing a missing one is not an error.
	DeletePushConfig(ctx context.Context, s Scope, taskID, id string) error
}
