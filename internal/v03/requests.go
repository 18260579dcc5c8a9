package v03

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Decode reads one v0.3 JSON value into out. A member of the wrong JSON
// type is an InvalidParams naming it; unknown members are ignored, as the
// v0.3 SDKs do. An empty raw decodes as {}.
func Decode(raw []byte, out any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return a2a.NewError(a2a.CodeInvalidParams, `"params" must be an object`)
	}
	err := json.Unmarshal(raw, out)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "params"
		}
		return a2a.InvalidParams(a2a.FieldViolation{Field: field, Description: "must be a JSON " + jsonKind(te.Type.String())})
	}
	return a2a.NewError(a2a.CodeInvalidParams, "params are not valid JSON: %v", err)
}

func jsonKind(goType string) string {
	switch {
	case goType == "string", strings.HasPrefix(goType, "*string"):
		return "string"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "number"
	case goType == "bool", goType == "*bool":
		return "boolean"
	}
	return "object"
}

// SendToV1 translates the params of message/send and message/stream.
// configuration.blocking absent or true waits for the task to settle;
// false returns at once (v1.0's returnImmediately).
func SendToV1(p *SendParams) (*a2a.SendMessageRequest, error) {
	var v violations
	out := &a2a.SendMessageRequest{Message: MessageToV1(p.Message, "message", &v), Metadata: structOf(p.Metadata, "metadata", &v)}
	if c := p.Configuration; c != nil {
		out.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength,
			ReturnImmediately: c.Blocking != nil && !*c.Blocking}
		if c.PushNotificationConfig != nil {
			out.Configuration.TaskPushNotificationConfig = PushConfigToV1(p.Message.GetTaskID(), c.PushNotificationConfig, "configuration.pushNotificationConfig", &v)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// PushConfigToV1 translates a v0.3 push configuration of a task. The URL
// is kept as given: the core stores the configuration with the version
// the call is served in, which decides the shape of its notifications.
// Lossy: v1.0 authentication names one scheme; of several v0.3 schemes
// the first is kept.
func PushConfigToV1(taskID string, c *PushConfig, field string, v *violations) *a2a.TaskPushNotificationConfig {
	if c.URL == "" {
		v.add(field+".url", "is required")
	}
	out := &a2a.TaskPushNotificationConfig{Id: c.ID, TaskId: taskID, Url: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		if len(a.Schemes) == 0 {
			v.add(field+".authentication.schemes", "is required and must not be empty")
		} else {
			out.Authentication = &a2a.AuthenticationInfo{Scheme: a.Schemes[0], Credentials: a.Credentials}
		}
	}
	return out
}

// PushConfigFromV1 translates a push configuration to v0.3.
func PushConfigFromV1(c *a2a.TaskPushNotificationConfig) *TaskPushConfig {
	pc := &PushConfig{ID: c.GetId(), URL: c.GetUrl(), Token: c.GetToken()}
	if a := c.GetAuthentication(); a != nil {
		pc.Authentication = &PushAuth{Schemes: []string{a.GetScheme()}, Credentials: a.GetCredentials()}
	}
	return &TaskPushConfig{TaskID: c.GetTaskId(), PushNotificationConfig: pc}
}

// Request decodes the params of a v0.3 JSON-RPC method into the v1.0
// operation and request the core serves. tasks/pushNotificationConfig/get
// without a pushNotificationConfigId is returned as a List request (the
// caller answers with the task's first configuration; see
// FirstPushConfig).
func Request(method string, params []byte) (*a2a.Method, proto.Message, error) {
	var v violations
	need := func(field, val string) {
		if val == "" {
			v.add(field, "is required")
		}
	}
	var name string
	var req proto.Message
	switch method {
	case MethodSend, MethodStream:
		var p SendParams
		if err := Decode(params, &p); err != nil {
			return nil, nil, err
		}
		r, err := SendToV1(&p)
		if err != nil {
			return nil, nil, err
		}
		name, req = a2a.MethodSendMessage, r
		if method == MethodStream {
			name = a2a.MethodSendStreamingMessage
		}
	case MethodGet:
		var p TaskQueryParams
		if err := Decode(params, &p); err != nil {
			return nil, nil, err
		}
		need("id", p.ID)
		name, req = a2a.MethodGetTask, &a2a.GetTaskRequest{Id: p.ID, HistoryLength: p.HistoryLength}
	case MethodCancel, MethodResubscribe, MethodPushList:
		var p TaskIDParams
		if err := Decode(params, &p); err != nil {
			return nil, nil, err
		}
		need("id", p.ID)
		switch method {
		case MethodCancel:
			name, req = a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: p.ID, Metadata: structOf(p.Metadata, "metadata", &v)}
		case MethodResubscribe:
			name, req = a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: p.ID}
		default:
			name, req = a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: p.ID}
		}
	case MethodPushSet:
		var p TaskPushConfig
		if err := Decode(params, &p); err != nil {
			return nil, nil, err
		}
		need("taskId", p.TaskID)
		if p.PushNotificationConfig == nil {
			v.add("pushNotificationConfig", "is required")
			break
		}
		name, req = a2a.MethodCreateTaskPushNotificationConfig, PushConfigToV1(p.TaskID, p.PushNotificationConfig, "pushNotificationConfig", &v)
	case MethodPushGet, MethodPushDelete:
		var p PushConfigParams
		if err := Decode(params, &p); err != nil {
			return nil, nil, err
		}
		need("id", p.ID)
		switch {
		case method == MethodPushDelete:
			need("pushNotificationConfigId", p.PushNotificationConfigID)
			name, req = a2a.MethodDeleteTaskPushNotificationConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: p.ID, Id: p.PushNotificationConfigID}
		case p.PushNotificationConfigID == "":
			name, req = a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: p.ID}
		default:
			name, req = a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: p.ID, Id: p.PushNotificationConfigID}
		}
	case MethodExtendedCard:
		name, req = a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}
	default:
		return nil, nil, a2a.NewError(a2a.CodeMethodNotFound, "method %q not found", method)
	}
	if err := v.Err(); err != nil {
		return nil, nil, err
	}
	return a2a.MethodByName(name), req, nil
}

