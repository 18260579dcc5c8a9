package a2ahttp_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// gatedAgent emits WORKING and five chunks, waits for release, then two
// more chunks and COMPLETED: events 1 (the Task) to 10, with a pause after
// event 7 in which a resumed stream must switch from the log to live events.
type gatedAgent struct{ release chan struct{} }

func (g gatedAgent) Execute(ctx context.Context, _ *server.Request, em *server.Emitter) error {
	if err := em.StatusText(a2a.TaskState_TASK_STATE_WORKING, ""); err != nil {
		return err
	}
	chunk := func(i int) error {
		return em.Chunk(&a2a.Artifact{ArtifactId: "out", Parts: []*a2a.Part{a2a.TextPart(fmt.Sprintf("chunk %d", i))}}, i > 0, i == 6)
	}
	for i := range 5 {
		if err := chunk(i); err != nil {
			return err
		}
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	for i := 5; i < 7; i++ {
		if err := chunk(i); err != nil {
			return err
		}
	}
	return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "")
}

// scopeAll is the one task scope of a server without authentication.
var scopeAll = taskstore.Scope{}

// startWithStore starts agent on a memory store the test can reach.
func startWithStore(t *testing.T, agent server.Agent) *env {
	t.Helper()
	st := memstore.New()
	s := testkit.StartServer(t, &testkit.Options{Agent: agent, Store: st, Quiet: true})
	return &env{t: t, url: s.URL, srv: s.Core, card: s.Card, store: st}
}

// startGated starts a task of a gatedAgent without waiting for it and
// returns its id once event 7 is recorded.
func startGated(t *testing.T, e *env) string {
	t.Helper()
	r := mustOK(t, e.call(jsonRPC, "SendMessage", `{"message":{"messageId":"`+a2a.NewID()+
		`","role":"ROLE_USER","parts":[{"text":"go"}]},"configuration":{"returnImmediately":true}}`))
	id := str(r.value, "task", "id")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if seq, _ := e.store.LastSeq(context.Background(), scopeAll, id); seq >= 7 {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not reach event 7")
		}
	}
}

// ids returns the SSE ids of events, and fails on an error event.
func ids(t *testing.T, r result) []int {
	t.Helper()
	if r.err != nil {
		t.Fatalf("stream error: %+v", r.err)
	}
	var out []int
	for _, ev := range r.events {
		n, err := strconv.Atoi(ev.id)
		if err != nil {
			t.Fatalf("event without a numeric id: %+v", ev)
		}
		out = append(out, n)
	}
	return out
}

func seqRange(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// resumeForms are the three HTTP ways of calling SubscribeToTask.
var resumeForms = []struct {
	name, binding, verb string
}{{"JSONRPC", jsonRPC, ""}, {"REST-GET", restB, "GET"}, {"REST-POST", restB, "POST"}}

// TestResumeLastEventID: SubscribeToTask with Last-Event-ID sends exactly
// the events after it from the log, then live ones, with no gap, duplicate
// or snapshot; a task that ended meanwhile is caught up, not refused.
func TestResumeLastEventID(t *testing.T) {
	for _, f := range resumeForms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			e := startWithStore(t, gatedAgent{release})
			id := startGated(t, e)
			sub := func(last string) result {
				return e.call(f.binding, "SubscribeToTask", `{"id":"`+id+`"}`,
					callOpts{restVerb: f.verb, headers: map[string]string{"Last-Event-ID": last}})
			}
			done := make(chan result, 1)
			go func() { done <- sub("3") }()
			time.Sleep(50 * time.Millisecond) // usually subscribed by now; the log covers it if not
			close(release)
			r := <-done
			if got, want := ids(t, r), seqRange(4, 10); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
			if get(r.events[0].data, "artifactUpdate") == nil || str(r.events[6].data, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
				t.Fatalf("events = %v", r.events)
			}
			// The task has ended: a resume catches up, a fresh subscribe is refused.
			if got := ids(t, sub("8")); fmt.Sprint(got) != "[9 10]" {
				t.Fatalf("after the end, Last-Event-ID 8 gave ids %v, want [9 10]", got)
			}
			if r := sub("10"); r.status != 200 || len(r.events) != 0 || r.err != nil {
				t.Fatalf("Last-Event-ID of the terminal event: status %d, %d events, err %+v; want an empty stream", r.status, len(r.events), r.err)
			}
			mustErr(t, e.call(f.binding, "SubscribeToTask", `{"id":"`+id+`"}`, callOpts{restVerb: f.verb}), a2a.CodeUnsupportedOperation)
		})
	}
}

