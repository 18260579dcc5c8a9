package a2a

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ---------------------------------------------------------------------------
// fixtures

var ts = timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.UTC))

func textPart(s string) *Part { return &Part{Content: &Part_Text{Text: s}} }

func mustValue(v any) *structpb.Value {
	out, err := structpb.NewValue(v)
	if err != nil {
		panic(err)
	}
	return out
}

func mustStruct(v map[string]any) *structpb.Struct {
	out, err := structpb.NewStruct(v)
	if err != nil {
		panic(err)
	}
	return out
}

func sampleTask() *Task {
	return &Task{
		Id:        "task-1",
		ContextId: "ctx-1",
		Status: &TaskStatus{
			State:     TaskState_TASK_STATE_INPUT_REQUIRED,
			Timestamp: ts,
			Message: &Message{
				MessageId: "m-2",
				ContextId: "ctx-1",
				TaskId:    "task-1",
				Role:      Role_ROLE_AGENT,
				Parts:     []*Part{textPart("Which city?")},
			},
		},
		Artifacts: []*Artifact{{
			ArtifactId: "a-1",
			Name:       "forecast",
			Parts: []*Part{
				textPart("Sunny, 24°C"),
				{Content: &Part_Data{Data: mustValue(map[string]any{"temp": 24.5, "unit": "C", "tags": []any{"a", true, nil}})}, MediaType: "application/json"},
			},
			Metadata: mustStruct(map[string]any{"source": "model-x", "confidence": 0.9}),
		}},
		History: []*Message{{
			MessageId:        "m-1",
			Role:             Role_ROLE_USER,
			Parts:            []*Part{textPart("What is the weather?"), {Content: &Part_Raw{Raw: []byte{0xff, 0x00, 0x10, 'a'}}, Filename: "blob.bin", MediaType: "application/octet-stream"}},
			Extensions:       []string{"https://ext.example/x"},
			ReferenceTaskIds: []string{"task-0"},
		}},
		Metadata: mustStruct(map[string]any{"z": 1, "a": "first"}),
	}
}

func sampleSendRequest() *SendMessageRequest {
	return &SendMessageRequest{
		Tenant: "acme",
		Message: &Message{
			MessageId: "m-1",
			Role:      Role_ROLE_USER,
			Parts:     []*Part{textPart("What is the weather today?"), {Content: &Part_Url{Url: "https://files.example/a.png"}, MediaType: "image/png"}},
		},
		Configuration: &SendMessageConfiguration{
			AcceptedOutputModes: []string{"text/plain", "application/json"},
			HistoryLength:       proto.Int32(0),
			ReturnImmediately:   true,
			TaskPushNotificationConfig: &TaskPushNotificationConfig{
				Url:            "https://client.example/webhook",
				Token:          "tok",
				Authentication: &AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
			},
		},
	}
}

