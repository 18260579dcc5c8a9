package mcpout_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/mcpout"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
)

// agentServer runs the conformance agent on loopback, its card streaming
// or not, with the skills given (nil: parleytest's one).
func agentServer(t *testing.T, streaming bool, skills []*a2a.AgentSkill) *parleytest.Server {
	t.Helper()
	return parleytest.NewServer(t, agents.Conformance(), parleytest.WithCard(func(c *a2a.AgentCard) {
		c.Capabilities.Streaming = &streaming
		if skills != nil {
			c.Skills = skills
		}
	}))
}

// connect serves the bridge to srv's agent in this process and returns a
// session of the official Go SDK's MCP client connected to it (over the
// SDK's in-memory transport), with the client options given.
func connect(t *testing.T, srv *parleytest.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, srv, opts, "")
}

// versions are the MCP protocol versions the bridge is tested at: the
// SDK's latest (2026-07-28, where the server asks for input in its result
// and the client calls again, SEP-2322), and two before it (where the
// server sends elicitation/create).
var versions = []string{"", "2025-11-25", "2025-06-18"}

// connectAt is connect with the MCP protocol version the client asks for
// ("": the SDK's latest).
func connectAt(t *testing.T, srv *parleytest.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	b, err := mcpout.New(srv.Client(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, st)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// structured is a result's structuredContent as a map.
func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// texts is the text of a result's text blocks, one per line.
func texts(r *mcp.CallToolResult) string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// call calls the tool with args and fails the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v) = %v", tool, args, err)
	}
	return r
}

