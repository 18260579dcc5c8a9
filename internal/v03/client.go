package v03

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// The client direction: v1.0 requests to v0.3 (EncodeRequest,
// PEncode…) and v0.3 answers back to v1.0 (DecodeResult, DecodeEvent,
// P…ToV1). An answer v0.3 does not allow is an InvalidAgentResponse.

// errNoListTasks is the answer to ListTasks: v0.3 has no such operation.
func errNoListTasks() error {
	return a2a.NewError(a2a.CodeUnsupportedOperation, "the agent speaks A2A v0.3, which has no ListTasks")
}

// pushConfigToV03 translates a v1.0 push configuration for a v0.3 server.
func pushConfigToV03(c *a2a.TaskPushNotificationConfig) *PushConfig {
	if c == nil {
		return nil
	}
	out := &PushConfig{ID: c.GetId(), URL: c.GetUrl(), Token: c.GetToken()}
	if a := c.GetAuthentication(); a != nil {
		out.Authentication = &PushAuth{Schemes: []string{a.GetScheme()}, Credentials: a.GetCredentials()}
	}
	return out
}

// EncodeRequest translates a v1.0 request to the v0.3 JSON-RPC method and
// params. configuration.returnImmediately becomes blocking: false, and
// blocking: true otherwise.
func EncodeRequest(m *a2a.Method, req proto.Message) (string, any, error) {
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		p := SendParams{Message: MessageFromV1(r.GetMessage()), Metadata: mapOf(r.GetMetadata())}
		if c := r.GetConfiguration(); c != nil {
			blocking := !c.GetReturnImmediately()
			p.Configuration = &SendConfig{AcceptedOutputModes: c.GetAcceptedOutputModes(), Blocking: &blocking,
				HistoryLength: c.HistoryLength, PushNotificationConfig: pushConfigToV03(c.GetTaskPushNotificationConfig())}
		}
		if m.Name == a2a.MethodSendStreamingMessage {
			return MethodStream, p, nil
		}
		return MethodSend, p, nil
	case *a2a.GetTaskRequest:
		return MethodGet, TaskQueryParams{ID: r.GetId(), HistoryLength: r.HistoryLength}, nil
	case *a2a.CancelTaskRequest:
		return MethodCancel, TaskIDParams{ID: r.GetId(), Metadata: mapOf(r.GetMetadata())}, nil
	case *a2a.SubscribeToTaskRequest:
		return MethodResubscribe, TaskIDParams{ID: r.GetId()}, nil
	case *a2a.TaskPushNotificationConfig:
		return MethodPushSet, TaskPushConfig{TaskID: r.GetTaskId(), PushNotificationConfig: pushConfigToV03(r)}, nil
	case *a2a.GetTaskPushNotificationConfigRequest:
		return MethodPushGet, PushConfigParams{ID: r.GetTaskId(), PushNotificationConfigID: r.GetId()}, nil
	case *a2a.ListTaskPushNotificationConfigsRequest:
		return MethodPushList, TaskIDParams{ID: r.GetTaskId()}, nil
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		return MethodPushDelete, PushConfigParams{ID: r.GetTaskId(), PushNotificationConfigID: r.GetId()}, nil
	case *a2a.GetExtendedAgentCardRequest:
		return MethodExtendedCard, nil, nil
	case *a2a.ListTasksRequest:
		return "", nil, errNoListTasks()
	}
	return "", nil, a2a.NewError(a2a.CodeUnsupportedOperation, "%s has no A2A v0.3 counterpart", m.Name)
}

// badAnswer is the error for a v0.3 answer that does not decode.
func badAnswer(what string, err error) error {
	return a2a.NewError(a2a.CodeInvalidAgentResponse, "the v0.3 agent's %s is not valid: %v", what, err)
}