func minimalCard() *AgentCard {
	return &AgentCard{
		Name:        "Recipe Agent",
		Description: "Agent that helps users with recipes and cooking.",
		SupportedInterfaces: []*AgentInterface{
			{Url: "https://agent.example.com/a2a", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		},
		Version:            "1.0.0",
		Capabilities:       &AgentCapabilities{Streaming: proto.Bool(true), PushNotifications: proto.Bool(false)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []*AgentSkill{
			{Id: "recipes", Name: "Recipe search", Description: "Finds recipes.", Tags: []string{"cooking"}},
		},
	}
}

func fullCard() *AgentCard {
	c := minimalCard()
	c.Provider = &AgentProvider{Url: "https://example.com", Organization: "Example"}
	c.DocumentationUrl = proto.String("")
	c.SecuritySchemes = map[string]*SecurityScheme{
		"oidc": {Scheme: &SecurityScheme_OpenIdConnectSecurityScheme{OpenIdConnectSecurityScheme: &OpenIdConnectSecurityScheme{OpenIdConnectUrl: "https://id.example/.well-known/openid-configuration"}}},
		"key":  {Scheme: &SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &APIKeySecurityScheme{Location: "header", Name: "X-Key"}}},
		"oauth": {Scheme: &SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &OAuth2SecurityScheme{
			Flows: &OAuthFlows{Flow: &OAuthFlows_AuthorizationCode{AuthorizationCode: &AuthorizationCodeOAuthFlow{
				AuthorizationUrl: "https://id.example/auth", TokenUrl: "https://id.example/token",
				Scopes: map[string]string{"write": "Write", "read": "Read"}, PkceRequired: true,
			}}},
		}}},
	}
	c.SecurityRequirements = []*SecurityRequirement{{Schemes: map[string]*StringList{"oidc": {List: []string{"openid", "email"}}}}}
	c.Signatures = []*AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln", Header: mustStruct(map[string]any{"kid": "k1"})}}
	c.IconUrl = proto.String("https://agent.example.com/icon.png")
	c.Capabilities.Extensions = []*AgentExtension{{Uri: "https://ext.example/x", Required: true, Params: mustStruct(map[string]any{"n": 1})}}
	c.Capabilities.ExtendedAgentCard = proto.Bool(true)
	return c
}

// ---------------------------------------------------------------------------
// exact output

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

// TestMarshalScalarKinds covers the field kinds A2A does not use (64-bit
// integers, floats, non-string map keys, repeated enums) through a dynamic
// message, which also exercises the non-generated Struct path.
func TestMarshalScalarKinds(t *testing.T) {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("parley_test/kinds.proto"),
		Package:    proto.String("parley.test"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/struct.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Kinds"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("i64", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
				field("u64", 2, descriptorpb.FieldDescriptorProto_TYPE_UINT64, ""),
				field("s32", 3, descriptorpb.FieldDescriptorProto_TYPE_SINT32, ""),
				field("f32", 4, descriptorpb.FieldDescriptorProto_TYPE_FIXED32, ""),
				field("flt", 5, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, ""),
				field("dbl", 6, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
				field("nan", 7, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
				field("by_num", 8, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".parley.test.Kinds.ByNumEntry"),
				field("by_flag", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".parley.test.Kinds.ByFlagEntry"),
				field("states", 10, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".parley.test.Color"),
				field("meta", 11, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Struct"),
			},
			NestedType: []*descriptorpb.DescriptorProto{
				mapEntry("ByNumEntry", descriptorpb.FieldDescriptorProto_TYPE_INT32),
				mapEntry("ByFlagEntry", descriptorpb.FieldDescriptorProto_TYPE_BOOL),
			},
		}},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Color"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("COLOR_RED"), Number: proto.Int32(1)},
			},
		}},
	}
	for _, f := range fdp.MessageType[0].Field {
		if f.GetName() == "by_num" || f.GetName() == "by_flag" || f.GetName() == "states" {
			f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		}
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().ByName("Kinds")
	m := dynamicpb.NewMessage(md)
	set := func(name string, v protoreflect.Value) { m.Set(md.Fields().ByName(protoreflect.Name(name)), v) }
	set("i64", protoreflect.ValueOfInt64(math.MinInt64))
	set("u64", protoreflect.ValueOfUint64(math.MaxUint64))
	set("s32", protoreflect.ValueOfInt32(-7))
	set("f32", protoreflect.ValueOfUint32(math.MaxUint32))
	set("flt", protoreflect.ValueOfFloat32(0.1))
	set("dbl", protoreflect.ValueOfFloat64(-2.5e-9))
	set("nan", protoreflect.ValueOfFloat64(math.Inf(1)))
	byNum := m.Mutable(md.Fields().ByName("by_num")).Map()
	for _, k := range []int32{10, -3, 2} {
		byNum.Set(protoreflect.ValueOfInt32(k).MapKey(), protoreflect.ValueOfString("v"))
	}
	byFlag := m.Mutable(md.Fields().ByName("by_flag")).Map()
	byFlag.Set(protoreflect.ValueOfBool(true).MapKey(), protoreflect.ValueOfString("t"))
	byFlag.Set(protoreflect.ValueOfBool(false).MapKey(), protoreflect.ValueOfString("f"))
	states := m.Mutable(md.Fields().ByName("states")).List()
	states.Append(protoreflect.ValueOfEnum(1))
	states.Append(protoreflect.ValueOfEnum(9))
	meta := m.Mutable(md.Fields().ByName("meta")).Message()
	metaFields := meta.Mutable(meta.Descriptor().Fields().ByName("fields")).Map()
	val := metaFields.NewValue()
	vm := val.Message()
	vm.Set(vm.Descriptor().Fields().ByName("bool_value"), protoreflect.ValueOfBool(true))
	metaFields.Set(protoreflect.ValueOfString("ok").MapKey(), val)

	got, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"i64":"-9223372036854775808","u64":"18446744073709551615","s32":-7,"f32":4294967295,"flt":0.1,"dbl":-2.5e-9,"nan":"Infinity","byNum":{"-3":"v","2":"v","10":"v"},"byFlag":{"false":"f","true":"t"},"states":["COLOR_RED",9],"meta":{"ok":true}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// protojson must read our output back to the same message.
	back := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(got, back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m, back) {
		t.Fatalf("round trip mismatch: %v", back)
	}
}

