package v03

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// The v0.3 proto (package a2a.v1) as ProtoJSON: the shapes of v0.3's
// HTTP+JSON binding. Readers accept the proto's original snake_case names
// too where the v0.3 SDKs did (message_id, context_id, …) for the members
// a request needs.

// PMessage is the proto Message: parts are "content", roles "ROLE_USER".
type PMessage struct {
	MessageID  string          `json:"messageId,omitempty"`
	ContextID  string          `json:"contextId,omitempty"`
	TaskID     string          `json:"taskId,omitempty"`
	Role       json.RawMessage `json:"role,omitempty"`
	Content    []PPart         `json:"content,omitempty"`
	Metadata   map[string]any  `json:"metadata,omitempty"`
	Extensions []string        `json:"extensions,omitempty"`
}

// PPart is the proto Part: one of text, file and data.
type PPart struct {
	Text *string `json:"text,omitempty"`
	File *PFile  `json:"file,omitempty"`
	Data *PData  `json:"data,omitempty"`
}

// PFile is the proto FilePart.
type PFile struct {
	FileWithURI   *string `json:"fileWithUri,omitempty"`
	FileWithBytes *string `json:"fileWithBytes,omitempty"`
	MimeType      string  `json:"mimeType,omitempty"`
}

// PData is the proto DataPart.
type PData struct {
	Data map[string]any `json:"data"`
}

