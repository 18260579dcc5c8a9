package agents_test

// Tests of the conformance agent's part of the official conformance kit's
// contract (a2a-tck): the behaviour chosen by the messageId prefix, through
// the server core and over the wire on every binding.

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// guard bounds every call so that a bug fails the test instead of hanging it.
const guard = 10 * time.Second

// session stands for the per-run suffix the kit appends to its prefixes.
const session = "-1a2b3c4d"

// newCore returns a server core running the conformance agent on a memory
// store, closed when the test ends.
func newCore(t *testing.T) *server.Server {
	t.Helper()
	card, err := agents.Card("conformance", []*a2a.AgentInterface{{
		Url: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion,
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(&server.Options{
		Card:   card,
		Agent:  agents.Conformance(),
		Store:  memstore.New(),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// call returns a context for one call to the core, anonymous, A2A 1.0.
func call(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: a2a.ProtocolVersion})
}

// tckMessage is a user message with the text and the messageId id, on the
// task taskID ("" for a new task).
func tckMessage(id, taskID, text string) *a2a.SendMessageRequest {
	m := a2a.UserMessage(text)
	m.MessageId, m.TaskId = id, taskID
	return &a2a.SendMessageRequest{Message: m}
}

// want describes what the kit expects back from a blocking send.
type want struct {
	reply  string // a direct Message with this text (no task)
	state  a2a.TaskState
	status string    // the status message's text ("" for none)
	part   *a2a.Part // the one part of the one artifact (nil for none)
}

func filePart() *a2a.Part {
	return &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte("tck")}, Filename: "output.txt", MediaType: "text/plain"}
}

func dataPart(t *testing.T) *a2a.Part {
	v, err := structpb.NewValue(map[string]any{"key": "value", "count": 42})
	if err != nil {
		t.Fatal(err)
	}
	return &a2a.Part{Content: &a2a.Part_Data{Data: v}}
}

// contract is the kit's contract for a message starting a task; the text
// sent with each is "reject", to show that the prefix wins over the text.
func contract(t *testing.T) map[string]want {
	completed := a2a.TaskState_TASK_STATE_COMPLETED
	return map[string]want{
		"tck-complete-task":           {state: completed, status: "Hello from TCK"},
		"tck-artifact-text":           {state: completed, part: a2a.TextPart("Generated text content")},
		"tck-artifact-file":           {state: completed, part: filePart()},
		"tck-artifact-file-url":       {state: completed, part: &a2a.Part{Content: &a2a.Part_Url{Url: "https://example.com/output.txt"}, Filename: "output.txt", MediaType: "text/plain"}},
		"tck-artifact-data":           {state: completed, part: dataPart(t)},
		"tck-message-response":        {reply: "Direct message response"},
		"tck-input-required":          {state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, status: "Input required"},
		"tck-auth-required":           {state: a2a.TaskState_TASK_STATE_AUTH_REQUIRED, status: "Authorization required"},
		"tck-reject-task":             {state: a2a.TaskState_TASK_STATE_REJECTED, status: "rejected"},
		"tck-stream-001":              {state: completed, part: a2a.TextPart("Stream hello from TCK")},
		"tck-stream-002":              {state: completed},
		"tck-stream-003":              {state: completed, part: a2a.TextPart("Stream task lifecycle")},
		"tck-stream-ordering-001":     {state: completed, part: a2a.TextPart("Ordered output")},
		"tck-stream-artifact-text":    {state: completed, part: a2a.TextPart("Streamed text content")},
		"tck-stream-artifact-file":    {state: completed, part: filePart()},
		"tck-stream-artifact-chunked": {state: completed, part: a2a.TextPart("chunk-1 chunk-2")},
	}
}

// check compares a SendMessage result with w.
func check(t *testing.T, resp *a2a.SendMessageResponse, w want) {
	t.Helper()
	if w.reply != "" {
		if m := resp.GetMessage(); m == nil || m.GetRole() != a2a.Role_ROLE_AGENT || a2a.FirstText(m) != w.reply {
			t.Fatalf("got %v, want a direct agent message %q", resp, w.reply)
		}
		return
	}
	task := resp.GetTask()
	if task == nil {
		t.Fatalf("got %v, want a task", resp)
	}
	if got := task.GetStatus().GetState(); got != w.state {
		t.Errorf("state %v, want %v", got, w.state)
	}
	if got := a2a.FirstText(task.GetStatus().GetMessage()); got != w.status {
		t.Errorf("status message %q, want %q", got, w.status)
	}
	arts := task.GetArtifacts()
	if w.part == nil {
		if len(arts) != 0 {
			t.Errorf("artifacts %v, want none", arts)
		}
		return
	}
	if len(arts) != 1 {
		t.Fatalf("artifacts %v, want one", arts)
	}
	parts := arts[0].GetParts()
	if _, text := w.part.GetContent().(*a2a.Part_Text); text {
		// A chunked artifact may keep its chunks as separate parts.
		if got, want := a2a.ArtifactText(arts[0]), a2a.FirstText(&a2a.Message{Parts: []*a2a.Part{w.part}}); got != want {
			t.Errorf("artifact text %q, want %q", got, want)
		}
		return
	}
	if len(parts) != 1 || !proto.Equal(parts[0], w.part) {
		t.Errorf("artifact parts %v, want [%v]", parts, w.part)
	}
}

func TestTCKContractThroughCore(t *testing.T) {
	s := newCore(t)
	for prefix, w := range contract(t) {
		t.Run(prefix, func(t *testing.T) {
			resp, err := s.SendMessage(call(t), tckMessage(prefix+session, "", "reject"))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			check(t, resp, w)
		})
	}
}

// TestTCKTextRulesElsewhere: a messageId with none of the kit's prefixes,
// even one starting "tck-", leaves the text rules in charge.
func TestTCKTextRulesElsewhere(t *testing.T) {
	s := newCore(t)
	for _, id := range []string{"tck-dm-test-001" + session, "tck-artifact" + session, "tck" + session, "artifact-text" + session} {
		resp, err := s.SendMessage(call(t), tckMessage(id, "", "message"))
		if err != nil {
			t.Fatalf("%s: SendMessage: %v", id, err)
		}
		if a2a.FirstText(resp.GetMessage()) != "pong" {
			t.Errorf("%s: got %v, want the reply pong of the text rules", id, resp)
		}
		resp, err = s.SendMessage(call(t), tckMessage(id+"-echo", "", "hello"))
		if err != nil {
			t.Fatalf("%s: SendMessage: %v", id, err)
		}
		task := resp.GetTask()
		if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 ||
			task.GetArtifacts()[0].GetArtifactId() != "echo" || a2a.ArtifactText(task.GetArtifacts()[0]) != "hello" {
			t.Errorf("%s: got %v, want the echo of the text rules", id, resp)
		}
	}
}

// TestTCKFollowUps: the kit parks a task with tck-input-required; a
// follow-up with that prefix keeps it waiting, one with tck-complete-task
// completes it, and one without a prefix of the kit's is echoed as before.
func TestTCKFollowUps(t *testing.T) {
	s := newCore(t)
	start := func() string {
		t.Helper()
		resp, err := s.SendMessage(call(t), tckMessage("tck-input-required"+session+"-"+a2a.NewID(), "", "TCK input-required task creation"))
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		if resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("got %v, want INPUT_REQUIRED", resp)
		}
		return resp.GetTask().GetId()
	}
	follow := func(taskID, id, text string) *a2a.Task {
		t.Helper()
		resp, err := s.SendMessage(call(t), tckMessage(id, taskID, text))
		if err != nil {
			t.Fatalf("follow-up %s: %v", id, err)
		}
		if resp.GetTask() == nil {
			t.Fatalf("follow-up %s: got %v, want a task", id, resp)
		}
		return resp.GetTask()
	}

	id := start()
	task := follow(id, "tck-input-required-again"+session, "still waiting?")
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Errorf("after a tck-input-required follow-up: %v, want INPUT_REQUIRED", task.GetStatus())
	}
	task = follow(id, "tck-complete-task"+session, "TCK follow-up completion")
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.FirstText(task.GetStatus().GetMessage()) != "Hello from TCK" {
		t.Errorf("after a tck-complete-task follow-up: %v, want COMPLETED with Hello from TCK", task.GetStatus())
	}

	id = start()
	task = follow(id, a2a.NewID(), "the answer")
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 ||
		a2a.ArtifactText(task.GetArtifacts()[0]) != "the answer" {
		t.Errorf("after a plain follow-up: %v, want COMPLETED echoing the answer", task)
	}
}

