package a2a

// Messages shared by the codec tests.

import (
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

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
