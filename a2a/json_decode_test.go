package a2a

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

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
