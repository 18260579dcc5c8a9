package version

import (
	"slices"
	"testing"

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

// TestViews: older versions get answers and requests without the 1.1
// members, the shared event untouched; 1.1 gets them as they are.
func TestViews(t *testing.T) {
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t", Generation: 4}}}
	if Event(V11, ev) != ev {
		t.Error("1.1 got a copy")
	}
	plain := Event("1.0", ev)
	if plain == ev || plain.GetStatusUpdate().GetGeneration() != 0 || plain.GetStatusUpdate().GetTaskId() != "t" || ev.GetStatusUpdate().GetGeneration() != 4 {
		t.Errorf("1.0 view %v of %v", plain, ev)
	}
	for _, e := range []*a2a.StreamResponse{
		{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{Generation: 2, Append: true}}},
		{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t", Generation: 1}}},
	} {
		if p := Plain(e); p == e || Event(V03, e) == e {
			t.Errorf("no copy of %v", e)
		}
	}
	msg := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: &a2a.Message{}}}
	if Event("1.0", msg) != msg {
		t.Error("a message without a generation was copied")
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
	if tk := Task("1.0", &a2a.Task{Generation: 5}); tk.Generation != 0 {
		t.Error("1.0 task kept its generation")
	}
}