// DecodeResult translates a v0.3 JSON-RPC result to the v1.0 response of
// m.
func DecodeResult(m *a2a.Method, raw json.RawMessage) (proto.Message, error) {
	switch m.Name {
	case a2a.MethodSendMessage:
		ev, err := DecodeEvent(raw, false)
		if err != nil {
			return nil, err
		}
		switch p := ev.GetPayload().(type) {
		case *a2a.StreamResponse_Task:
			return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: p.Task}}, nil
		case *a2a.StreamResponse_Message:
			return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Message{Message: p.Message}}, nil
		}
		return nil, badAnswer("message/send result", fmt.Errorf("kind is neither task nor message"))
	case a2a.MethodGetTask, a2a.MethodCancelTask:
		var t Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, badAnswer("task", err)
		}
		out, err := TaskToV1Checked(&t)
		if err != nil {
			return nil, badAnswer("task", err)
		}
		return out, nil
	case a2a.MethodCreateTaskPushNotificationConfig, a2a.MethodGetTaskPushNotificationConfig:
		var c TaskPushConfig
		if err := json.Unmarshal(raw, &c); err != nil || c.PushNotificationConfig == nil {
			return nil, badAnswer("push notification config", err)
		}
		return pushConfigFromV03(&c), nil
	case a2a.MethodListTaskPushNotificationConfigs:
		var cs []TaskPushConfig
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, badAnswer("push notification config list", err)
		}
		out := &a2a.ListTaskPushNotificationConfigsResponse{}
		for i := range cs {
			if cs[i].PushNotificationConfig != nil {
				out.Configs = append(out.Configs, pushConfigFromV03(&cs[i]))
			}
		}
		return out, nil
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return &emptypb.Empty{}, nil
	case a2a.MethodGetExtendedAgentCard:
		card, err := CardToV1(raw)
		if err != nil {
			return nil, badAnswer("extended card", err)
		}
		return card, nil
	}
	return nil, a2a.NewError(a2a.CodeUnsupportedOperation, "%s has no A2A v0.3 counterpart", m.Name)
}

func pushConfigFromV03(c *TaskPushConfig) *a2a.TaskPushNotificationConfig {
	pc := c.PushNotificationConfig
	out := &a2a.TaskPushNotificationConfig{TaskId: c.TaskID, Id: pc.ID, Url: pc.URL, Token: pc.Token}
	if a := pc.Authentication; a != nil && len(a.Schemes) > 0 {
		out.Authentication = &a2a.AuthenticationInfo{Scheme: a.Schemes[0], Credentials: a.Credentials}
	}
	return out
}

// DecodeEvent translates one v0.3 stream result (a task, a message, a
// status-update or an artifact-update, by its kind) to a StreamResponse.
func DecodeEvent(raw json.RawMessage, _ bool) (*a2a.StreamResponse, error) {
	var k struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return nil, badAnswer("event", err)
	}
	var v violations
	var out *a2a.StreamResponse
	switch k.Kind {
	case KindTask:
		var t Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, badAnswer("task", err)
		}
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: TaskToV1(&t, "task", &v)}}
	case KindMessage:
		var m Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, badAnswer("message", err)
		}
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: MessageToV1(&m, "message", &v)}}
	case KindStatusUpdate:
		var u StatusUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, badAnswer("status-update", err)
		}
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Status: StatusToV1(&u.Status, "status", &v), Metadata: structOf(u.Metadata, "metadata", &v)}}}
	case KindArtifactUpdate:
		var u ArtifactUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, badAnswer("artifact-update", err)
		}
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Artifact: ArtifactToV1(&u.Artifact, "artifact", &v),
			Append: u.Append, LastChunk: u.LastChunk, Metadata: structOf(u.Metadata, "metadata", &v)}}}
	default:
		return nil, badAnswer("event", fmt.Errorf("unknown kind %q", k.Kind))
	}
	if err := v.Err(); err != nil {
		return nil, badAnswer(k.Kind, err)
	}
	return out, nil
}

// PTaskToV1 translates a task of the proto shape (from a v0.3 server).
func PTaskToV1(t *PTask) (*a2a.Task, error) {
	var v violations
	out := &a2a.Task{Id: t.ID, ContextId: t.ContextID, Status: pStatusToV1(t.Status, "status", &v), Metadata: structOf(t.Metadata, "metadata", &v)}
	for i := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, pArtifactToV1(&t.Artifacts[i], fmt.Sprintf("artifacts[%d]", i), &v))
	}
	for i := range t.History {
		out.History = append(out.History, PMessageToV1(&t.History[i], fmt.Sprintf("history[%d]", i), &v))
	}
	if err := v.Err(); err != nil {
		return nil, badAnswer("task", err)
	}
	return out, nil
}