func field(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{
		Name:     proto.String(name),
		Number:   proto.Int32(num),
		Type:     typ.Enum(),
		Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		JsonName: proto.String(jsonCamel(name)),
	}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

func jsonCamel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = []rune(strings.ToUpper(string(r)))[0]
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mapEntry(name string, key descriptorpb.FieldDescriptorProto_Type) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{
		Name: proto.String(name),
		Field: []*descriptorpb.FieldDescriptorProto{
			field("key", 1, key, ""),
			field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
		},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
}

// ---------------------------------------------------------------------------
// round trips

func TestRoundTrip(t *testing.T) {
	msgs := []proto.Message{
		sampleTask(),
		sampleSendRequest(),
		minimalCard(),
		fullCard(),
		&ListTasksResponse{},
		&ListTasksResponse{Tasks: []*Task{sampleTask()}, NextPageToken: "x", PageSize: 1, TotalSize: 2},
		&ListTasksRequest{ContextId: "c", Status: TaskState_TASK_STATE_REJECTED, PageSize: proto.Int32(100), HistoryLength: proto.Int32(0), StatusTimestampAfter: timestamppb.New(time.Date(2025, 4, 17, 17, 47, 9, 680_000_000, time.UTC)), IncludeArtifacts: proto.Bool(false)},
		&StreamResponse{Payload: &StreamResponse_StatusUpdate{StatusUpdate: &TaskStatusUpdateEvent{TaskId: "t", ContextId: "c", Status: &TaskStatus{State: TaskState_TASK_STATE_CANCELED}, Metadata: &structpb.Struct{}}}},
		&StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskId: "t", ContextId: "c", Artifact: &Artifact{ArtifactId: "a", Parts: []*Part{{Content: &Part_Raw{Raw: []byte("\x00\x01binary")}}}}, Append: true}}},
		&SendMessageResponse{Payload: &SendMessageResponse_Task{Task: sampleTask()}},
		&OAuthFlows{Flow: &OAuthFlows_Implicit{Implicit: &ImplicitOAuthFlow{AuthorizationUrl: "https://a", Scopes: map[string]string{}}}},
		&SecurityScheme{Scheme: &SecurityScheme_MtlsSecurityScheme{MtlsSecurityScheme: &MutualTlsSecurityScheme{}}},
		&ListTaskPushNotificationConfigsResponse{Configs: []*TaskPushNotificationConfig{{Id: "p", TaskId: "t", Url: "https://w"}}, NextPageToken: "n"},
		&emptypb.Empty{},
	}
	for _, m := range msgs {
		t.Run(string(m.ProtoReflect().Descriptor().Name()), func(t *testing.T) {
			b, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			back := m.ProtoReflect().New().Interface()
			if err := Unmarshal(b, back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			want := proto.Clone(m)
			truncateTimestamps(want.ProtoReflect())
			if !proto.Equal(want, back) {
				t.Fatalf("round trip mismatch\n json: %s\n got: %v\nwant: %v", b, back, want)
			}
			// Our output must also be readable by stock protojson.
			stock := m.ProtoReflect().New().Interface()
			if err := protojson.Unmarshal(b, stock); err != nil {
				t.Fatalf("protojson cannot read %s: %v", b, err)
			}
			if !proto.Equal(want, stock) {
				t.Fatalf("protojson reads a different message")
			}
		})
	}
}

