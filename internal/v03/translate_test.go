package v03_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
)

func sample() *a2a.Task {
	data, _ := structpb.NewValue(map[string]any{"n": 1.0})
	meta, _ := structpb.NewStruct(map[string]any{"k": "v"})
	return &a2a.Task{Id: "t1", ContextId: "c1", Metadata: meta,
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, Timestamp: timestamppb.New(timestamppb.Now().AsTime().Truncate(1000))},
		History: []*a2a.Message{{MessageId: "m1", Role: a2a.Role_ROLE_USER, TaskId: "t1", ContextId: "c1", ReferenceTaskIds: []string{"t0"},
			Parts: []*a2a.Part{
				{Content: &a2a.Part_Text{Text: "hi"}, Metadata: meta},
				{Content: &a2a.Part_Raw{Raw: []byte("abc")}, MediaType: "application/octet-stream", Filename: "a.bin"},
				{Content: &a2a.Part_Url{Url: "https://x.example/f"}, MediaType: "image/png", Filename: "f.png"},
				{Content: &a2a.Part_Data{Data: data}},
			}}},
		Artifacts: []*a2a.Artifact{{ArtifactId: "a1", Name: "out", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "yo"}}}}},
	}
}

// TestTaskRoundTrip: a task translated to v0.3 JSON and back is the same
// task, for everything v0.3 can say.
func TestTaskRoundTrip(t *testing.T) {
	in := sample()
	b, err := json.Marshal(v03.TaskFromV1(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"task"`, `"state":"input-required"`, `"kind":"file"`, `"bytes":"YWJj"`, `"uri":"https://x.example/f"`, `"kind":"data"`, `"role":"user"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("v0.3 task lacks %s: %s", want, b)
		}
	}
	var back v03.Task
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	out, err := v03.TaskToV1Checked(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Errorf("round trip:\n in %v\nout %v", in, out)
	}
}

// TestLossy: what v0.3 cannot carry, and how Parley reshapes it.
func TestLossy(t *testing.T) {
	// A text part's media type is dropped; non-object data is wrapped.
	list, _ := structpb.NewValue([]any{1.0, 2.0})
	p := v03.PartFromV1(&a2a.Part{Content: &a2a.Part_Text{Text: "x"}, MediaType: "text/markdown"})
	if b, _ := json.Marshal(p); strings.Contains(string(b), "markdown") {
		t.Errorf("text part keeps its media type: %s", b)
	}
	p = v03.PartFromV1(&a2a.Part{Content: &a2a.Part_Data{Data: list}})
	if b, _ := json.Marshal(p); string(b) != `{"kind":"data","data":{"value":[1,2]}}` {
		t.Errorf("list data: %s", b)
	}
	// Several v0.3 authentication schemes: the first is kept.
	m, req, err := v03.Request(v03.MethodPushSet, []byte(`{"taskId":"t","pushNotificationConfig":{"url":"https://h.example/","authentication":{"schemes":["Basic","Bearer"],"credentials":"c"}}}`))
	if err != nil || m.Name != a2a.MethodCreateTaskPushNotificationConfig {
		t.Fatal(m, err)
	}
	cfg := req.(*a2a.TaskPushNotificationConfig)
	if cfg.GetAuthentication().GetScheme() != "Basic" || cfg.GetUrl() != "https://h.example/" {
		t.Errorf("config %v", cfg)
	}
	// The proto shape drops file names and reference task ids.
	pm := v03.PMessageFromV1(sample().History[0])
	if b, _ := json.Marshal(pm); strings.Contains(string(b), "a.bin") || strings.Contains(string(b), "t0") || !strings.Contains(string(b), `"ROLE_USER"`) {
		t.Errorf("proto message: %s", b)
	}
}

