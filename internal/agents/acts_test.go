package agents_test

// Tests of ACTS's behaviour contract (the A2A Conformance Test
// Specification, §11.2): every prefix, on the conformance agent and on the
// acts agent, over each v1.0 binding on the real wire, on the memory,
// SQLite and (with PARLEY_TEST_POSTGRES) PostgreSQL stores.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// actsStores opens a store by name, closed when the test ends.
func actsStore(t *testing.T, name string) taskstore.Store {
	var st taskstore.Store
	var err error
	switch name {
	case "memory":
		return memstore.New()
	case "sqlite":
		st, err = sqlitestore.Open(filepath.Join(t.TempDir(), "parley.db"))
	case "postgres":
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		st, err = pgstore.Open(ctx, pgtest.NewDatabase(t), nil)
	}
	if err != nil {
		t.Fatalf("open the %s store: %v", name, err)
	}
	t.Cleanup(func() { st.Close() }) // after the server's own cleanup
	return st
}

// actsDriver talks to one agent through one binding.
type actsDriver struct {
	t   *testing.T
	ctx context.Context
	c   *client.Client
}

// send sends text on taskID ("" for a new task), blocking unless
// immediately is set.
func (d *actsDriver) send(text, taskID string, immediately bool) *a2a.SendMessageResponse {
	d.t.Helper()
	req := tckMessage(a2a.NewID(), taskID, text)
	if immediately {
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}
	resp, err := d.c.SendMessage(d.ctx, req)
	if err != nil {
		d.t.Fatalf("SendMessage(%q): %v", text, err)
	}
	return resp
}

// task sends text as send does and returns the task it answers with,
// checking its state.
func (d *actsDriver) task(text, taskID string, state a2a.TaskState) *a2a.Task {
	d.t.Helper()
	task := d.send(text, taskID, false).GetTask()
	if task == nil {
		d.t.Fatalf("SendMessage(%q): no task", text)
	}
	if got := task.GetStatus().GetState(); got != state {
		d.t.Fatalf("SendMessage(%q): %v, want %v", text, task.GetStatus(), state)
	}
	return task
}

// stream sends text as a streaming message and returns its events, and
// their kinds (testkit.Kinds), once the stream has ended. When the task
// reaches the state cancelAt, stream cancels it from the side.
func (d *actsDriver) stream(text string, cancelAt a2a.TaskState) ([]a2a.StreamEvent, []string) {
	d.t.Helper()
	var evs []a2a.StreamEvent
	for ev, err := range d.c.SendStreamingMessage(d.ctx, tckMessage(a2a.NewID(), "", text)) {
		if err != nil {
			d.t.Fatalf("SendStreamingMessage(%q): %v after %q", text, err, testkit.Kinds(evs))
		}
		evs = append(evs, ev)
		if up := ev.Response.GetStatusUpdate(); cancelAt != 0 && up.GetStatus().GetState() == cancelAt {
			if _, err := d.c.CancelTask(d.ctx, &a2a.CancelTaskRequest{Id: up.GetTaskId()}); err != nil {
				d.t.Fatalf("CancelTask: %v", err)
			}
		}
	}
	return evs, testkit.Kinds(evs)
}

// actsOutcome is what a behaviour that needs no follow-up must give.
type actsOutcome struct {
	state  a2a.TaskState
	status string    // the status message's text ("": none)
	part   *a2a.Part // the one part of the one artifact (nil: no artifact)
	// events are the kinds of the events of a streaming send, which
	// cancels the task when it reaches cancelAt (a stream stays open
	// through AUTH_REQUIRED, decision B2).
	events   []string
	cancelAt a2a.TaskState
}