// TestMatchesProtojson compares our output with protojson's (with
// EmitUnpopulated for the REQUIRED cases excluded) as JSON values, ignoring
// the timestamp precision and number formatting differences.
func TestMatchesProtojson(t *testing.T) {
	msgs := []proto.Message{sampleTask(), sampleSendRequest(), fullCard()}
	for _, m := range msgs {
		ours, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(ours, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(theirs, &b); err != nil {
			t.Fatal(err)
		}
		normalizeTimes(a)
		normalizeTimes(b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s differs from protojson\n ours: %s\nstock: %s", m.ProtoReflect().Descriptor().Name(), ja, jb)
		}
	}
}

// normalizeTimes cuts RFC 3339 strings to millisecond precision.
func normalizeTimes(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
					x[k] = tm.UTC().Format("2006-01-02T15:04:05.000Z")
				}
				continue
			}
			normalizeTimes(e)
		}
	case []any:
		for _, e := range x {
			normalizeTimes(e)
		}
	}
}

// truncateTimestamps cuts every Timestamp in m to millisecond precision, the
// precision Marshal writes.
func truncateTimestamps(m protoreflect.Message) {
	if m.Descriptor().FullName() == "google.protobuf.Timestamp" {
		nf := m.Descriptor().Fields().ByNumber(2)
		n := m.Get(nf).Int()
		if n%1_000_000 != 0 {
			m.Set(nf, protoreflect.ValueOfInt32(int32(n-n%1_000_000)))
		}
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				truncateTimestamps(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				truncateTimestamps(mv.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			truncateTimestamps(v.Message())
		}
		return true
	})
}

// ---------------------------------------------------------------------------
// decoding

func TestUnmarshalSnakeCase(t *testing.T) {
	in := `{"tenant":"t0","message":{"message_id":"m-1","context_id":"c-1","task_id":"t-1","role":"ROLE_USER",
	  "parts":[{"text":"hi","media_type":"text/plain"},{"raw":"AAEC","filename":"f.bin"}],"reference_task_ids":["t-0"]},
	  "configuration":{"accepted_output_modes":["text/plain"],"history_length":3,"return_immediately":true,
	  "task_push_notification_config":{"url":"https://w","authentication":{"scheme":"Bearer"}}}}`
	var got SendMessageRequest
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := &SendMessageRequest{
		Tenant: "t0",
		Message: &Message{
			MessageId: "m-1", ContextId: "c-1", TaskId: "t-1", Role: Role_ROLE_USER,
			Parts:            []*Part{{Content: &Part_Text{Text: "hi"}, MediaType: "text/plain"}, {Content: &Part_Raw{Raw: []byte{0, 1, 2}}, Filename: "f.bin"}},
			ReferenceTaskIds: []string{"t-0"},
		},
		Configuration: &SendMessageConfiguration{
			AcceptedOutputModes: []string{"text/plain"}, HistoryLength: proto.Int32(3), ReturnImmediately: true,
			TaskPushNotificationConfig: &TaskPushNotificationConfig{Url: "https://w", Authentication: &AuthenticationInfo{Scheme: "Bearer"}},
		},
	}
	if !proto.Equal(&got, want) {
		t.Fatalf("got %v\nwant %v", &got, want)
	}
}

