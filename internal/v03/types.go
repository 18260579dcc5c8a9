package v03

import "encoding/json"

// The v0.3 JSON schema (its JSON-RPC binding). Optional members are
// pointers or omitempty; maps keep arbitrary JSON (metadata, data parts).

// Message is a v0.3 message (kind "message").
type Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

// GetTaskID returns the message's task id ("" for a nil message).
func (m *Message) GetTaskID() string {
	if m == nil {
		return ""
	}
	return m.TaskID
}

// Part is a v0.3 part: kind "text" (Text), "file" (File) or "data" (Data).
type Part struct {
	Kind     string         `json:"kind"`
	Text     *string        `json:"text,omitempty"`
	File     *FileContent   `json:"file,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// FileContent is the file of a file part: exactly one of Bytes (base64)
// and URI.
type FileContent struct {
	Bytes    *string `json:"bytes,omitempty"`
	URI      *string `json:"uri,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
	Name     string  `json:"name,omitempty"`
}

// Task is a v0.3 task (kind "task").
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// TaskStatus is a task's state ("submitted", "input-required", …), with an
// optional message and ISO 8601 timestamp.
type TaskStatus struct {
	State     string   `json:"state"`
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Artifact is a v0.3 artifact.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Extensions  []string       `json:"extensions,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// StatusUpdate is a v0.3 TaskStatusUpdateEvent (kind "status-update").
type StatusUpdate struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// ArtifactUpdate is a v0.3 TaskArtifactUpdateEvent (kind "artifact-update").
type ArtifactUpdate struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// SendParams are the params of message/send and message/stream.
type SendParams struct {
	Message       *Message       `json:"message"`
	Configuration *SendConfig    `json:"configuration,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// SendConfig is v0.3's MessageSendConfiguration.
type SendConfig struct {
	AcceptedOutputModes    []string    `json:"acceptedOutputModes,omitempty"`
	Blocking               *bool       `json:"blocking,omitempty"`
	HistoryLength          *int32      `json:"historyLength,omitempty"`
	PushNotificationConfig *PushConfig `json:"pushNotificationConfig,omitempty"`
}

// PushConfig is v0.3's PushNotificationConfig.
type PushConfig struct {
	ID             string    `json:"id,omitempty"`
	URL            string    `json:"url"`
	Token          string    `json:"token,omitempty"`
	Authentication *PushAuth `json:"authentication,omitempty"`
}

// PushAuth is v0.3's PushNotificationAuthenticationInfo.
type PushAuth struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// TaskPushConfig is v0.3's TaskPushNotificationConfig.
type TaskPushConfig struct {
	TaskID                 string      `json:"taskId"`
	PushNotificationConfig *PushConfig `json:"pushNotificationConfig"`
}

// TaskQueryParams are the params of tasks/get.
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int32         `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// TaskIDParams are the params of tasks/cancel, tasks/resubscribe and
// tasks/pushNotificationConfig/list.
type TaskIDParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PushConfigParams are the params of tasks/pushNotificationConfig/get and
// delete: the task id and the configuration's id (optional for get).
type PushConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId,omitempty"`
	Metadata                 map[string]any `json:"metadata,omitempty"`
}

// ErrorObject is a v0.3 JSON-RPC error object, also the body of a v0.3
// HTTP+JSON error and of an SSE "error" event there.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// The v0.3 kinds.
const (
	KindMessage        = "message"
	KindTask           = "task"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
	KindText           = "text"
	KindFile           = "file"
	KindData           = "data"
)

// ProtocolVersion is the version this package speaks, as cards and the
// A2A-Version service parameter write it.
const ProtocolVersion = "0.3"

// The v0.3 JSON-RPC method names.
const (
	MethodSend         = "message/send"
	MethodStream       = "message/stream"
	MethodGet          = "tasks/get"
	MethodCancel       = "tasks/cancel"
	MethodResubscribe  = "tasks/resubscribe"
	MethodPushSet      = "tasks/pushNotificationConfig/set"
	MethodPushGet      = "tasks/pushNotificationConfig/get"
	MethodPushList     = "tasks/pushNotificationConfig/list"
	MethodPushDelete   = "tasks/pushNotificationConfig/delete"
	MethodExtendedCard = "agent/getAuthenticatedExtendedCard"
)

// IsMethod reports whether name is a v0.3 JSON-RPC method.
func IsMethod(name string) bool {
	switch name {
	case MethodSend, MethodStream, MethodGet, MethodCancel, MethodResubscribe,
		MethodPushSet, MethodPushGet, MethodPushList, MethodPushDelete, MethodExtendedCard:
		return true
	}
	return false
}