// TestListTools: tools/list has one tool per skill, named by the skill
// id (sanitized, collisions suffixed), with the skill's description and
// examples and the shared input schema.
func TestListTools(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, []*a2a.AgentSkill{
		{Id: "summarize", Name: "Summarize", Description: "Summarizes text.", Examples: []string{"summarize this", "tl;dr"}, Tags: []string{"t"}},
		{Id: "web.search", Name: "Search", Description: "Searches.", Tags: []string{"t"}},
		{Id: "web search", Name: "Search 2", Description: "Searches again.", Tags: []string{"t"}},
	})
	cs := connect(t, srv, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if got, want := strings.Join(names, ","), "summarize,web_search,web_search_2"; got != want {
		t.Fatalf("tools/list names = %s, want %s", got, want)
	}
	s := res.Tools[0]
	if s.Title != "Summarize" || !strings.Contains(s.Description, "Summarizes text.") || !strings.Contains(s.Description, "- tl;dr") {
		t.Errorf("tool summarize = title %q, description %q; want the skill's name, description and examples", s.Title, s.Description)
	}
	schema, _ := json.Marshal(s.InputSchema)
	for _, want := range []string{`"message"`, `"taskId"`, `"contextId"`, `"required":["message"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema %s lacks %s", schema, want)
		}
	}
}

// TestCallRows: each row of the mapping over the wire, against the
// conformance agent, with a streaming card and without.
func TestCallRows(t *testing.T) {
	t.Parallel()
	rows := []struct {
		msg, state string
		isError    bool
		check      func(t *testing.T, r *mcp.CallToolResult)
	}{
		{"hello there", "TASK_STATE_COMPLETED", false, wantText("hello there")},
		{"message", "TASK_STATE_COMPLETED", false, func(t *testing.T, r *mcp.CallToolResult) {
			wantText("pong")(t, r)
			if _, ok := structured(t, r)["taskId"]; ok {
				t.Errorf("a direct reply's structuredContent has a taskId: %v", r.StructuredContent)
			}
		}},
		{"tck-artifact-text", "TASK_STATE_COMPLETED", false, wantText("Generated text content")},
		{"tck-artifact-file", "TASK_STATE_COMPLETED", false, func(t *testing.T, r *mcp.CallToolResult) {
			er, ok := r.Content[len(r.Content)-1].(*mcp.EmbeddedResource)
			if !ok || er.Resource.Text != "tck" || er.Resource.MIMEType != "text/plain" || !strings.HasSuffix(er.Resource.URI, "/output.txt") {
				t.Errorf("file part = %#v, want an embedded text resource \"tck\" named output.txt", r.Content[len(r.Content)-1])
			}
		}},
		{"tck-artifact-file-url", "TASK_STATE_COMPLETED", false, func(t *testing.T, r *mcp.CallToolResult) {
			rl, ok := r.Content[len(r.Content)-1].(*mcp.ResourceLink)
			if !ok || rl.URI != "https://example.com/output.txt" || rl.Name != "output.txt" {
				t.Errorf("URL part = %#v, want a resource link to https://example.com/output.txt", r.Content[len(r.Content)-1])
			}
		}},
		{"tck-artifact-data", "TASK_STATE_COMPLETED", false, func(t *testing.T, r *mcp.CallToolResult) {
			var v map[string]any
			if err := json.Unmarshal([]byte(r.Content[len(r.Content)-1].(*mcp.TextContent).Text), &v); err != nil || v["key"] != "value" || v["count"] != 42.0 {
				t.Errorf("data part = %s (%v), want the JSON {\"key\":\"value\",\"count\":42}", texts(r), err)
			}
		}},
		{"fail", "TASK_STATE_FAILED", true, wantText("the agent failed the task on request")},
		{"reject", "TASK_STATE_REJECTED", true, wantText("the agent rejected the task")},
		{"auth-required", "TASK_STATE_AUTH_REQUIRED", true, wantText("authorization is required")},
		{"input-required", "TASK_STATE_INPUT_REQUIRED", false, wantText("more input is required")},
	}
	for _, streaming := range []bool{true, false} {
		cs := connect(t, agentServer(t, streaming, nil), nil)
		for _, row := range rows {
			r := call(t, cs, "test", map[string]any{"message": row.msg})
			st := structured(t, r)
			if st["state"] != row.state || r.IsError != row.isError {
				t.Errorf("streaming %v, %q: state %v isError %v, want %s %v\n%s", streaming, row.msg, st["state"], r.IsError, row.state, row.isError, texts(r))
				continue
			}
			if row.msg != "message" && (st["taskId"] == nil || st["contextId"] == nil) {
				t.Errorf("streaming %v, %q: structuredContent %v lacks taskId or contextId", streaming, row.msg, st)
			}
			row.check(t, r)
		}
	}
}

// wantText checks that the result's text holds s.
func wantText(s string) func(t *testing.T, r *mcp.CallToolResult) {
	return func(t *testing.T, r *mcp.CallToolResult) {
		t.Helper()
		if !strings.Contains(texts(r), s) {
			t.Errorf("result text %q, want it to hold %q", texts(r), s)
		}
	}
}

// TestBadArguments: a call without a message is a tool error the model
// can read, not a protocol error.
func TestBadArguments(t *testing.T) {
	t.Parallel()
	cs := connect(t, agentServer(t, true, nil), nil)
	for _, args := range []map[string]any{{}, {"message": 3}, {"message": "x", "taskId": false}} {
		r := call(t, cs, "test", args)
		if !r.IsError || texts(r) == "" {
			t.Errorf("arguments %v: isError %v, %q; want a tool error", args, r.IsError, texts(r))
		}
	}
}

// TestInputRequiredWithoutElicitation: the call returns the question with
// the task id, and a call with taskId continues the same task.
func TestInputRequiredWithoutElicitation(t *testing.T) {
	t.Parallel()
	cs := connect(t, agentServer(t, true, nil), nil)
	r := call(t, cs, "test", map[string]any{"message": "input-required"})
	st := structured(t, r)
	if st["state"] != "TASK_STATE_INPUT_REQUIRED" || r.IsError || !strings.Contains(texts(r), st["taskId"].(string)) {
		t.Fatalf("input-required: %v isError %v %q; want the question and the task id", st, r.IsError, texts(r))
	}
	r2 := call(t, cs, "test", map[string]any{"message": "blue", "taskId": st["taskId"]})
	st2 := structured(t, r2)
	if st2["state"] != "TASK_STATE_COMPLETED" || st2["taskId"] != st["taskId"] || !strings.Contains(texts(r2), "blue") {
		t.Fatalf("the follow-up: %v %q; want the same task COMPLETED echoing blue", st2, texts(r2))
	}
	// Continuing a task that is over: the agent's error, as a tool error.
	r3 := call(t, cs, "test", map[string]any{"message": "again", "taskId": st["taskId"]})
	if !r3.IsError || !strings.Contains(texts(r3), "UnsupportedOperationError") {
		t.Fatalf("a message to a finished task: isError %v %q; want UnsupportedOperationError", r3.IsError, texts(r3))
	}
}

// elicitor answers elicitations from a list of actions and answers, and
// records the questions.
type elicitor struct {
	mu        sync.Mutex
	answers   []*mcp.ElicitResult
	questions []string
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.questions = append(e.questions, req.Params.Message)
	if len(e.answers) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	return a, nil
}

func accept(s string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": s}}
}

// TestElicitation: with a client that declared elicitation, the agent's
// questions become elicitations and the answers follow-ups on the same
// task, turn after turn; decline cancels the task; cancel leaves it
// waiting and returns the question.
func TestElicitation(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, nil)
	for _, tc := range []struct {
		name, msg string
		answers   []*mcp.ElicitResult
		state     string
		isError   bool
		text      string
		asked     int
	}{
		{"one turn", "input-required", []*mcp.ElicitResult{accept("blue")}, "TASK_STATE_COMPLETED", false, "blue", 1},
		{"three turns", "tck-multi-turn", []*mcp.ElicitResult{accept("one"), accept("two"), accept("done")}, "TASK_STATE_COMPLETED", false, "Conversation complete", 3},
		{"decline", "input-required", []*mcp.ElicitResult{{Action: "decline"}}, "TASK_STATE_CANCELED", true, "declined", 1},
		{"cancel", "input-required", nil, "TASK_STATE_INPUT_REQUIRED", false, "more input is required", 1},
	} {
		for _, v := range versions {
			t.Run(tc.name+" "+v, func(t *testing.T) {
				t.Parallel()
				e := &elicitor{answers: slices.Clone(tc.answers)}
				cs := connectAt(t, srv, &mcp.ClientOptions{ElicitationHandler: e.handle}, v)
				if got := cs.InitializeResult().ProtocolVersion; v != "" && got != v {
					t.Fatalf("negotiated MCP %s, want %s", got, v)
				}
				r := call(t, cs, "test", map[string]any{"message": tc.msg})
				st := structured(t, r)
				if st["state"] != tc.state || r.IsError != tc.isError || !strings.Contains(texts(r), tc.text) {
					t.Errorf("state %v isError %v %q; want %s %v holding %q", st["state"], r.IsError, texts(r), tc.state, tc.isError, tc.text)
				}
				e.mu.Lock()
				defer e.mu.Unlock()
				if len(e.questions) != tc.asked {
					t.Errorf("asked %d questions %q, want %d", len(e.questions), e.questions, tc.asked)
				}
				if tc.msg == "input-required" && len(e.questions) > 0 && !strings.Contains(e.questions[0], "more input is required") {
					t.Errorf("the elicitation asked %q, want the agent's question", e.questions[0])
				}
			})
		}
	}
}

// TestProgress: a call with a progress token streams the task, one
// notifications/progress per event, increasing, the chunks' text in the
// messages.
func TestProgress(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			testProgress(t, srv, v)
		})
	}
}

func testProgress(t *testing.T, srv *parleytest.Server, version string) {
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := connectAt(t, srv, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, r.Params)
		mu.Unlock()
	}}, version)
	params := &mcp.CallToolParams{Name: "test", Arguments: map[string]any{"message": "stream 4 every 10"}}
	params.SetProgressToken("p1")
	r, err := cs.CallTool(t.Context(), params)
	if err != nil || structured(t, r)["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("CallTool = %v, %v", r, err)
	}
	if got := texts(r); !strings.Contains(got, "chunk 0chunk 1chunk 2chunk 3") {
		t.Errorf("result %q, want the assembled artifact", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 7 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var msgs []string
	for i, p := range got {
		msgs = append(msgs, p.Message)
		if p.ProgressToken != "p1" || p.Progress != float64(i+1) || p.Total != 0 {
			t.Errorf("progress %d = token %v progress %v total %v, want p1, %d, none", i, p.ProgressToken, p.Progress, p.Total, i+1)
		}
	}
	all := strings.Join(msgs, "|")
	// Task snapshot (SUBMITTED), WORKING, four chunks, COMPLETED.
	for _, want := range []string{"TASK_STATE_WORKING", "artifact stream: chunk 0", "artifact stream: chunk 3", "TASK_STATE_COMPLETED"} {
		if !strings.Contains(all, want) {
			t.Errorf("progress messages %q lack %q", all, want)
		}
	}
}

// TestCancel: notifications/cancelled (the Go SDK sends it when the call's
// context ends) cancels the A2A task.
func TestCancel(t *testing.T) {
	t.Parallel()
	for i, streaming := range []bool{true, false, true} {
		srv := agentServer(t, streaming, nil)
		cs := connectAt(t, srv, nil, versions[i])
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test", Arguments: map[string]any{"message": "slow 20000"}})
			errc <- err
		}()
		id := waitWorking(t, srv)
		cancel()
		if err := <-errc; err == nil {
			t.Errorf("streaming %v: the cancelled call returned no error", streaming)
		}
		waitState(t, srv, id, a2a.TaskState_TASK_STATE_CANCELED)
	}
}

// TestMediaOverTheWire: an agent's image, audio and binary file parts
// reach the MCP client as image, audio and blob resource blocks, and a
// status message with a data part precedes the artifacts.
func TestMediaOverTheWire(t *testing.T) {
	t.Parallel()
	data, _ := structpb.NewStruct(map[string]any{"score": 0.5})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Artifact(a2a.NewArtifact("media",
			&a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("\x89PNG")}, MediaType: "image/png", Filename: "a.png"},
			&a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("RIFF")}, MediaType: "audio/wav"},
			&a2a.Part{Content: &a2a.Part_Raw{Raw: []byte{0, 1, 2}}, MediaType: "application/pdf", Filename: "r.pdf"})); err != nil {
			return err
		}
		msg := &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{
			a2a.TextPart("done"), {Content: &a2a.Part_Data{Data: structpb.NewStructValue(data)}}}}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, msg)
	})
	for _, streaming := range []bool{true, false} {
		srv := parleytest.NewServer(t, agent, parleytest.WithCard(func(c *a2a.AgentCard) { c.Capabilities.Streaming = &streaming }))
		r := call(t, connect(t, srv, nil), "test", map[string]any{"message": "media"})
		if len(r.Content) != 5 {
			t.Fatalf("streaming %v: %d content blocks, want 5: %#v", streaming, len(r.Content), r.Content)
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "done" {
			t.Errorf("block 0 = %#v, want the status message's text", r.Content[0])
		}
		if tc, ok := r.Content[1].(*mcp.TextContent); !ok || tc.Text != `{"score":0.5}` {
			t.Errorf("block 1 = %#v, want the data part as JSON", r.Content[1])
		}
		if ic, ok := r.Content[2].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || string(ic.Data) != "\x89PNG" {
			t.Errorf("block 2 = %#v, want the PNG image", r.Content[2])
		}
		if ac, ok := r.Content[3].(*mcp.AudioContent); !ok || ac.MIMEType != "audio/wav" || string(ac.Data) != "RIFF" {
			t.Errorf("block 3 = %#v, want the WAV audio", r.Content[3])
		}
		if er, ok := r.Content[4].(*mcp.EmbeddedResource); !ok || er.Resource.MIMEType != "application/pdf" || len(er.Resource.Blob) != 3 ||
			!strings.HasSuffix(er.Resource.URI, "/r.pdf") {
			t.Errorf("block 4 = %#v, want the PDF as a blob resource", r.Content[4])
		}
	}
}
