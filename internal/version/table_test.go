package version

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// TestTable: the defaults are 1.0 and 0.3; 1.1 is known but served only
// when named; Sort puts any list newest first.
func TestTable(t *testing.T) {
	if got := Defaults(); !slices.Equal(got, []string{"1.0", "0.3"}) {
		t.Errorf("Defaults() = %v", got)
	}
	if got := Known(); !slices.Equal(got, []string{"1.1", "1.0", "0.3"}) {
		t.Errorf("Known() = %v", got)
	}
	vs := []string{"0.3", "1.1", "1.0"}
	Sort(vs)
	if !slices.Equal(vs, []string{"1.1", "1.0", "0.3"}) {
		t.Errorf("Sort = %v", vs)
	}
	if !ShowsGeneration(V11) || ShowsGeneration("1.0") || ShowsGeneration(V03) || ShowsGeneration("") {
		t.Error("only 1.1 shows generations")
	}
}

// TestChoose11: a 1.1 request is served in 1.1 when 1.1 is served, and
// refused as any unknown version listing what is served otherwise; a
// v0.3 operation is never served in 1.1.
func TestChoose11(t *testing.T) {
	on := []string{"1.1", "1.0", "0.3"}
	if v, err := Choose("1.1", "", on); v != "1.1" || err != nil {
		t.Errorf("1.1 on: %q, %v", v, err)
	}
	if v, err := Choose("1.1.2", "", on); v != "1.1" || err != nil {
		t.Errorf("1.1.2 on: %q, %v", v, err)
	}
	if v, err := Choose("1.0", "", on); v != "1.0" || err != nil {
		t.Errorf("1.0 with 1.1 on: %q, %v", v, err)
	}
	_, err := Choose("1.1", "", Defaults())
	if e := a2a.AsError(err); e == nil || e.Code != a2a.CodeVersionNotSupported || e.Metadata["supportedVersions"] != "1.0,0.3" {
		t.Errorf("1.1 off: %v", err)
	}
	if _, err := Choose("1.1", V03, on); err == nil {
		t.Error("a v0.3 operation asked in 1.1 was served")
	}
}

// TestAddInterfaces: a 1.1 twin after the v1.0 interfaces, one per v1.0
// interface, none without 1.1, none twice.
func TestAddInterfaces(t *testing.T) {
	card := &a2a.AgentCard{SupportedInterfaces: []*a2a.AgentInterface{
		{Url: "http://x/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		{Url: "http://x", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0", Tenant: "t"},
		{Url: "http://x/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"},
	}}
	if got := AddInterfaces(card, Defaults()); got != card {
		t.Error("the defaults changed the card")
	}
	got := AddInterfaces(card, []string{"1.1", "1.0", "0.3"})
	var seen []string
	for _, in := range got.GetSupportedInterfaces() {
		seen = append(seen, in.GetProtocolVersion()+" "+in.GetProtocolBinding()+" "+in.GetTenant())
	}
	want := []string{"1.0 JSONRPC ", "1.0 HTTP+JSON t", "1.1 JSONRPC ", "1.1 HTTP+JSON t", "0.3 JSONRPC "}
	if !slices.Equal(seen, want) {
		t.Errorf("interfaces %q, want %q", seen, want)
	}
	if again := AddInterfaces(got, []string{"1.1", "1.0"}); len(again.GetSupportedInterfaces()) != len(want) {
		t.Errorf("a second AddInterfaces added %d", len(again.GetSupportedInterfaces())-len(want))
	}
	if len(card.GetSupportedInterfaces()) != 3 {
		t.Error("AddInterfaces changed its argument")
	}
}

// TestViews: 1.1 gets events with their generation, on a copy that keeps
// every other member of the shared event (which stays untouched); older
// versions get requests and tasks without the 1.1 members.
func TestViews(t *testing.T) {
	st := &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: &a2a.Message{MessageId: "m"}}
	meta, _ := structpb.NewStruct(map[string]any{"k": "v"})
	art := &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "x"}}}}
	for _, e := range []*a2a.StreamResponse{
		{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t", ContextId: "c", Status: st, Metadata: meta}}},
		{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "t", ContextId: "c", Artifact: art,
			Append: true, LastChunk: true, Metadata: meta}}},
		{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t", ContextId: "c", Status: st, Artifacts: []*a2a.Artifact{art},
			History: []*a2a.Message{{MessageId: "h"}}, Metadata: meta}}},
	} {
		before := proto.Clone(e).(*a2a.StreamResponse)
		got := WithGeneration(e, 7)
		// The expected copy: the event with its generation set, by
		// reflection over every populated field, so a member added to the
		// proto and forgotten by WithGeneration fails here.
		want := proto.Clone(e).(*a2a.StreamResponse)
		payload := want.ProtoReflect().Get(want.ProtoReflect().WhichOneof(want.ProtoReflect().Descriptor().Oneofs().ByName("payload"))).Message()
		payload.Set(payload.Descriptor().Fields().ByName("generation"), protoreflect.ValueOfInt64(7))
		if got == e || !proto.Equal(got, want) {
			t.Errorf("WithGeneration(%v) = %v, want %v", e, got, want)
		}
		if !proto.Equal(e, before) {
			t.Errorf("WithGeneration changed the shared event: %v", e)
		}
		if WithGeneration(e, 0) != e {
			t.Error("generation 0 made a copy")
		}
	}
	msg := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: &a2a.Message{}}}
	if WithGeneration(msg, 3) != msg {
		t.Error("a direct reply was given a generation")
	}
	g := int64(3)
	get := &a2a.GetTaskRequest{Id: "t", CurrentGeneration: &g}
	send := &a2a.SendMessageRequest{Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &g}}
	ClearRequest(V11, get)
	ClearRequest(V11, send)
	if get.CurrentGeneration == nil || send.Configuration.IfGenerationMatch == nil {
		t.Error("1.1 lost its request members")
	}
	ClearRequest("1.0", get)
	ClearRequest("1.0", send)
	ClearRequest("1.0", &a2a.SendMessageRequest{})
	if get.CurrentGeneration != nil || send.Configuration.IfGenerationMatch != nil {
		t.Error("1.0 kept the 1.1 request members")
	}
	if tk := Task("1.0", &a2a.Task{Generation: 5}, 6); tk.Generation != 0 {
		t.Error("1.0 task kept its generation")
	}
	if tk := Task(V11, &a2a.Task{}, 6); tk.Generation != 6 {
		t.Errorf("1.1 task generation %d, want 6", tk.Generation)
	}
}