// PTask is the proto Task.
type PTask struct {
	ID        string         `json:"id,omitempty"`
	ContextID string         `json:"contextId,omitempty"`
	Status    *PStatus       `json:"status,omitempty"`
	Artifacts []PArtifact    `json:"artifacts,omitempty"`
	History   []PMessage     `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PStatus is the proto TaskStatus; its message is named "update" in the
// proto and written "message" in ProtoJSON by the v0.3 SDKs; both are read.
type PStatus struct {
	State     any       `json:"state,omitempty"`
	Message   *PMessage `json:"message,omitempty"`
	Update    *PMessage `json:"update,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// PArtifact is the proto Artifact.
type PArtifact struct {
	ArtifactID  string         `json:"artifactId,omitempty"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []PPart        `json:"parts,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// PStatusUpdate is the proto TaskStatusUpdateEvent.
type PStatusUpdate struct {
	TaskID    string         `json:"taskId,omitempty"`
	ContextID string         `json:"contextId,omitempty"`
	Status    *PStatus       `json:"status,omitempty"`
	Final     bool           `json:"final,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PArtifactUpdate is the proto TaskArtifactUpdateEvent.
type PArtifactUpdate struct {
	TaskID    string         `json:"taskId,omitempty"`
	ContextID string         `json:"contextId,omitempty"`
	Artifact  *PArtifact     `json:"artifact,omitempty"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// PStreamResponse is the proto StreamResponse (also SendMessageResponse,
// which holds task or message): exactly one member set.
type PStreamResponse struct {
	Task           *PTask           `json:"task,omitempty"`
	Message        *PMessage        `json:"message,omitempty"`
	Msg            *PMessage        `json:"msg,omitempty"`
	StatusUpdate   *PStatusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *PArtifactUpdate `json:"artifactUpdate,omitempty"`
}

// PSendRequest is the proto SendMessageRequest; the message is "message"
// in ProtoJSON ("request" in the proto).
type PSendRequest struct {
	Message       *PMessage      `json:"message,omitempty"`
	Request       *PMessage      `json:"request,omitempty"`
	Configuration *PSendConfig   `json:"configuration,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// PSendConfig is the proto SendMessageConfiguration.
type PSendConfig struct {
	AcceptedOutputModes []string    `json:"acceptedOutputModes,omitempty"`
	PushNotification    *PushConfig `json:"pushNotification,omitempty"`
	HistoryLength       *int32      `json:"historyLength,omitempty"`
	Blocking            *bool       `json:"blocking,omitempty"`
}

// PTaskPushConfig is the proto TaskPushNotificationConfig: a resource
// name "tasks/{id}/pushNotificationConfigs/{configId}" and the config.
type PTaskPushConfig struct {
	Name                   string      `json:"name,omitempty"`
	PushNotificationConfig *PushConfig `json:"pushNotificationConfig,omitempty"`
}

// PCreatePushRequest is the proto CreateTaskPushNotificationConfigRequest,
// which the official JS SDK 0.3 server expects as the body of
// POST /v1/tasks/{id}/pushNotificationConfigs (its client sends the
// TaskPushNotificationConfig alone; Parley reads both).
type PCreatePushRequest struct {
	Parent   string           `json:"parent,omitempty"`
	ConfigID string           `json:"configId,omitempty"`
	Config   *PTaskPushConfig `json:"config,omitempty"`
	PTaskPushConfig
}

// PListPushResponse is the proto ListTaskPushNotificationConfigResponse.
type PListPushResponse struct {
	Configs       []PTaskPushConfig `json:"configs"`
	NextPageToken string            `json:"nextPageToken"`
}

// roleToV1 reads a ProtoJSON role: its enum name or number.
func roleToV1(raw json.RawMessage, field string, v *violations) a2a.Role {
	var s any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	switch s {
	case "ROLE_USER", float64(1):
		return a2a.Role_ROLE_USER
	case "ROLE_AGENT", float64(2):
		return a2a.Role_ROLE_AGENT
	}
	v.add(field, `must be "ROLE_USER" or "ROLE_AGENT" (v0.3 HTTP+JSON), got %s`, orNothing(raw))
	return 0
}

func orNothing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

// PMessageToV1 translates a proto message of a request.
func PMessageToV1(m *PMessage, field string, v *violations) *a2a.Message {
	if m == nil {
		v.add(field, "is required")
		return nil
	}
	if m.MessageID == "" {
		v.add(field+".messageId", "is required")
	}
	out := &a2a.Message{MessageId: m.MessageID, ContextId: m.ContextID, TaskId: m.TaskID, Extensions: m.Extensions,
		Role: roleToV1(m.Role, field+".role", v), Metadata: structOf(m.Metadata, field+".metadata", v)}
	if len(m.Content) == 0 {
		v.add(field+".content", "is required and must not be empty (v0.3 HTTP+JSON names the parts content)")
	}
	for i := range m.Content {
		out.Parts = append(out.Parts, PPartToV1(&m.Content[i], fmt.Sprintf("%s.content[%d]", field, i), v))
	}
	return out
}

// PPartToV1 translates a proto part.
func PPartToV1(p *PPart, field string, v *violations) *a2a.Part {
	out := &a2a.Part{}
	n := 0
	if p.Text != nil {
		n++
		out.Content = &a2a.Part_Text{Text: *p.Text}
	}
	if p.File != nil {
		n++
		out.MediaType = p.File.MimeType
		switch {
		case p.File.FileWithBytes != nil:
			raw, err := base64.StdEncoding.DecodeString(*p.File.FileWithBytes)
			if err != nil {
				v.add(field+".file.fileWithBytes", "is not base64: %v", err)
			}
			out.Content = &a2a.Part_Raw{Raw: raw}
		case p.File.FileWithURI != nil:
			out.Content = &a2a.Part_Url{Url: *p.File.FileWithURI}
		default:
			v.add(field+".file", "must hold fileWithUri or fileWithBytes")
		}
	}
	if p.Data != nil {
		n++
		val, err := structpb.NewValue(p.Data.Data)
		if err != nil || p.Data.Data == nil {
			v.add(field+".data.data", "is required and must be an object")
		}
		out.Content = &a2a.Part_Data{Data: val}
	}
	if n != 1 {
		v.add(field, "must hold exactly one of text, file and data")
	}
	return out
}

// PSendToV1 translates the body of POST /v1/message:send and :stream (and
// the gRPC SendMessageRequest).
func PSendToV1(p *PSendRequest) (*a2a.SendMessageRequest, error) {
	var v violations
	m := p.Message
	if m == nil {
		m = p.Request
	}
	out := &a2a.SendMessageRequest{Message: PMessageToV1(m, "message", &v), Metadata: structOf(p.Metadata, "metadata", &v)}
	if c := p.Configuration; c != nil {
		// The proto's blocking is a plain bool: absent is false, so a
		// configuration without it asks not to block (as the v0.3 SDKs
		// read it); no configuration at all blocks.
		out.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: c.AcceptedOutputModes,
			ReturnImmediately: c.Blocking == nil || !*c.Blocking}
		// The proto's historyLength is a plain int32: 0 is "unset".
		if c.HistoryLength != nil && *c.HistoryLength != 0 {
			out.Configuration.HistoryLength = c.HistoryLength
		}
		if c.PushNotification != nil && m != nil {
			out.Configuration.TaskPushNotificationConfig = PushConfigToV1(m.TaskID, c.PushNotification, "configuration.pushNotification", &v)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ConfigName is the proto resource name of a push configuration.
func ConfigName(taskID, configID string) string {
	return "tasks/" + taskID + "/pushNotificationConfigs/" + configID
}

// PPushConfigFromV1 translates a push configuration to the proto shape.
func PPushConfigFromV1(c *a2a.TaskPushNotificationConfig) PTaskPushConfig {
	t := PushConfigFromV1(c)
	return PTaskPushConfig{Name: ConfigName(c.GetTaskId(), c.GetId()), PushNotificationConfig: t.PushNotificationConfig}
}

// PCreatePushToV1 translates the body of POST
// /v1/tasks/{taskID}/pushNotificationConfigs.
func PCreatePushToV1(taskID string, p *PCreatePushRequest) (*a2a.TaskPushNotificationConfig, error) {
	var v violations
	cfg := &p.PTaskPushConfig
	if p.Config != nil {
		cfg = p.Config
	}
	if cfg.PushNotificationConfig == nil {
		v.add("pushNotificationConfig", "is required")
		return nil, v.Err()
	}
	out := PushConfigToV1(taskID, cfg.PushNotificationConfig, "pushNotificationConfig", &v)
	if out.Id == "" {
		out.Id = p.ConfigID
	}
	if out.Id == "" && cfg.Name != "" {
		if i := strings.LastIndex(cfg.Name, "/pushNotificationConfigs/"); i >= 0 {
			out.Id = cfg.Name[i+len("/pushNotificationConfigs/"):]
		}
	}
	return out, v.Err()
}

// PMessageFromV1 translates a message to the proto shape. Lossy: part
// metadata, file names and referenceTaskIds have no place in the v0.3
// proto and are dropped.
func PMessageFromV1(m *a2a.Message) *PMessage {
	if m == nil {
		return nil
	}
	role := `"ROLE_USER"`
	if m.GetRole() == a2a.Role_ROLE_AGENT {
		role = `"ROLE_AGENT"`
	}
	return &PMessage{MessageID: m.GetMessageId(), ContextID: m.GetContextId(), TaskID: m.GetTaskId(), Role: json.RawMessage(role),
		Content: pPartsFromV1(m.GetParts()), Metadata: mapOf(m.GetMetadata()), Extensions: m.GetExtensions()}
}

func pPartsFromV1(ps []*a2a.Part) []PPart {
	out := make([]PPart, 0, len(ps))
	for _, p := range ps {
		s := PartFromV1(p)
		switch {
		case s.Text != nil:
			out = append(out, PPart{Text: s.Text})
		case s.File != nil:
			out = append(out, PPart{File: &PFile{FileWithURI: s.File.URI, FileWithBytes: s.File.Bytes, MimeType: s.File.MimeType}})
		default:
			out = append(out, PPart{Data: &PData{Data: s.Data}})
		}
	}
	return out
}

// PTaskFromV1 translates a task to the proto shape.
func PTaskFromV1(t *a2a.Task) *PTask {
	out := &PTask{ID: t.GetId(), ContextID: t.GetContextId(), Status: pStatusFromV1(t.GetStatus()), Metadata: mapOf(t.GetMetadata())}
	for _, a := range t.GetArtifacts() {
		out.Artifacts = append(out.Artifacts, *pArtifactFromV1(a))
	}
	for _, m := range t.GetHistory() {
		out.History = append(out.History, *PMessageFromV1(m))
	}
	return out
}

func pStatusFromV1(s *a2a.TaskStatus) *PStatus {
	out := &PStatus{State: protoStateName(s.GetState()), Message: PMessageFromV1(s.GetMessage())}
	if ts := s.GetTimestamp(); ts != nil {
		out.Timestamp = ts.AsTime().UTC().Format(time.RFC3339Nano)
	}
	return out
}

func pArtifactFromV1(a *a2a.Artifact) *PArtifact {
	return &PArtifact{ArtifactID: a.GetArtifactId(), Name: a.GetName(), Description: a.GetDescription(),
		Parts: pPartsFromV1(a.GetParts()), Metadata: mapOf(a.GetMetadata()), Extensions: a.GetExtensions()}
}

// PEventFromV1 translates one stream event (or a SendMessageResponse's
// payload) to the proto StreamResponse shape.
func PEventFromV1(r *a2a.StreamResponse, subscribe bool) *PStreamResponse {
	switch p := r.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		return &PStreamResponse{Task: PTaskFromV1(p.Task)}
	case *a2a.StreamResponse_Message:
		return &PStreamResponse{Message: PMessageFromV1(p.Message)}
	case *a2a.StreamResponse_StatusUpdate:
		u := p.StatusUpdate
		return &PStreamResponse{StatusUpdate: &PStatusUpdate{TaskID: u.GetTaskId(), ContextID: u.GetContextId(),
			Status: pStatusFromV1(u.GetStatus()), Final: Final(u.GetStatus().GetState(), subscribe), Metadata: mapOf(u.GetMetadata())}}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		return &PStreamResponse{ArtifactUpdate: &PArtifactUpdate{TaskID: u.GetTaskId(), ContextID: u.GetContextId(),
			Artifact: pArtifactFromV1(u.GetArtifact()), Append: u.GetAppend(), LastChunk: u.GetLastChunk(), Metadata: mapOf(u.GetMetadata())}}
	}
	return &PStreamResponse{}
}

// PSendResultFromV1 translates a SendMessageResponse to the proto shape.
func PSendResultFromV1(r *a2a.SendMessageResponse) *PStreamResponse {
	if m := r.GetMessage(); m != nil {
		return &PStreamResponse{Message: PMessageFromV1(m)}
	}
	return &PStreamResponse{Task: PTaskFromV1(r.GetTask())}
}