// TestTCKDelayedComplete: a non-blocking send returns before the task
// ends, and a cancel ends the wait at once.
func TestTCKDelayedComplete(t *testing.T) {
	s := newCore(t)
	req := tckMessage("tck-delayed-complete"+session, "", "Non-blocking request")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	resp, err := s.SendMessage(call(t), req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := resp.GetTask()
	if task == nil || a2a.IsTerminal(task.GetStatus().GetState()) {
		t.Fatalf("got %v, want an unfinished task", resp)
	}
	began := time.Now()
	canceled, err := s.CancelTask(call(t), &a2a.CancelTaskRequest{Id: task.GetId()})
	if err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Errorf("after cancel: %v, want CANCELED", canceled.GetStatus())
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
}

// TestTCKDelayedCompleteBlocking: a blocking send waits for the end.
func TestTCKDelayedCompleteBlocking(t *testing.T) {
	if testing.Short() {
		t.Skip("waits two seconds")
	}
	s := newCore(t)
	resp, err := s.SendMessage(call(t), tckMessage("tck-delayed-complete"+session, "", "Blocking request"))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	check(t, resp, want{state: a2a.TaskState_TASK_STATE_COMPLETED, status: "Done after delay"})
}

// TestTCKOverTheWire sends the contract's messages through Parley's client
// on each binding: blocking sends see the same results as the core gives,
// and streams carry the events the kit's streaming tests look for.
func TestTCKOverTheWire(t *testing.T) {
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true})
	for _, iface := range srv.Card.GetSupportedInterfaces() {
		if iface.GetProtocolVersion() != a2a.ProtocolVersion {
			continue // the kit's contract is v1.0 (the v0.3 twins are tested in v03/)
		}
		t.Run(iface.GetProtocolBinding(), func(t *testing.T) {
			card := proto.Clone(srv.Card).(*a2a.AgentCard)
			card.SupportedInterfaces = []*a2a.AgentInterface{iface}
			c, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient()})
			if err != nil {
				t.Fatalf("client.New: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			for prefix, w := range contract(t) {
				id := prefix + session + "-" + iface.GetProtocolBinding()
				resp, err := c.SendMessage(ctx, tckMessage(id, "", "hello"))
				if err != nil {
					t.Fatalf("%s: SendMessage: %v", prefix, err)
				}
				t.Run(prefix, func(t *testing.T) { check(t, resp, w) })
			}

			evs, err := testkit.Collect(c.SendStreamingMessage(ctx, tckMessage("tck-stream-artifact-chunked"+session+"-s-"+iface.GetProtocolBinding(), "", "hello")))
			if err != nil {
				t.Fatalf("chunked stream: %v", err)
			}
			kinds := testkit.Kinds(evs)
			wantKinds := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:chunk-1 ", "artifact:chunk-2", "status:TASK_STATE_COMPLETED"}
			if !slices.Equal(kinds, wantKinds) {
				t.Fatalf("chunked stream %q, want %q", kinds, wantKinds)
			}
			first, last := evs[2].Response.GetArtifactUpdate(), evs[3].Response.GetArtifactUpdate()
			if first.GetAppend() || first.GetLastChunk() || !last.GetAppend() || !last.GetLastChunk() ||
				first.GetArtifact().GetArtifactId() != last.GetArtifact().GetArtifactId() {
				t.Errorf("chunks %v then %v: want one artifact, started then appended as its last chunk", first, last)
			}

			evs, err = testkit.Collect(c.SendStreamingMessage(ctx, tckMessage("tck-message-response"+session+"-s-"+iface.GetProtocolBinding(), "", "hello")))
			if err != nil {
				t.Fatalf("message stream: %v", err)
			}
			if kinds := testkit.Kinds(evs); !slices.Equal(kinds, []string{"message:Direct message response"}) {
				t.Errorf("message stream %q, want one message", kinds)
			}
		})
	}
}