// FirstPushConfig answers tasks/pushNotificationConfig/get without a
// configuration id: v0.3 allowed one configuration per task there, so the
// one whose id is the task id (the v0.3 SDKs' default id) or else the
// first is returned; none is TaskNotFoundError.
func FirstPushConfig(taskID string, list *a2a.ListTaskPushNotificationConfigsResponse) (*a2a.TaskPushNotificationConfig, error) {
	cfgs := list.GetConfigs()
	for _, c := range cfgs {
		if c.GetId() == taskID {
			return c, nil
		}
	}
	if len(cfgs) == 0 {
		return nil, a2a.NewError(a2a.CodeTaskNotFound, "task %q has no push notification configuration", taskID)
	}
	return cfgs[0], nil
}

// ResultFromV1 translates a unary operation's v1.0 response to the v0.3
// JSON-RPC result of method.
func ResultFromV1(method string, resp proto.Message) any {
	switch r := resp.(type) {
	case *a2a.SendMessageResponse:
		return SendResultFromV1(r)
	case *a2a.Task:
		return TaskFromV1(r)
	case *a2a.TaskPushNotificationConfig:
		return PushConfigFromV1(r)
	case *a2a.ListTaskPushNotificationConfigsResponse:
		out := make([]*TaskPushConfig, 0, len(r.GetConfigs()))
		for _, c := range r.GetConfigs() {
			out = append(out, PushConfigFromV1(c))
		}
		return out
	case *a2a.AgentCard:
		return json.RawMessage(CardJSON(r))
	}
	return nil // DeleteTaskPushNotificationConfig: result null
}
