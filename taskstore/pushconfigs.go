package taskstore

import (
	"context"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// PushConfigs keeps the push notification configurations of tasks. The
// server core calls it for the push configuration operations, always
// within the caller's scope. A configuration belongs to a task: it goes
// when the task goes (Tasks.DeleteFinished). All methods may be called
// concurrently.
type PushConfigs interface {
	// PutPushConfig creates or replaces the configuration with the same
	// task id and config id, version included. The task must exist in the
	// scope. Replacing a configuration drops its queued notifications and
	// lifts a suspension. With ev.Push set, ev.Response is queued for this
	// configuration, as its first notification, in the same write.
	PutPushConfig(ctx context.Context, s Scope, c *PushConfig, ev Event) error
	// GetPushConfig returns one configuration, or ErrNotFound.
	GetPushConfig(ctx context.Context, s Scope, taskID, id string) (*PushConfig, error)
	// ListPushConfigs returns a task's configurations ordered by id.
	ListPushConfigs(ctx context.Context, s Scope, taskID string) ([]*PushConfig, error)
	// DeletePushConfig removes one configuration and its queued
	// notifications; removing a missing one is not an error.
	DeletePushConfig(ctx context.Context, s Scope, taskID, id string) error
}

// PushConfig is a push notification configuration as a store keeps it: the
// configuration exactly as its caller registered it (and as the push
// configuration operations return it, spec §3.1.7-§3.1.10), and the
// protocol version it was registered in (spec §3.6.2), which decides the
// shape of its notifications (spec §3.5.3): a configuration registered
// over v0.3 receives what v0.3 servers post.
//
// The embedded configuration's fields and getters are PushConfig's; note
// that package proto given a PushConfig sees that configuration alone,
// without Version.
type PushConfig struct {
	*a2a.TaskPushNotificationConfig
	// Version is the protocol version (Major.Minor) the call that
	// registered the configuration was served in, a2a.CallInfo.Served:
	// "1.0" or "0.3" today. A store keeps it as given, as data of its own
	// (never in the URL); "" is read as the current version.
	Version string
}

// EqualPushConfig reports whether a and b are the same configuration
// (proto.Equal) with the same version; two nils are equal.
func EqualPushConfig(a, b *PushConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return proto.Equal(a.TaskPushNotificationConfig, b.TaskPushNotificationConfig) && a.Version == b.Version
}

// ClonePushConfig returns a deep copy of c (nil for nil).
func ClonePushConfig(c *PushConfig) *PushConfig {
	if c == nil {
		return nil
	}
	return &PushConfig{TaskPushNotificationConfig: proto.CloneOf(c.TaskPushNotificationConfig), Version: c.Version}
}