// TestStates: every v1.0 state has a v0.3 name and back; the proto names
// spell CANCELLED.
func TestStates(t *testing.T) {
	for s := range a2a.TaskState_name {
		name := v03.StateName(a2a.TaskState(s))
		back, ok := v03.ParseState(name)
		if !ok || back != a2a.TaskState(s) {
			t.Errorf("state %d -> %q -> %d, %v", s, name, back, ok)
		}
	}
	b, _ := json.Marshal(v03.PTaskFromV1(&a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_CANCELED}}))
	if !strings.Contains(string(b), "TASK_STATE_CANCELLED") {
		t.Errorf("proto task: %s", b)
	}
	if !v03.Final(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, false) || v03.Final(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, true) || v03.Final(a2a.TaskState_TASK_STATE_WORKING, false) {
		t.Error("Final: input-required ends message/stream, not a subscription; working ends nothing")
	}
}

// TestPushPayload: v0.3 configurations get a v0.3 Task per event.
func TestPushPayload(t *testing.T) {
	for _, tc := range []struct {
		ev   *a2a.StreamResponse
		want []string
	}{
		{&a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: sample()}}, []string{`"kind":"task"`, `"history"`}},
		{&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t", ContextId: "c",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}}}, []string{`"kind":"task"`, `"id":"t"`, `"state":"completed"`}},
		{&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "t", ContextId: "c",
			Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "x"}}}}}}}, []string{`"kind":"task"`, `"state":"working"`, `"artifactId":"a"`}},
	} {
		b, err := v03.PushPayload(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("payload %s lacks %s", b, w)
			}
		}
	}
}

// TestCardMembers: a card with 0.3 interfaces gets the v0.3 members.
func TestCardMembers(t *testing.T) {
	card := &a2a.AgentCard{Name: "n", Capabilities: &a2a.AgentCapabilities{ExtendedAgentCard: proto.Bool(true)},
		SupportedInterfaces: []*a2a.AgentInterface{
			{Url: "https://a.example/rpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: "https://a.example", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{Url: "a.example:443", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
		}}
	var got map[string]any
	if err := json.Unmarshal(v03.CardJSON(card), &got); err != nil {
		t.Fatal(err)
	}
	if got["url"] != "https://a.example/rpc" || got["preferredTransport"] != "JSONRPC" || got["protocolVersion"] != "0.3.0" ||
		got["supportsAuthenticatedExtendedCard"] != true || len(got["additionalInterfaces"].([]any)) != 3 || len(got["supportedInterfaces"].([]any)) != 6 {
		t.Errorf("card: %v", got)
	}
	if b := v03.WithMembers([]byte(`{"name":"n"}`), &a2a.AgentCard{}); string(b) != `{"name":"n"}` {
		t.Errorf("a card without 0.3 interfaces changed: %s", b)
	}
}

// TestCardToV1: a v0.3 card becomes a v1.0 card with 0.3 interfaces; its
// securitySchemes (v0.3 shape) are dropped rather than failing the read.
func TestCardToV1(t *testing.T) {
	body := []byte(`{"name":"old","description":"d","version":"1","protocolVersion":"0.3.0","url":"https://o.example/rpc",
		"preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"https://o.example/rpc","transport":"JSONRPC"},{"url":"https://o.example","transport":"HTTP+JSON"}],
		"capabilities":{"streaming":true,"stateTransitionHistory":true},"securitySchemes":{"b":{"type":"http","scheme":"bearer"}},"security":[{"b":[]}],
		"supportsAuthenticatedExtendedCard":true,"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"s","tags":["t"]}]}`)
	if !v03.IsCard(body) {
		t.Fatal("not recognised as a v0.3 card")
	}
	card, err := v03.CardToV1(body)
	if err != nil {
		t.Fatal(err)
	}
	ins := card.GetSupportedInterfaces()
	if len(ins) != 2 || ins[0].GetProtocolBinding() != "JSONRPC" || ins[1].GetProtocolBinding() != "HTTP+JSON" || ins[1].GetProtocolVersion() != "0.3" {
		t.Errorf("interfaces %v", ins)
	}
	if !card.GetCapabilities().GetStreaming() || !card.GetCapabilities().GetExtendedAgentCard() || card.GetName() != "old" || len(card.GetSecuritySchemes()) != 0 {
		t.Errorf("card %v", card)
	}
}
