package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestMarshalExact pins the exact bytes Marshal writes for each message
// shape. It is one long table on purpose: each case is a few lines of input
// and its expected JSON, easiest to review side by side.
func TestMarshalExact(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want string
	}{
		{
			name: "task with status timestamp",
			msg: &Task{Id: "task-1", ContextId: "ctx-1", Status: &TaskStatus{
				State: TaskState_TASK_STATE_COMPLETED, Timestamp: ts,
			}},
			want: `{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05.123Z"}}`,
		},
		{
			name: "timestamp whole seconds and far dates",
			msg:  &ListTasksRequest{StatusTimestampAfter: &timestamppb.Timestamp{Seconds: -62135596800}, PageSize: proto.Int32(0), IncludeArtifacts: proto.Bool(false)},
			want: `{"pageSize":0,"statusTimestampAfter":"0001-01-01T00:00:00.000Z","includeArtifacts":false}`,
		},
		{
			name: "task required fields only",
			msg:  &Task{},
			want: `{"id":""}`,
		},
		{
			name: "task status required state",
			msg:  &Task{Id: "t", Status: &TaskStatus{}},
			want: `{"id":"t","status":{"state":"TASK_STATE_UNSPECIFIED"}}`,
		},
		{
			name: "text part",
			msg:  &Part{Content: &Part_Text{Text: ""}, MediaType: "text/plain"},
			want: `{"text":"","mediaType":"text/plain"}`,
		},
		{
			name: "raw part",
			msg:  &Part{Content: &Part_Raw{Raw: []byte{0xfb, 0xff, 0xfe, 0x01}}, Filename: "x.bin"},
			want: `{"raw":"+//+AQ==","filename":"x.bin"}`,
		},
		{
			name: "raw part empty bytes",
			msg:  &Part{Content: &Part_Raw{}},
			want: `{"raw":""}`,
		},
		{
			name: "url part",
			msg:  &Part{Content: &Part_Url{Url: "https://x.example/a?b=1&c=<2>"}, MediaType: "image/png"},
			want: `{"url":"https://x.example/a?b=1&c=<2>","mediaType":"image/png"}`,
		},
		{
			name: "data part",
			msg: &Part{
				Content:  &Part_Data{Data: mustValue(map[string]any{"b": []any{1, 2.5, -0.000001, 1e21, 1e-7, "s", false, nil, map[string]any{}}, "a": map[string]any{"y": 1, "x": []any{}}})},
				Metadata: mustStruct(map[string]any{"schema": "s1"}),
			},
			want: `{"data":{"a":{"x":[],"y":1},"b":[1,2.5,-0.000001,1e+21,1e-7,"s",false,null,{}]},"metadata":{"schema":"s1"}}`,
		},
		{
			name: "data part scalar values",
			msg:  &Part{Content: &Part_Data{Data: structpb.NewNullValue()}},
			want: `{"data":null}`,
		},
		{
			name: "data part string value",
			msg:  &Part{Content: &Part_Data{Data: structpb.NewStringValue("x")}},
			want: `{"data":"x"}`,
		},
		{
			name: "empty part",
			msg:  &Part{},
			want: `{}`,
		},
		{
			name: "stream task",
			msg:  &StreamResponse{Payload: &StreamResponse_Task{Task: &Task{Id: "t-1", ContextId: "c-1", Status: &TaskStatus{State: TaskState_TASK_STATE_WORKING}}}},
			want: `{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}`,
		},
		{
			name: "stream message",
			msg:  &StreamResponse{Payload: &StreamResponse_Message{Message: &Message{MessageId: "m", ContextId: "c", Role: Role_ROLE_AGENT, Parts: []*Part{textPart("hi")}}}},
			want: `{"message":{"messageId":"m","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
		},
		{
			name: "stream status update",
			msg: &StreamResponse{Payload: &StreamResponse_StatusUpdate{StatusUpdate: &TaskStatusUpdateEvent{
				TaskId: "t-1", ContextId: "c-1", Status: &TaskStatus{State: TaskState_TASK_STATE_COMPLETED, Timestamp: &timestamppb.Timestamp{Seconds: 1767323045, Nanos: 999_999_999}},
			}}},
			want: `{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05.999Z"}}}`,
		},
		{
			name: "stream artifact update",
			msg: &StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{
				TaskId: "t-1", ContextId: "c-1", Artifact: &Artifact{ArtifactId: "a-1", Parts: []*Part{textPart("Part two.")}}, Append: true, LastChunk: true,
			}}},
			want: `{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}`,
		},
		{
			name: "stream artifact update defaults",
			msg:  &StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{}}},
			want: `{"artifactUpdate":{"taskId":"","contextId":""}}`,
		},
		{
			name: "send message response message",
			msg:  &SendMessageResponse{Payload: &SendMessageResponse_Message{Message: &Message{MessageId: "m", Role: Role_ROLE_AGENT, Parts: []*Part{textPart("ok")}}}},
			want: `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}`,
		},
		{
			name: "send message response empty",
			msg:  &SendMessageResponse{},
			want: `{}`,
		},
		{
			name: "list tasks response empty",
			msg:  &ListTasksResponse{},
			want: `{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}`,
		},
		{
			name: "list tasks response",
			msg:  &ListTasksResponse{Tasks: []*Task{{Id: "t", Status: &TaskStatus{State: TaskState_TASK_STATE_SUBMITTED}}}, NextPageToken: "n", PageSize: 50, TotalSize: 51},
			want: `{"tasks":[{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}],"nextPageToken":"n","pageSize":50,"totalSize":51}`,
		},
		{
			name: "agent card minimal",
			msg:  minimalCard(),
			want: `{"name":"Recipe Agent","description":"Agent that helps users with recipes and cooking.","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"version":"1.0.0","capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"recipes","name":"Recipe search","description":"Finds recipes.","tags":["cooking"]}]}`,
		},
		{
			name: "agent card empty",
			msg:  &AgentCard{Capabilities: &AgentCapabilities{}},
			want: `{"name":"","description":"","supportedInterfaces":[],"version":"","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
		},
		{
			name: "agent card full",
			msg:  fullCard(),
			want: `{"name":"Recipe Agent","description":"Agent that helps users with recipes and cooking.","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"provider":{"url":"https://example.com","organization":"Example"},"version":"1.0.0","documentationUrl":"","capabilities":{"streaming":true,"pushNotifications":false,"extensions":[{"uri":"https://ext.example/x","required":true,"params":{"n":1}}],"extendedAgentCard":true},` +
				`"securitySchemes":{"key":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}},"oauth":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"authorizationUrl":"https://id.example/auth","tokenUrl":"https://id.example/token","scopes":{"read":"Read","write":"Write"},"pkceRequired":true}}}},"oidc":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://id.example/.well-known/openid-configuration"}}},` +
				`"securityRequirements":[{"schemes":{"oidc":{"list":["openid","email"]}}}],"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"recipes","name":"Recipe search","description":"Finds recipes.","tags":["cooking"]}],"signatures":[{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"c2ln","header":{"kid":"k1"}}],"iconUrl":"https://agent.example.com/icon.png"}`,
		},
		{
			name: "deprecated oauth flow",
			msg:  &OAuthFlows{Flow: &OAuthFlows_Password{Password: &PasswordOAuthFlow{TokenUrl: "https://t"}}},
			want: `{"password":{"tokenUrl":"https://t"}}`,
		},
		{
			name: "device code flow required scopes",
			msg:  &OAuthFlows{Flow: &OAuthFlows_DeviceCode{DeviceCode: &DeviceCodeOAuthFlow{}}},
			want: `{"deviceCode":{"deviceAuthorizationUrl":"","tokenUrl":"","scopes":{}}}`,
		},
		{
			name: "send message request",
			msg:  sampleSendRequest(),
			want: `{"tenant":"acme","message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"What is the weather today?"},{"url":"https://files.example/a.png","mediaType":"image/png"}]},"configuration":{"acceptedOutputModes":["text/plain","application/json"],"taskPushNotificationConfig":{"url":"https://client.example/webhook","token":"tok","authentication":{"scheme":"Bearer","credentials":"secret"}},"historyLength":0,"returnImmediately":true}}`,
		},
		{
			name: "list push configs request field-number order",
			msg:  &ListTaskPushNotificationConfigsRequest{Tenant: "t0", TaskId: "t-1", PageSize: 5, PageToken: "p"},
			want: `{"taskId":"t-1","pageSize":5,"pageToken":"p","tenant":"t0"}`,
		},
		{
			name: "list push configs response empty",
			msg:  &ListTaskPushNotificationConfigsResponse{},
			want: `{}`,
		},
		{
			name: "list tasks request enum filter",
			msg:  &ListTasksRequest{Status: TaskState_TASK_STATE_AUTH_REQUIRED},
			want: `{"status":"TASK_STATE_AUTH_REQUIRED"}`,
		},
		{
			name: "unknown enum number",
			msg:  &Message{MessageId: "m", Role: Role(7), Parts: []*Part{textPart("x")}},
			want: `{"messageId":"m","role":7,"parts":[{"text":"x"}]}`,
		},
		{
			name: "get extended card request",
			msg:  &GetExtendedAgentCardRequest{},
			want: `{}`,
		},
		{
			name: "empty",
			msg:  &emptypb.Empty{},
			want: `{}`,
		},
		{
			name: "struct top level",
			msg:  mustStruct(map[string]any{"k": "v"}),
			want: `{"k":"v"}`,
		},
		{
			name: "nil typed message",
			msg:  (*ListTasksResponse)(nil),
			want: `{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}`,
		},
		{
			name: "string escaping",
			msg:  &AgentProvider{Url: "a\"b\\c\n\r\t\b\f\x00\x1f\x7f</script>\u2028é😀", Organization: "bad\xffutf8\xc3"},
			want: `{"url":"a\"b\\c\n\r\t\b\f\u0000\u001f` + "\x7f" + `</script>` + "\u2028é😀" + `","organization":"bad` + "\uFFFD" + `utf8` + "\uFFFD" + `"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal mismatch\n got: %s\nwant: %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
			// Deterministic across calls.
			again, _ := Marshal(tc.msg)
			if !bytes.Equal(got, again) {
				t.Errorf("output not deterministic:\n%s\n%s", got, again)
			}
		})
	}
}

func TestMarshalNilInterface(t *testing.T) {
	got, err := Marshal(nil)
	if err != nil || string(got) != "{}" {
		t.Fatalf("Marshal(nil) = %q, %v", got, err)
	}
}

func TestAppendJSON(t *testing.T) {
	dst := []byte("data: ")
	out, err := AppendJSON(dst, &SubscribeToTaskRequest{Id: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `data: {"id":"t-1"}`; string(out) != want {
		t.Fatalf("got %q want %q", out, want)
	}

	// On error the original length is kept.
	bad := &Part{Content: &Part_Data{Data: structpb.NewNumberValue(math.NaN())}}
	out, err = AppendJSON(dst, bad)
	if err == nil {
		t.Fatal("expected error")
	}
	if string(out) != "data: " {
		t.Fatalf("dst modified on error: %q", out)
	}
}

func TestMarshalErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"NaN value", &Part{Content: &Part_Data{Data: structpb.NewNumberValue(math.NaN())}}, "NaN"},
		{"Inf in struct", &Task{Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(math.Inf(-1))}}}, "infinite"},
		{"Value without kind", &Part{Content: &Part_Data{Data: &structpb.Value{}}}, "no kind"},
		{"nil Value in list", &Part{Content: &Part_Data{Data: structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{nil}})}}, "no kind"},
		{"timestamp out of range", &TaskStatus{Timestamp: &timestamppb.Timestamp{Seconds: 253402300800}}, "out of range"},
		{"negative nanos", &TaskStatus{Timestamp: &timestamppb.Timestamp{Nanos: -1}}, "out of range"},
		{"unsupported WKT", &descriptorpb.FileDescriptorProto{}, "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Marshal(tc.msg)
			if err == nil {
				t.Fatal("expected an error")
			}
			var ee *EncodeError
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not *EncodeError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestMarshalDeepValue(t *testing.T) {
	v := structpb.NewStringValue("leaf")
	for range maxEncodeDepth {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	if _, err := Marshal(&Part{Content: &Part_Data{Data: v}}); err == nil {
		t.Fatal("expected depth error")
	}
}