// actsOutcomes are the behaviours that answer one message with a task.
func actsOutcomes(t *testing.T) map[string]actsOutcome {
	const (
		submitted = "task:TASK_STATE_SUBMITTED"
		working   = "status:TASK_STATE_WORKING"
		completed = "status:TASK_STATE_COMPLETED"
	)
	done := a2a.TaskState_TASK_STATE_COMPLETED
	url := &a2a.Part{Content: &a2a.Part_Url{Url: "https://example.com/output.txt"}, Filename: "output.txt", MediaType: "text/plain"}
	return map[string]actsOutcome{
		"tck-complete-task":  {state: done, status: "Hello from TCK", events: []string{submitted, completed}},
		"tck-input-required": {state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, status: "Input required", events: []string{submitted, "status:TASK_STATE_INPUT_REQUIRED"}},
		"tck-auth-required": {state: a2a.TaskState_TASK_STATE_AUTH_REQUIRED, status: "Authorization required", cancelAt: a2a.TaskState_TASK_STATE_AUTH_REQUIRED,
			events: []string{submitted, "status:TASK_STATE_AUTH_REQUIRED", "status:TASK_STATE_CANCELED"}},
		"tck-reject-task":       {state: a2a.TaskState_TASK_STATE_REJECTED, status: "rejected", events: []string{submitted, "status:TASK_STATE_REJECTED"}},
		"tck-task-failure":      {state: a2a.TaskState_TASK_STATE_FAILED, status: "The task failed, as tck-task-failure asks", events: []string{submitted, "status:TASK_STATE_FAILED"}},
		"tck-artifact-text":     {state: done, part: a2a.TextPart("Generated text content"), events: []string{submitted, "artifact:Generated text content", completed}},
		"tck-artifact-file":     {state: done, part: filePart(), events: []string{submitted, "artifact:", completed}},
		"tck-artifact-file-url": {state: done, part: url, events: []string{submitted, "artifact:", completed}},
		"tck-artifact-data":     {state: done, part: dataPart(t), events: []string{submitted, "artifact:", completed}},
		"tck-stream-basic":      {state: done, part: a2a.TextPart("Streamed content"), events: []string{submitted, working, "artifact:Streamed content", completed}},
		"tck-stream-chunked":    {state: done, part: a2a.TextPart("chunk-1 chunk-2"), events: []string{submitted, working, "artifact:chunk-1 ", "artifact:chunk-2", completed}},
	}
}

// checkOutcome sends text blocking and streaming and compares both with w.
func checkOutcome(d *actsDriver, text string, w actsOutcome) {
	t := d.t
	task := d.task(text, "", w.state)
	if got := a2a.FirstText(task.GetStatus().GetMessage()); got != w.status {
		t.Errorf("status message %q, want %q", got, w.status)
	}
	arts := task.GetArtifacts()
	switch {
	case w.part == nil && len(arts) != 0:
		t.Errorf("artifacts %v, want none", arts)
	case w.part == nil:
	case len(arts) != 1:
		t.Errorf("artifacts %v, want one", arts)
	case w.part.GetText() != "":
		if got := a2a.ArtifactText(arts[0]); got != w.part.GetText() {
			t.Errorf("artifact text %q, want %q", got, w.part.GetText())
		}
	case len(arts[0].GetParts()) != 1 || !proto.Equal(arts[0].GetParts()[0], w.part):
		t.Errorf("artifact parts %v, want [%v]", arts[0].GetParts(), w.part)
	}
	evs, kinds := d.stream(text, w.cancelAt)
	if !slices.Equal(kinds, w.events) {
		t.Fatalf("stream %q, want %q", kinds, w.events)
	}
	var ids []string
	for _, ev := range evs {
		if up := ev.Response.GetArtifactUpdate(); up != nil {
			ids = append(ids, up.GetArtifact().GetArtifactId())
			if len(ids) > 1 && !up.GetAppend() {
				t.Errorf("chunk %d of the artifact does not append", len(ids))
			}
		}
	}
	if len(ids) > 0 && len(slices.Compact(slices.Clone(ids))) != 1 {
		t.Errorf("artifact ids %q, want one artifact", ids)
	}
	if len(ids) > 0 && !evs[len(evs)-2].Response.GetArtifactUpdate().GetLastChunk() {
		t.Errorf("the last chunk is not marked lastChunk")
	}
}