// TestResumeBadLastEventID: a Last-Event-ID that is not a number, is zero
// or is after the task's last event is InvalidParams naming the header
// (HTTP 400 on REST); nothing else about the task changes.
func TestResumeBadLastEventID(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e := startWithStore(t, gatedAgent{release})
	id := startGated(t, e)
	for _, f := range resumeForms {
		for _, bad := range []string{"abc", "0", "8", "-1", "1.5", "99999999999999999999999"} {
			r := e.call(f.binding, "SubscribeToTask", `{"id":"`+id+`"}`,
				callOpts{restVerb: f.verb, headers: map[string]string{"Last-Event-ID": bad}})
			w := mustErr(t, r, a2a.CodeInvalidParams)
			if f.binding == restB && r.status != 400 {
				t.Errorf("%s Last-Event-ID %q: HTTP %d, want 400", f.name, bad, r.status)
			}
			if len(w.fields) != 1 || w.fields[0] != "Last-Event-ID" {
				t.Errorf("%s Last-Event-ID %q: field violations %v, want [Last-Event-ID]", f.name, bad, w.fields)
			}
		}
	}
	// Unknown task: TaskNotFound, whatever the header.
	mustErr(t, e.call(jsonRPC, "SubscribeToTask", `{"id":"nope"}`, callOpts{headers: map[string]string{"Last-Event-ID": "1"}}), a2a.CodeTaskNotFound)
}

// TestResumePruned: when the events after Last-Event-ID were pruned (the
// resume window passed), the stream starts with a Task snapshot numbered
// with the last event it reflects, then goes on live.
func TestResumePruned(t *testing.T) {
	release := make(chan struct{})
	e := startWithStore(t, gatedAgent{release})
	id := startGated(t, e)
	if _, err := e.store.PruneEvents(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	close(release)
	r := e.call(restB, "SubscribeToTask", `{"id":"`+id+`"}`, callOpts{headers: map[string]string{"Last-Event-ID": "2"}})
	got := ids(t, r)
	if len(got) == 0 || get(r.events[0].data, "task") == nil {
		t.Fatalf("first event %v, want a Task snapshot", r.events)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("ids %v are not consecutive after the snapshot", got)
		}
	}
	if got[len(got)-1] != 10 {
		t.Fatalf("ids %v do not end with the terminal event 10", got)
	}
}

// TestResumeGRPC: the last-event-id request metadata resumes a gRPC stream;
// the first-event-id response header numbers its events.
func TestResumeGRPC(t *testing.T) {
	release := make(chan struct{})
	e := startWithStore(t, gatedAgent{release})
	id := startGated(t, e)
	close(release)
	c := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), e.url, connect.WithGRPC())
	sub := func(last string) (first string, evs []*a2a.StreamResponse, err error) {
		req := connect.NewRequest(&a2a.SubscribeToTaskRequest{Id: id})
		req.Header().Set("A2A-Version", "1.0")
		req.Header().Set("last-event-id", last)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := c.SubscribeToTask(ctx, req)
		if err != nil {
			return "", nil, err
		}
		defer s.Close()
		for s.Receive() {
			evs = append(evs, s.Msg())
		}
		return s.ResponseHeader().Get("first-event-id"), evs, s.Err()
	}
	first, evs, err := sub("5")
	if err != nil || first != "6" || len(evs) != 5 || evs[4].GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("resume after 5: first-event-id %q, %d events, err %v; want 6, 5 events ending COMPLETED", first, len(evs), err)
	}
	if _, evs, err := sub("10"); err != nil || len(evs) != 0 {
		t.Fatalf("resume after the terminal event: %d events, err %v; want an empty stream", len(evs), err)
	}
	if _, _, err := sub("x"); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("last-event-id x: %v, want InvalidArgument", err)
	}
}