func pStatusToV1(s *PStatus, field string, v *violations) *a2a.TaskStatus {
	if s == nil {
		v.add(field, "is required")
		return nil
	}
	st, ok := parseProtoState(s.State)
	if !ok {
		v.add(field+".state", "is not a v0.3 task state: %v", s.State)
	}
	out := &a2a.TaskStatus{State: st}
	m := s.Message
	if m == nil {
		m = s.Update
	}
	if m != nil {
		out.Message = PMessageToV1(m, field+".message", v)
	}
	if s.Timestamp != "" {
		if ts, err := time.Parse(time.RFC3339Nano, s.Timestamp); err == nil {
			out.Timestamp = timestamppb.New(ts)
		} else {
			v.add(field+".timestamp", "is not an RFC 3339 time")
		}
	}
	return out
}

func pArtifactToV1(a *PArtifact, field string, v *violations) *a2a.Artifact {
	out := &a2a.Artifact{ArtifactId: a.ArtifactID, Name: a.Name, Description: a.Description, Extensions: a.Extensions,
		Metadata: structOf(a.Metadata, field+".metadata", v)}
	for i := range a.Parts {
		out.Parts = append(out.Parts, PPartToV1(&a.Parts[i], fmt.Sprintf("%s.parts[%d]", field, i), v))
	}
	return out
}

// PEventToV1 translates a proto StreamResponse (or SendMessageResponse).
func PEventToV1(r *PStreamResponse) (*a2a.StreamResponse, error) {
	var v violations
	var out *a2a.StreamResponse
	msg := r.Message
	if msg == nil {
		msg = r.Msg
	}
	switch {
	case r.Task != nil:
		t, err := PTaskToV1(r.Task)
		if err != nil {
			return nil, err
		}
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: t}}
	case msg != nil:
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: PMessageToV1(msg, "message", &v)}}
	case r.StatusUpdate != nil:
		u := r.StatusUpdate
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Status: pStatusToV1(u.Status, "statusUpdate.status", &v), Metadata: structOf(u.Metadata, "metadata", &v)}}}
	case r.ArtifactUpdate != nil && r.ArtifactUpdate.Artifact != nil:
		u := r.ArtifactUpdate
		out = &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: u.TaskID, ContextId: u.ContextID, Artifact: pArtifactToV1(u.Artifact, "artifactUpdate.artifact", &v),
			Append: u.Append, LastChunk: u.LastChunk, Metadata: structOf(u.Metadata, "metadata", &v)}}}
	default:
		return nil, badAnswer("stream response", fmt.Errorf("no task, message, statusUpdate or artifactUpdate"))
	}
	if err := v.Err(); err != nil {
		return nil, badAnswer("stream response", err)
	}
	return out, nil
}

// PSendToV03 translates a v1.0 send request to the proto shape.
func PSendToV03(r *a2a.SendMessageRequest) *PSendRequest {
	out := &PSendRequest{Message: PMessageFromV1(r.GetMessage()), Metadata: mapOf(r.GetMetadata())}
	if c := r.GetConfiguration(); c != nil {
		blocking := !c.GetReturnImmediately()
		out.Configuration = &PSendConfig{AcceptedOutputModes: c.GetAcceptedOutputModes(), HistoryLength: c.HistoryLength,
			Blocking: &blocking, PushNotification: pushConfigToV03(c.GetTaskPushNotificationConfig())}
	}
	return out
}

// PCreatePushToV03 is the body of POST /v1/tasks/{id}/pushNotificationConfigs
// for a v0.3 server: the TaskPushNotificationConfig (name and config, as
// the v0.3 proto's body: "config" and the JS SDK 0.3 client send it) and,
// beside it, the CreateTaskPushNotificationConfigRequest members parent,
// configId and config that the JS SDK 0.3 server reads.
func PCreatePushToV03(c *a2a.TaskPushNotificationConfig) *PCreatePushRequest {
	tc := PTaskPushConfig{Name: ConfigName(c.GetTaskId(), c.GetId()), PushNotificationConfig: pushConfigToV03(c)}
	return &PCreatePushRequest{Parent: "tasks/" + c.GetTaskId(), ConfigID: c.GetId(), Config: &tc, PTaskPushConfig: tc}
}

// PPushConfigToV1 translates a proto push configuration from a v0.3
// server; taskID is the task asked about (the name carries it too).
func PPushConfigToV1(taskID string, c *PTaskPushConfig) (*a2a.TaskPushNotificationConfig, error) {
	if c.PushNotificationConfig == nil {
		return nil, badAnswer("push notification config", fmt.Errorf("no pushNotificationConfig"))
	}
	return pushConfigFromV03(&TaskPushConfig{TaskID: taskID, PushNotificationConfig: c.PushNotificationConfig}), nil
}