// actsScenarios are the behaviours that need more than one message, a
// cancel or a wait, each driven as an ACTS test drives it.
var actsScenarios = map[string]func(d *actsDriver){
	"tck-message-response": func(d *actsDriver) {
		resp := d.send("tck-message-response hello", "", false)
		if m := resp.GetMessage(); m == nil || m.GetRole() != a2a.Role_ROLE_AGENT || a2a.FirstText(m) == "" {
			d.t.Errorf("got %v, want a direct agent message", resp)
		}
		if _, kinds := d.stream("tck-message-response streaming", 0); len(kinds) != 1 || !strings.HasPrefix(kinds[0], "message:") {
			d.t.Errorf("stream %q, want one message", kinds)
		}
	},
	"tck-input-required": func(d *actsDriver) {
		task := d.task("tck-input-required please", "", a2a.TaskState_TASK_STATE_INPUT_REQUIRED)
		d.task("here is the input", task.GetId(), a2a.TaskState_TASK_STATE_INPUT_REQUIRED)
	},
	"tck-multi-turn": func(d *actsDriver) {
		const ir = a2a.TaskState_TASK_STATE_INPUT_REQUIRED
		task := d.task("  tck-multi-turn start conversation", "", ir)
		d.task("here is more input", task.GetId(), ir)
		d.task("tck-multi-turn second", task.GetId(), ir)
		d.task("not done yet", task.GetId(), ir)
		end := d.task("Done", task.GetId(), a2a.TaskState_TASK_STATE_COMPLETED)
		if end.GetId() != task.GetId() || end.GetContextId() != task.GetContextId() {
			d.t.Errorf("the last turn answered task %s in %s, want %s in %s", end.GetId(), end.GetContextId(), task.GetId(), task.GetContextId())
		}
		// The history holds the user's turns in order, then the answer.
		var history []string
		for _, m := range end.GetHistory() {
			history = append(history, m.GetRole().String()+" "+a2a.FirstText(m))
		}
		want := []string{"ROLE_USER   tck-multi-turn start conversation", "ROLE_USER here is more input", "ROLE_USER tck-multi-turn second",
			"ROLE_USER not done yet", "ROLE_USER Done", "ROLE_AGENT Conversation complete"}
		if !slices.Equal(history, want) {
			d.t.Errorf("history %q, want %q", history, want)
		}
		if _, kinds := d.stream("tck-multi-turn streaming", 0); !slices.Equal(kinds, []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_INPUT_REQUIRED"}) {
			d.t.Errorf("stream %q, want the task parked in INPUT_REQUIRED", kinds)
		}
	},
	"tck-long-running": func(d *actsDriver) {
		task := d.send("tck-long-running start", "", true).GetTask()
		if task == nil || a2a.IsTerminal(task.GetStatus().GetState()) {
			d.t.Fatalf("got %v, want an unfinished task", task)
		}
		for state := task.GetStatus().GetState(); state != a2a.TaskState_TASK_STATE_WORKING; {
			seen, err := d.c.GetTask(d.ctx, &a2a.GetTaskRequest{Id: task.GetId()})
			if state = seen.GetStatus().GetState(); err != nil || state != a2a.TaskState_TASK_STATE_SUBMITTED && state != a2a.TaskState_TASK_STATE_WORKING {
				d.t.Fatalf("GetTask = %v, %v; want SUBMITTED until WORKING", seen.GetStatus(), err)
			}
		}
		evs, err := testkit.Collect(d.c.SubscribeToTask(d.ctx, &a2a.SubscribeToTaskRequest{Id: task.GetId()}))
		if err != nil {
			d.t.Fatalf("SubscribeToTask: %v", err)
		}
		kinds := testkit.Kinds(evs)
		if len(kinds) < 3 || kinds[0] != "task:TASK_STATE_WORKING" || kinds[len(kinds)-2] != "artifact:Long-running work done" ||
			kinds[len(kinds)-1] != "status:TASK_STATE_COMPLETED" {
			d.t.Errorf("subscription %q, want the task WORKING, ..., the artifact, COMPLETED", kinds)
		}
		end, err := d.c.GetTask(d.ctx, &a2a.GetTaskRequest{Id: task.GetId()})
		if err != nil || end.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(end.GetArtifacts()) != 1 {
			d.t.Errorf("GetTask = %v, %v; want COMPLETED with one artifact", end, err)
		}
	},
	"tck-cancel": func(d *actsDriver) {
		task := d.send("tck-cancel start", "", true).GetTask()
		if task == nil || a2a.IsTerminal(task.GetStatus().GetState()) {
			d.t.Fatalf("got %v, want an unfinished task", task)
		}
		canceled, err := d.c.CancelTask(d.ctx, &a2a.CancelTaskRequest{Id: task.GetId()})
		if err != nil || canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
			d.t.Fatalf("CancelTask = %v, %v; want CANCELED", canceled, err)
		}
		// Streaming: it stays WORKING until canceled from the side.
		_, kinds := d.stream("tck-cancel streaming", a2a.TaskState_TASK_STATE_WORKING)
		if !slices.Equal(kinds, []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_CANCELED"}) {
			d.t.Errorf("stream %q, want WORKING until CANCELED", kinds)
		}
	},
}

// TestACTSContract: every prefix of the contract behaves as the table on
// Conformance says, on both agents, every binding and store.
func TestACTSContract(t *testing.T) {
	t.Parallel()
	outcomes := actsOutcomes(t)
	var prefixes []string
	for p := range outcomes {
		prefixes = append(prefixes, p)
	}
	for p := range actsScenarios {
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	if len(prefixes) != 15 {
		t.Fatalf("the tests cover %d prefixes %q, want the 14 of §11.2 and tck-auth-required", len(prefixes), prefixes)
	}
	for _, store := range []string{"memory", "sqlite", "postgres"} {
		for _, kind := range []string{"conformance", "acts"} {
			t.Run(store+"/"+kind, func(t *testing.T) {
				t.Parallel()
				srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Kind: kind, Store: actsStore(t, store)})
				eachBinding(t, srv, func(d *actsDriver) {
					for _, p := range prefixes {
						d.t.Run(p, func(t *testing.T) {
							d := &actsDriver{t: t, ctx: d.ctx, c: d.c}
							if w, ok := outcomes[p]; ok {
								checkOutcome(d, p+" from the test", w)
							}
							if run, ok := actsScenarios[p]; ok {
								run(d)
							}
						})
					}
				})
			})
		}
	}
}