func TestUnmarshalIgnoresUnknown(t *testing.T) {
	in := `{"jsonrpc":"2.0","message":{"kind":"message","messageId":"m","role":"ROLE_USER","futureField":{"a":[1,{"b":null}]},
	  "parts":[{"kind":"text","text":"x","extra":"\u0041\"}"}],"[some.ext]":1},"configuration":{"blocking":true},"x":[]}`
	var got SendMessageRequest
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := &SendMessageRequest{
		Message:       &Message{MessageId: "m", Role: Role_ROLE_USER, Parts: []*Part{textPart("x")}},
		Configuration: &SendMessageConfiguration{},
	}
	if !proto.Equal(&got, want) {
		t.Fatalf("got %v\nwant %v", &got, want)
	}
}

func TestUnmarshalEnumForms(t *testing.T) {
	for _, in := range []string{
		`{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}`,
		`{"id":"t","status":{"state":3}}`,
		`{"id":"t","status":{"state":"TASK_STATE_\u0043OMPLETED"}}`,
	} {
		var got Task
		if err := Unmarshal([]byte(in), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got.GetStatus().GetState() != TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("%s: state %v", in, got.GetStatus().GetState())
		}
	}
}

func TestUnmarshalRejectsLegacyEnums(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		in   string
		path string
	}{
		{"task state", &Task{}, `{"id":"t","status":{"state":"completed"}}`, "status.state"},
		{"input-required", &Task{}, `{"id":"t","status":{"state":"input-required"}}`, "status.state"},
		{"lower case", &Task{}, `{"id":"t","status":{"state":"task_state_completed"}}`, "status.state"},
		{"role user", &SendMessageRequest{}, `{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]}}`, "message.role"},
		{"role agent in stream", &StreamResponse{}, `{"message":{"messageId":"m","role":"agent","parts":[]}}`, "message.role"},
		{"history entry", &StreamResponse{}, `{"task":{"id":"t","history":[{"messageId":"a","role":"ROLE_USER"},{"messageId":"b","role":"agent"}]}}`, "task.history[1].role"},
		{"status update", &StreamResponse{}, `{"status_update":{"taskId":"t","contextId":"c","status":{"state":"working"}}}`, "statusUpdate.status.state"},
		{"list filter", &ListTasksRequest{}, `{"status":"TASK_STATE_DONE"}`, "status"},
		{"escaped key", &Task{}, `{"id":"t","st\u0061tus":{"state":"canceled"}}`, "status.state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Unmarshal([]byte(tc.in), tc.msg)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want *DecodeError", err)
			}
			if de.Syntax {
				t.Errorf("Syntax = true for well-formed JSON")
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %q", err, tc.path)
			}
			if !strings.HasPrefix(err.Error(), "invalid JSON for lf.a2a.v1.") {
				t.Errorf("unexpected error text %q", err)
			}
			if b, _ := proto.Marshal(tc.msg); len(b) != 0 {
				t.Errorf("message not reset after error")
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		syntax bool
		want   string
	}{
		{"empty", "", true, "empty input"},
		{"truncated", `{"message":`, true, "EOF"},
		{"not an object", `[]`, false, "unexpected token"},
		{"wrong type", `{"message":{"messageId":1}}`, false, "messageId"},
		{"two part members", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"b"}]}}`, false, "oneof"},
		{"duplicate member", `{"tenant":"a","tenant":"b"}`, false, "duplicate"},
		{"bad base64", `{"message":{"parts":[{"raw":"!!"}]}}`, false, "raw"},
		{"invalid utf8", "{\"tenant\":\"\xff\"}", false, "UTF-8"},
		{"long value", `{"tenant":` + strings.Repeat("9", 1000) + `}`, false, "tenant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m SendMessageRequest
			err := Unmarshal([]byte(tc.in), &m)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want *DecodeError", err)
			}
			msg := err.Error()
			if de.Syntax != tc.syntax {
				t.Errorf("Syntax = %v, want %v (%s)", de.Syntax, tc.syntax, msg)
			}
			if !strings.HasPrefix(msg, "invalid JSON for lf.a2a.v1.SendMessageRequest: ") {
				t.Errorf("unexpected prefix: %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "proto:") || strings.Contains(msg, "\u00a0") {
				t.Errorf("error leaks library prefix: %q", msg)
			}
			if len(de.Detail) > maxDetail+3 {
				t.Errorf("detail too long (%d bytes)", len(de.Detail))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// REQUIRED fields

func TestCheckRequired(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want []FieldViolation
	}{
		{"valid request", sampleSendRequest(), nil},
		{"valid card", fullCard(), nil},
		{"valid task", sampleTask(), nil},
		{"empty list response", &ListTasksResponse{}, nil},
		{"nil", (*SendMessageRequest)(nil), []FieldViolation{{"message", descMissing}}},
		{"missing message", &SendMessageRequest{}, []FieldViolation{{"message", descMissing}}},
		{
			name: "message fields",
			msg:  &SendMessageRequest{Message: &Message{Parts: []*Part{{}, textPart("x"), {MediaType: "text/plain"}}}},
			want: []FieldViolation{
				{"message.messageId", descMissing},
				{"message.role", descMissing},
				{"message.parts[0]", descPartEmpty},
				{"message.parts[2]", descPartEmpty},
			},
		},
		{
			name: "empty parts",
			msg:  &SendMessageRequest{Message: &Message{MessageId: "m", Role: Role_ROLE_USER}},
			want: []FieldViolation{{"message.parts", descEmptyList}},
		},
		{
			name: "empty text is content",
			msg:  &Message{MessageId: "m", Role: Role_ROLE_USER, Parts: []*Part{{Content: &Part_Text{}}}},
			want: nil,
		},
		{"root part", &Part{}, []FieldViolation{{"", descPartEmpty}}},
		{
			name: "stream artifact update",
			msg: &StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{
				TaskId: "t", Artifact: &Artifact{Parts: []*Part{{}}},
			}}},
			want: []FieldViolation{
				{"artifactUpdate.contextId", descMissing},
				{"artifactUpdate.artifact.artifactId", descMissing},
				{"artifactUpdate.artifact.parts[0]", descPartEmpty},
			},
		},
		{
			name: "task status and history",
			msg: &Task{Id: "t", Status: &TaskStatus{Message: &Message{MessageId: "m", Role: Role_ROLE_AGENT}},
				History: []*Message{{MessageId: "h", Parts: []*Part{textPart("x")}}}},
			want: []FieldViolation{
				{"status.state", descMissing},
				{"status.message.parts", descEmptyList},
				{"history[0].role", descMissing},
			},
		},
		{
			name: "agent card",
			msg: &AgentCard{
				Name:                "n",
				SupportedInterfaces: []*AgentInterface{{Url: "https://x"}},
				Provider:            &AgentProvider{},
				Capabilities:        &AgentCapabilities{},
				SecuritySchemes: map[string]*SecurityScheme{
					"z": {Scheme: &SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &HTTPAuthSecurityScheme{}}},
					"a": {Scheme: &SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &OAuth2SecurityScheme{
						Flows: &OAuthFlows{Flow: &OAuthFlows_ClientCredentials{ClientCredentials: &ClientCredentialsOAuthFlow{TokenUrl: "https://t"}}},
					}}},
					"m": {Scheme: &SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &OAuth2SecurityScheme{}}},
				},
				DefaultInputModes:  []string{"text/plain"},
				DefaultOutputModes: []string{"text/plain"},
				Skills:             []*AgentSkill{{Id: "s", Name: "s", Description: "d"}},
				Signatures:         []*AgentCardSignature{{}},
			},
			want: []FieldViolation{
				{"description", descMissing},
				{"supportedInterfaces[0].protocolBinding", descMissing},
				{"supportedInterfaces[0].protocolVersion", descMissing},
				{"provider.url", descMissing},
				{"provider.organization", descMissing},
				{"version", descMissing},
				{`securitySchemes["a"].oauth2SecurityScheme.flows.clientCredentials.scopes`, descEmptyList},
				{`securitySchemes["m"].oauth2SecurityScheme.flows`, descMissing},
				{`securitySchemes["z"].httpAuthSecurityScheme.scheme`, descMissing},
				{"skills[0].tags", descEmptyList},
				{"signatures[0].protected", descMissing},
				{"signatures[0].signature", descMissing},
			},
		},
		{
			name: "card without skills",
			msg:  &AgentCard{Name: "n", Description: "d", Version: "1", SupportedInterfaces: minimalCard().SupportedInterfaces, Capabilities: &AgentCapabilities{}, DefaultInputModes: []string{"a"}, DefaultOutputModes: []string{"a"}},
			want: []FieldViolation{{"skills", descEmptyList}},
		},
		{"get task", &GetTaskRequest{HistoryLength: proto.Int32(1)}, []FieldViolation{{"id", descMissing}}},
		{"push config", &TaskPushNotificationConfig{Authentication: &AuthenticationInfo{}}, []FieldViolation{{"url", descMissing}, {"authentication.scheme", descMissing}}},
		{"list push configs", &ListTaskPushNotificationConfigsRequest{Tenant: "t"}, []FieldViolation{{"taskId", descMissing}}},
		{"delete push config", &DeleteTaskPushNotificationConfigRequest{TaskId: "t"}, []FieldViolation{{"id", descMissing}}},
		{"struct metadata skipped", &CancelTaskRequest{Id: "x", Metadata: mustStruct(map[string]any{"a": map[string]any{}})}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckRequired(tc.msg)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("CheckRequired:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if got := CheckRequired(nil); got != nil {
		t.Fatalf("CheckRequired(nil) = %v", got)
	}
}

func TestIsRequired(t *testing.T) {
	md := (&ListTasksResponse{}).ProtoReflect().Descriptor()
	if !IsRequired(md.Fields().ByName("next_page_token")) {
		t.Error("ListTasksResponse.next_page_token should be required")
	}
	if IsRequired((&Task{}).ProtoReflect().Descriptor().Fields().ByName("context_id")) {
		t.Error("Task.context_id should not be required")
	}
	if IsRequired(nil) {
		t.Error("IsRequired(nil)")
	}
}

// TestRequiredTableMatchesProto checks requiredFields against the
// "// REQUIRED" markers in proto/a2a.proto, and that every entry names a real
// field.
func TestRequiredTableMatchesProto(t *testing.T) {
	f, err := os.Open("../proto/a2a.proto")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgRe := regexp.MustCompile(`^message (\w+) \{`)
	fieldRe := regexp.MustCompile(`^\s+(?:optional |repeated )?(?:map<[^>]+>|[\w.]+) (\w+) = \d+[^;]*;(.*)$`)
	marked := map[protoreflect.FullName]bool{}
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := msgRe.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		if line == "}" {
			cur = ""
			continue
		}
		if m := fieldRe.FindStringSubmatch(line); m != nil && cur != "" && strings.Contains(m[2], "REQUIRED") {
			marked[protoreflect.FullName("lf.a2a.v1."+cur+"."+m[1])] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range marked {
		if !requiredFields[name] {
			t.Errorf("%s is marked REQUIRED in the proto but missing from requiredFields", name)
		}
	}
	for name := range requiredFields {
		if !marked[name] {
			t.Errorf("%s is in requiredFields but not marked REQUIRED in the proto", name)
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, ok := d.(protoreflect.FieldDescriptor); !ok {
			t.Errorf("%s is not a field", name)
		}
	}
	if len(marked) != 61 {
		t.Errorf("found %d REQUIRED markers, want 61", len(marked))
	}
}

// ---------------------------------------------------------------------------
// fuzzing

var fuzzSeeds = []string{
	`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"What is the weather today?"}]}}`,
	`{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"Run the report"}]},"configuration":{"returnImmediately":true,"historyLength":0}}`,
	`{"message":{"messageId":"m-3","taskId":"t-1","contextId":"c-1","role":"ROLE_USER","parts":[{"text":"From San Francisco to New York"}]}}`,
	`{"message":{"messageId":"m-4","role":"ROLE_USER","parts":[{"text":"Generate the Q1 sales report"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://client.example.com/webhook/a2a","authentication":{"scheme":"Bearer","credentials":"x"}}}}`,
	`{"message":{"message_id":"m","role":2,"parts":[{"raw":"iVBORw0KGgo=","filename":"d.png","media_type":"image/png"},{"url":"https://x/y"},{"data":{"a":[1,2.5e3,null,true,"s",{}]}}],"metadata":{"k":{"n":-0}}},"tenant":"t"}`,
	`{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-04-17T17:47:09.680794Z"}}}`,
	`{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}`,
	`{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2023-10-27T10:00:00+02:00"}}}`,
	`{"message":{"messageId":"m","role":"agent","parts":[]}}`,
	`{"kind":"message","unknown":[{"deep":[[[]]]}],"message":null}`,
	`{"message":{"messageId":"\u00e9\ud83d\ude00\"\\","role":"ROLE_USER","parts":[{"text":"\u0000\u001f"}]}}`,
}

func fuzzCheck(t *testing.T, data []byte, m proto.Message) {
	err := Unmarshal(data, m)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error %T is not *DecodeError", err)
		}
		if strings.Contains(err.Error(), "proto:") {
			t.Fatalf("error leaks library prefix: %q", err)
		}
		return
	}
	_ = CheckRequired(m)
	out, err := Marshal(m)
	if err != nil {
		t.Fatalf("Marshal after successful Unmarshal: %v\ninput: %q", err, data)
	}
	if !json.Valid(out) {
		t.Fatalf("Marshal produced invalid JSON: %q", out)
	}
	back := m.ProtoReflect().New().Interface()
	if err := Unmarshal(out, back); err != nil {
		t.Fatalf("re-decode of %q: %v", out, err)
	}
	want := proto.Clone(m)
	truncateTimestamps(want.ProtoReflect())
	if !proto.Equal(want, back) {
		t.Fatalf("round trip mismatch\ninput:  %q\noutput: %q", data, out)
	}
	again, err := Marshal(back)
	if err != nil || !bytes.Equal(out, again) {
		t.Fatalf("second Marshal differs (%v)\n%q\n%q", err, out, again)
	}
}

func FuzzUnmarshalSendMessageRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, &SendMessageRequest{})
	})
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, &SendMessageRequest{})
		fuzzCheck(t, data, &StreamResponse{})
	})
}

// ---------------------------------------------------------------------------
// benchmarks

func BenchmarkMarshalTask(b *testing.B) {
	task := sampleTask()
	b.Run("parley", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = AppendJSON(buf[:0], task); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("parley-Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(task); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := protojson.Marshal(task); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalSendMessageRequest(b *testing.B) {
	data, err := Marshal(sampleSendRequest())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parley", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m SendMessageRequest
			if err := Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		opts := protojson.UnmarshalOptions{DiscardUnknown: true}
		for b.Loop() {
			var m SendMessageRequest
			if err := opts.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
