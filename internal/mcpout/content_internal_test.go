package mcpout

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// TestToolNames: skill ids become tool names of [A-Za-z0-9_-], at most
// 128 bytes; the second and later of a collision get _2, _3, ... in the
// card's order, still within 128 bytes.
func TestToolNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	skills := []*a2a.AgentSkill{{Id: "a.b"}, {Id: "a b"}, {Id: "a_b"}, {Id: ""}, {Id: "héllo/wörld"}, {Id: long}, {Id: long + "y"}, {Id: "ok-Name_9"}}
	got := toolNames(skills)
	want := []string{"a_b", "a_b_2", "a_b_3", "skill", "h_llo_w_rld", strings.Repeat("x", 128), strings.Repeat("x", 126) + "_2", "ok-Name_9"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("toolNames = %q, want %q", got, want)
	}
	for _, n := range got {
		if len(n) > maxToolName {
			t.Errorf("tool name %q is %d bytes, want at most %d", n, len(n), maxToolName)
		}
	}
	if s := skillsOf(&a2a.AgentCard{Name: "My Agent", Description: "does"}); len(s) != 1 || toolName(s[0].GetId()) != "My_Agent" {
		t.Errorf("a card without skills gives %v, want one skill named for the agent", s)
	}
}

// TestPartContent: each kind of part and media type becomes the MCP
// content block the mapping table says.
func TestPartContent(t *testing.T) {
	t.Parallel()
	data, _ := structpb.NewValue(map[string]any{"k": "v"})
	const uri = "a2a://tasks/t/artifacts/a/parts/0"
	for _, tc := range []struct {
		name string
		part *a2a.Part
		want string // the block's JSON
	}{
		{"text", a2a.TextPart("hi"), `{"type":"text","text":"hi"}`},
		{"image", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("PNG")}, MediaType: "image/png"}, `{"type":"image","mimeType":"image/png","data":"UE5H"}`},
		{"audio", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("WAV")}, MediaType: "audio/wav"}, `{"type":"audio","mimeType":"audio/wav","data":"V0FW"}`},
		{"text file", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("notes")}, MediaType: "text/markdown; charset=utf-8", Filename: "n o.md"},
			`{"type":"resource","resource":{"uri":"` + uri + `/n%20o.md","mimeType":"text/markdown; charset=utf-8","text":"notes"}}`},
		{"json file", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte(`{"a":1}`)}, MediaType: "application/json"},
			`{"type":"resource","resource":{"uri":"` + uri + `","mimeType":"application/json","text":"{\"a\":1}"}}`},
		{"binary file", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte{0, 1}}, MediaType: "application/pdf"},
			`{"type":"resource","resource":{"uri":"` + uri + `","mimeType":"application/pdf","blob":"AAE="}}`},
		{"no media type", &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte{0xff}}},
			`{"type":"resource","resource":{"uri":"` + uri + `","mimeType":"application/octet-stream","blob":"/w=="}}`},
		{"url", &a2a.Part{Content: &a2a.Part_Url{Url: "https://x.example/a/report.pdf"}, MediaType: "application/pdf"},
			`{"type":"resource_link","mimeType":"application/pdf","uri":"https://x.example/a/report.pdf","name":"report.pdf"}`},
		{"url named", &a2a.Part{Content: &a2a.Part_Url{Url: "https://x.example/"}, Filename: "home"},
			`{"type":"resource_link","uri":"https://x.example/","name":"home"}`},
		{"data", &a2a.Part{Content: &a2a.Part_Data{Data: data}}, `{"type":"text","text":"{\"k\":\"v\"}"}`},
		{"empty", &a2a.Part{}, `{"type":"text","text":"(an empty part)"}`},
	} {
		b, err := json.Marshal(partContent(tc.part, uri))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !jsonEqual(t, string(b), tc.want) {
			t.Errorf("%s: partContent = %s, want %s", tc.name, b, tc.want)
		}
	}
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// TestStreamedChunksJoin: an artifact's consecutive text parts (the
// chunks of a stream) are one text block; a part of another kind between
// them separates them.
func TestStreamedChunksJoin(t *testing.T) {
	t.Parallel()
	task := &a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}, Artifacts: []*a2a.Artifact{
		a2a.NewArtifact("a", a2a.TextPart("Hel"), a2a.TextPart("lo"), &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("x")}, MediaType: "image/png"}, a2a.TextPart("!")),
		a2a.TextArtifact("b", "other"),
	}}
	var got []string
	for _, c := range (outcome{task: task}).content() {
		b, _ := json.Marshal(c)
		got = append(got, string(b))
	}
	want := []string{`{"type":"text","text":"Hello"}`, `{"type":"image","mimeType":"image/png","data":"eA=="}`, `{"type":"text","text":"!"}`, `{"type":"text","text":"other"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("content = %s, want %s", got, want)
	}
}

// TestParseArgs: the arguments a model may send, and what is wrong with
// the others.
func TestParseArgs(t *testing.T) {
	t.Parallel()
	a, err := parseArgs(json.RawMessage(`{"message":"hi","taskId":"t","contextId":null,"extra":1}`))
	if err != nil || a != (args{Message: "hi", TaskID: "t"}) {
		t.Errorf("parseArgs = %+v, %v", a, err)
	}
	for raw, want := range map[string]string{``: "missing the arguments", `null`: "missing the arguments", `[]`: "not a JSON object",
		`{}`: `missing "message"`, `{"message":1}`: "message must be a string", `{"message":"x","contextId":{}}`: "contextId must be a string"} {
		if _, err := parseArgs(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseArgs(%s) = %v, want an error saying %q", raw, err, want)
		}
	}
}

// TestLoopbackAddr: --http listens on loopback unless told a host.
func TestLoopbackAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{":7071": "127.0.0.1:7071", "0.0.0.0:7071": "0.0.0.0:7071", "[::1]:7071": "[::1]:7071", "bad": "bad"} {
		if got := LoopbackAddr(in); got != want {
			t.Errorf("LoopbackAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzParseArgs: any arguments a client sends are read or refused with a
// message, never a panic; what is read round-trips.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"message":"hi"}`, `{"message":"x","taskId":"t","contextId":"c"}`, `null`, `[]`, `{"message":1}`, `{"message":"\u0000"}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseArgs(raw)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		b, _ := json.Marshal(map[string]string{"message": a.Message, "taskId": a.TaskID, "contextId": a.ContextID})
		if again, err := parseArgs(b); err != nil || again != a {
			t.Fatalf("parseArgs(%s) = %+v, then %+v, %v", raw, a, again, err)
		}
	})
}
