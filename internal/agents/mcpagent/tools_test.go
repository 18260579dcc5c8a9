package mcpagent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// tools is a tool set: echo (one string argument), add (two numbers).
func tools(names ...string) *toolSet {
	ts := &toolSet{byName: map[string]*mcp.Tool{}}
	schemas := map[string]any{
		"echo": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		"add":  map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}},
	}
	for _, n := range names {
		ts.byName[n] = &mcp.Tool{Name: n, InputSchema: schemas[n]}
		ts.names = append(ts.names, n)
	}
	return ts
}

func dataMsg(t testing.TB, v any) *a2a.Message {
	pv, err := structpb.NewValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return &a2a.Message{Parts: []*a2a.Part{{Content: &a2a.Part_Data{Data: pv}}}}
}

func TestInvocationOf(t *testing.T) {
	two, one := tools("echo", "add"), tools("echo")
	for _, tc := range []struct {
		ts   *toolSet
		m    *a2a.Message
		want string // tool and arguments as JSON, or "REJECTED: text"
	}{
		{two, a2a.UserMessage(`add {"a": 1, "b": 2.5}`), `add {"a":1,"b":2.5}`},
		{two, a2a.UserMessage("echo  some words "), `echo {"text":"some words"}`},
		{two, a2a.UserMessage("echo"), `echo null`},
		{two, a2a.UserMessage("add 1 2"), "REJECTED: add takes its arguments as a JSON object"},
		{two, a2a.UserMessage(`add {"a": 1} x`), "REJECTED: the arguments of add are not one JSON object: text follows it"},
		{two, a2a.UserMessage("hello"), `REJECTED: no tool is named "hello"; the tools are echo, add`},
		{two, a2a.UserMessage("  "), "REJECTED: the message has neither text"},
		{two, &a2a.Message{}, "REJECTED: the message has no parts"},
		{one, a2a.UserMessage("hello there"), `echo {"text":"hello there"}`},
		{one, a2a.UserMessage(`{"text": "x"}`), `echo {"text":"x"}`},
		{two, dataMsg(t, map[string]any{"tool": "add", "arguments": map[string]any{"a": 1}}), `add {"a":1}`},
		{two, dataMsg(t, map[string]any{"tool": "echo"}), `echo null`},
		{two, dataMsg(t, map[string]any{"tool": "nope"}), `REJECTED: no tool is named "nope"`},
		{two, dataMsg(t, map[string]any{"tool": 3}), `REJECTED: "tool" is not a string`},
		{two, dataMsg(t, map[string]any{"tool": "add", "arguments": "x"}), `REJECTED: "arguments" is not an object`},
		{two, dataMsg(t, map[string]any{"text": "x"}), `REJECTED: the data part names no "tool"`},
		{two, dataMsg(t, []any{1}), "REJECTED: the data part is not an object"},
		{one, dataMsg(t, map[string]any{"text": "x"}), `echo {"text":"x"}`},
		{one, dataMsg(t, map[string]any{"arguments": map[string]any{"text": "y"}}), `echo {"text":"y"}`},
	} {
		inv, err := tc.ts.invocationOf(tc.m)
		got := ""
		if err != nil {
			got = "REJECTED: " + err.Error()
		} else {
			b, _ := json.Marshal(inv.args)
			got = inv.tool + " " + string(b)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: got %s, want %s", tc.m.GetParts(), got, tc.want)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	q := &mcp.ElicitParams{Message: "?", RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{"age": map[string]any{"type": "integer"}}, "required": []any{"age"}}}
	for _, tc := range []struct {
		m    *a2a.Message
		want string
	}{
		{a2a.UserMessage("42"), `accept {"age":42}`},
		{a2a.UserMessage(" Decline "), "decline null"},
		{a2a.UserMessage("cancel"), "cancel null"},
		{a2a.UserMessage(`{"age": 7}`), `accept {"age":7}`},
		{a2a.UserMessage(`{"age": "x"}`), "error: the answer does not match"},
		{a2a.UserMessage(`{"age": `), "error: the answer is not a JSON object"},
		{a2a.UserMessage("old"), "error: age:"},
		{dataMsg(t, map[string]any{"action": "decline"}), "decline null"},
		{dataMsg(t, map[string]any{"age": 3}), `accept {"age":3}`},
		{dataMsg(t, "x"), "error: the data part is not a JSON object"},
	} {
		r, err := answerOf(q, tc.m)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			b, _ := json.Marshal(r.Content)
			got = r.Action + " " + string(b)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: got %s, want %s", tc.m.GetParts(), got, tc.want)
		}
	}
	two := &mcp.ElicitParams{RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "boolean"}, "b": map[string]any{"type": "string"}}}}
	if _, err := answerOf(two, a2a.UserMessage("yes")); err == nil || !strings.Contains(err.Error(), "the fields a, b") {
		t.Errorf("two fields, a bare word: %v", err)
	}
	if r, err := answerOf(&mcp.ElicitParams{}, a2a.UserMessage("ok")); err != nil || r.Action != "accept" {
		t.Errorf("no field asked: %v %v", r, err)
	}
}

func TestProgressMessage(t *testing.T) {
	for _, tc := range []struct {
		p    mcp.ProgressNotificationParams
		want string
	}{
		{mcp.ProgressNotificationParams{Progress: 1, Total: 4, Message: "one"}, "progress 1/4: one"},
		{mcp.ProgressNotificationParams{Progress: 0.5}, "progress 0.5"},
	} {
		m := progressMessage(&tc.p)
		if got := a2a.JoinText(m.GetParts()); got != tc.want || len(m.GetParts()) != 2 {
			t.Errorf("%+v: %q (%d parts), want %q and a data part", tc.p, got, len(m.GetParts()), tc.want)
		}
	}
}

// FuzzMessages: whatever a caller sends, reading it as a tool call or as
// an answer never panics, and a call it reads names a tool there is.
func FuzzMessages(f *testing.F) {
	for _, s := range []string{`add {"a": 1}`, "echo hi", `{"tool":"add","arguments":{"a":1e400}}`, `{"age": 3}`, "decline", "{", `{"tool":["x"]}`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	ts := tools("echo", "add")
	q := &mcp.ElicitParams{RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}}}
	f.Fuzz(func(t *testing.T, s string, asData bool) {
		m := a2a.UserMessage(s)
		if asData {
			var v any
			if json.Unmarshal([]byte(s), &v) != nil {
				return
			}
			pv, err := structpb.NewValue(v)
			if err != nil {
				return
			}
			m.Parts = []*a2a.Part{{Content: &a2a.Part_Data{Data: pv}}}
		}
		if inv, err := ts.invocationOf(m); err == nil && ts.byName[inv.tool] == nil {
			t.Fatalf("%q: a call of %q, which is no tool", s, inv.tool)
		}
		_, _ = answerOf(q, m)
	})
}