// eachBinding runs test with a client of each v1.0 interface of srv.
func eachBinding(t *testing.T, srv *testkit.Server, test func(d *actsDriver)) {
	for _, iface := range srv.Card.GetSupportedInterfaces() {
		if iface.GetProtocolVersion() != a2a.ProtocolVersion {
			continue
		}
		t.Run(iface.GetProtocolBinding(), func(t *testing.T) {
			card := proto.Clone(srv.Card).(*a2a.AgentCard)
			card.SupportedInterfaces = []*a2a.AgentInterface{iface}
			c, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient()})
			if err != nil {
				t.Fatalf("client.New: %v", err)
			}
			t.Cleanup(func() { c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 3*guard)
			defer cancel()
			test(&actsDriver{t: t, ctx: ctx, c: c})
		})
	}
}

// TestACTSAgentSpeaksOnlyACTS: the acts agent rejects what names no
// behaviour of the contract (the conformance agent's words, the kit's
// messageIds, an unknown tck- prefix), while the conformance agent still
// answers its words, and echoes an unknown tck- prefix.
func TestACTSAgentSpeaksOnlyACTS(t *testing.T) {
	t.Parallel()
	words := []string{"hello", "message", "input-required", "auth-required", "reject", "fail", "stream 5",
		"stream 3 every 10", "slow 10", "append-unknown", "tck-unknown-behaviour", "tck", " done"}
	acts := testkit.StartServer(t, &testkit.Options{Quiet: true, Kind: "acts"})
	conf := testkit.StartServer(t, &testkit.Options{Quiet: true})
	eachBinding(t, acts, func(d *actsDriver) {
		for _, text := range words {
			task := d.task(text, "", a2a.TaskState_TASK_STATE_REJECTED)
			if msg := a2a.FirstText(task.GetStatus().GetMessage()); !strings.Contains(msg, "tck-multi-turn") || len(task.GetArtifacts()) != 0 {
				t.Errorf("%q: status message %q and artifacts %v, want the list of prefixes and none", text, msg, task.GetArtifacts())
			}
		}
		// The kit's messageId prefixes mean nothing to it either.
		resp, err := d.c.SendMessage(d.ctx, tckMessage("tck-message-response"+session, "", "hello"))
		if err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_REJECTED {
			t.Errorf("a kit's messageId: %v, %v; want REJECTED", resp, err)
		}
	})
	eachBinding(t, conf, func(d *actsDriver) {
		if reply := d.send("message", "", false).GetMessage(); a2a.FirstText(reply) != "pong" {
			t.Errorf("message: %v, want pong", reply)
		}
		task := d.task("stream 3", "", a2a.TaskState_TASK_STATE_COMPLETED)
		if arts := task.GetArtifacts(); len(arts) != 1 || a2a.ArtifactText(arts[0]) != "chunk 0chunk 1chunk 2" {
			t.Errorf("stream 3: %v, want three chunks", arts)
		}
		for _, text := range []string{"tck-unknown-behaviour", "tck"} {
			task := d.task(text, "", a2a.TaskState_TASK_STATE_COMPLETED)
			if arts := task.GetArtifacts(); len(arts) != 1 || a2a.ArtifactText(arts[0]) != text {
				t.Errorf("%q: %v, want the echo", text, arts)
			}
		}
		// A task the conformance agent's words parked follows its words,
		// not ACTS's: the follow-up is echoed.
		ir := d.task("input-required", "", a2a.TaskState_TASK_STATE_INPUT_REQUIRED)
		end := d.task("done", ir.GetId(), a2a.TaskState_TASK_STATE_COMPLETED)
		if arts := end.GetArtifacts(); len(arts) != 1 || a2a.ArtifactText(arts[0]) != "done" {
			t.Errorf("follow-up of input-required: %v, want the echo of done", arts)
		}
	})
	if got := fmt.Sprint(acts.Card.GetName(), " ", acts.Card.GetCapabilities().GetStreaming()); got != "Parley ACTS agent true" {
		t.Errorf("the acts card: %s, want Parley ACTS agent with streaming", got)
	}
}
