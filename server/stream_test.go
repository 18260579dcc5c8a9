package server_test

// Streams (docs/decisions.md#b2): how SendStreamingMessage and
// SubscribeToTask start, order their events, and end; slow readers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

func TestSendStreamingMessage(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"stream 3", []string{"task:SUBMITTED", "status:WORKING",
			"artifact:stream:chunk 0:append=false:last=false", "artifact:stream:chunk 1:append=true:last=false",
			"artifact:stream:chunk 2:append=true:last=true", "status:COMPLETED"}},
		{"hello", []string{"task:SUBMITTED", "status:WORKING", "artifact:echo:hello:append=false:last=true", "status:COMPLETED"}},
		{"fail", []string{"task:SUBMITTED", "status:FAILED"}},
		{"reject", []string{"task:SUBMITTED", "status:REJECTED"}},
		{"input-required", []string{"task:SUBMITTED", "status:INPUT_REQUIRED"}},
		{"message", []string{"message:pong"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			ctx := shortCtx(t, "")
			evs, err := testkit.Collect(s.SendStreamingMessage(ctx, msgReq(tc.text)))
			if err != nil || ctx.Err() != nil {
				t.Fatalf("stream ended with %v (ctx %v) after %v", err, ctx.Err(), describeAll(evs))
			}
			if got := describeAll(evs); !slices.Equal(got, tc.want) {
				t.Errorf("events = %v\nwant %v", got, tc.want)
			}
			if tc.text == "message" {
				if evs[0].Seq != 0 {
					t.Errorf("a direct reply has seq %d, want 0", evs[0].Seq)
				}
				return
			}
			if evs[0].Seq != 1 {
				t.Errorf("first event has seq %d, want 1", evs[0].Seq)
			}
			checkSeq(t, evs)
			task := evs[0].Response.GetTask()
			for _, ev := range evs[1:] {
				su, au := ev.Response.GetStatusUpdate(), ev.Response.GetArtifactUpdate()
				if (su != nil && (su.TaskId != task.Id || su.ContextId != task.ContextId)) || (au != nil && (au.TaskId != task.Id || au.ContextId != task.ContextId)) {
					t.Errorf("event %s carries other ids than task %s/%s", describe(ev), task.Id, task.ContextId)
				}
			}
			// The stream's end is the task's state.
			got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
			if last := describe(evs[len(evs)-1]); last != "status:"+short(state(got)) {
				t.Errorf("last event %s, stored state %s", last, short(state(got)))
			}
		})
	}
}

// TestStreamStaysOpenThroughAuthRequired: the stream closes after
// INPUT_REQUIRED but not after AUTH_REQUIRED (docs/decisions.md#b2).
func TestStreamStaysOpenThroughAuthRequired(t *testing.T) {
	t.Parallel()
	authorized := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.StatusText(a2a.TaskState_TASK_STATE_AUTH_REQUIRED, "sign in at https://idp.example/"); err != nil {
			return err
		}
		em.Detach()
		go func() {
			select {
			case <-authorized:
			case <-ctx.Done():
				return
			}
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				t.Error(err)
			}
			if err := em.Artifact(a2a.TextArtifact("secret", "the protected data")); err != nil {
				t.Error(err)
			}
			if err := em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil); err != nil {
				t.Error(err)
			}
		}()
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	ctx := shortCtx(t, "")
	var evs []a2a.StreamEvent
	for ev, err := range s.SendStreamingMessage(ctx, msgReq("get the data")) {
		if err != nil {
			t.Fatalf("stream error after %v: %v", describeAll(evs), err)
		}
		evs = append(evs, ev)
		if describe(ev) == "status:AUTH_REQUIRED" {
			close(authorized) // the user signs in out of band
		}
	}
	want := []string{"task:SUBMITTED", "status:AUTH_REQUIRED", "status:WORKING", "artifact:secret:the protected data:append=false:last=true", "status:COMPLETED"}
	if got := describeAll(evs); !slices.Equal(got, want) || ctx.Err() != nil {
		t.Errorf("events = %v (ctx %v)\nwant %v", got, ctx.Err(), want)
	}
	checkSeq(t, evs)
}

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	const chunks = 10
	goAhead := make(chan struct{})
	s := newServer(t, server.Options{Agent: stepsAgent(goAhead, chunks)})
	task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("steps"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))

	const full = 4
	results := subscribeMany(t, s, task.Id, full+1, func() { close(goAhead) })

	want := []string{"task:WORKING"}
	for i := range chunks {
		want = append(want, fmt.Sprintf("artifact:s:%d:append=%t:last=%t", i, i > 0, i == chunks-1))
	}
	want = append(want, "status:COMPLETED")
	for i := range full {
		r := results[i]
		if got := describeAll(r.evs); r.err != nil || !slices.Equal(got, want) {
			t.Errorf("subscriber %d: %v, %v\nwant %v", i, got, r.err, want)
			continue
		}
		checkSeq(t, r.evs)
		if !slices.Equal(seqs(r.evs), seqs(results[0].evs)) {
			t.Errorf("subscriber %d seqs %v, subscriber 0 %v", i, seqs(r.evs), seqs(results[0].evs))
		}
		for j := range r.evs {
			if !proto.Equal(r.evs[j].Response, results[0].evs[j].Response) {
				t.Errorf("subscriber %d event %d differs from subscriber 0's", i, j)
			}
		}
	}
	if q := results[full]; q.err != nil || len(q.evs) != 2 {
		t.Errorf("the early leaver got %v, %v", describeAll(q.evs), q.err)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_COMPLETED || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != chunks {
		t.Errorf("task = %s with %v", short(state(got)), got.Artifacts)
	}

	t.Run("terminal task refused", func(t *testing.T) { subscribeToTerminalTasks(t, s, task) })
	t.Run("unknown task", func(t *testing.T) {
		_, err := testkit.Collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: "no-such-task"}))
		wantErr(t, "SubscribeToTask", err, a2a.ErrTaskNotFound)
		_, err = testkit.Collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{}))
		wantErr(t, "SubscribeToTask without id", err, a2a.ErrInvalidParams)
	})
	t.Run("open through input-required", func(t *testing.T) { subscribeThroughInputRequired(t, s) })
}

// stepsAgent answers "steps" with WORKING, waits for goAhead, then emits
// an artifact in chunks and COMPLETED. Follow-ups and other messages go to
// the conformance agent.
func stepsAgent(goAhead <-chan struct{}, chunks int) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			return agents.Conformance().Execute(ctx, req, em)
		}
		if a2a.FirstText(req.Message) != "steps" {
			return agents.Conformance().Execute(ctx, req, em)
		}
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-goAhead:
		case <-ctx.Done():
			return nil
		}
		for i := range chunks {
			if err := em.Chunk(a2a.TextArtifact("s", fmt.Sprint(i)), i > 0, i == chunks-1); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// subscription is what one reader of a stream got: its events, and the
// error that ended it.
type subscription struct {
	evs []a2a.StreamEvent
	err error
}

// subscribeMany has n readers subscribe to a task at once, calls started
// once every one has its snapshot, and returns what each read. The last
// reader leaves after two events.
func subscribeMany(t *testing.T, s a2a.Service, id string, n int, started func()) []subscription {
	var subscribed, done sync.WaitGroup
	results := make([]subscription, n)
	for i := range n {
		subscribed.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: id}) {
				if err != nil {
					results[i].err = err
					break
				}
				results[i].evs = append(results[i].evs, ev)
				if len(results[i].evs) == 1 {
					subscribed.Done()
				}
				if i == n-1 && len(results[i].evs) == 2 {
					break // this one leaves early
				}
			}
		}()
	}
	subscribed.Wait()
	started()
	done.Wait()
	return results
}

// subscribeToTerminalTasks: a terminal task, the finished one included, is
// refused with UnsupportedOperationError.
func subscribeToTerminalTasks(t *testing.T, s a2a.Service, finished *a2a.Task) {
	for _, text := range []string{"hello", "fail", "reject"} {
		done := sendTask(t, s, anon(t), text)
		evs, err := testkit.Collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: done.Id}))
		if len(evs) != 0 || !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Errorf("subscribe to a %s task: %v, %v; want UnsupportedOperationError", short(state(done)), describeAll(evs), err)
		}
	}
	evs, err := testkit.Collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: finished.Id}))
	if len(evs) != 0 || !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("subscribe to the completed task: %v, %v", describeAll(evs), err)
	}
}

// subscribeThroughInputRequired: a subscription closes only at a terminal
// state, so it sees the follow-up's execution through to COMPLETED.
func subscribeThroughInputRequired(t *testing.T, s a2a.Service) {
	parked := sendTask(t, s, anon(t), "input-required")
	ctx := shortCtx(t, "")
	var evs []a2a.StreamEvent
	var err error
	for ev, e := range s.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: parked.Id}) {
		if e != nil {
			err = e
			break
		}
		evs = append(evs, ev)
		if len(evs) == 1 {
			if _, e := followUp(t, s, "", followReq(parked.Id, "answer")); e != nil {
				t.Fatal(e)
			}
		}
	}
	want := []string{"task:INPUT_REQUIRED", "status:WORKING", "artifact:echo:answer:append=false:last=true", "status:COMPLETED"}
	if got := describeAll(evs); err != nil || ctx.Err() != nil || !slices.Equal(got, want) {
		t.Errorf("subscription = %v, %v (ctx %v)\nwant %v", got, err, ctx.Err(), want)
	}
}

// TestSlowSubscriber: a reader that stalls while the task runs on is not
// cut off: once it reads again it gets every event it missed from the
// task's log, in order and once each, as the reader that kept up does; the
// agent is never held back by the slow one.
func TestSlowSubscriber(t *testing.T) {
	t.Parallel()
	const events = 40
	goAhead, agentDone := make(chan struct{}), make(chan struct{})
	ack := make(chan struct{})
	s := newServer(t, server.Options{Agent: pacedAgent(events, goAhead, agentDone, ack), SubscriberBuffer: 4})
	task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("go"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))

	fastReady, slowReady, unblockSlow := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var fast, slow subscription
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fast = readAcking(t, s, task.Id, fastReady, ack)
	}()
	go func() {
		defer wg.Done()
		slow = readThenStall(t, s, task.Id, slowReady, unblockSlow)
	}()
	<-fastReady
	<-slowReady
	close(goAhead)
	finished := within(t, agentDone, "the agent to finish while a reader is stuck")
	close(unblockSlow)
	wg.Wait()
	if !finished {
		return
	}

	fastEvs, fastErr, slowEvs, slowErr := fast.evs, fast.err, slow.evs, slow.err
	if fastErr != nil || len(fastEvs) != events+2 || describe(fastEvs[len(fastEvs)-1]) != "status:COMPLETED" {
		t.Errorf("fast reader: %d events ending %v, err %v; want all %d", len(fastEvs), describe(fastEvs[len(fastEvs)-1]), fastErr, events+2)
	}
	checkSeq(t, fastEvs)
	if slowErr != nil || len(slowEvs) != events+2 || describe(slowEvs[len(slowEvs)-1]) != "status:COMPLETED" {
		t.Errorf("slow reader: %d events ending %v, err %v; want all %d", len(slowEvs), describe(slowEvs[len(slowEvs)-1]), slowErr, events+2)
	}
	checkSeq(t, slowEvs)
	if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); state(got) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("task is %s", short(state(got)))
	}
}

// pacedAgent goes WORKING, waits for goAhead, then emits events artifact
// chunks, each after the previous one was acknowledged on ack, and
// completes; it closes agentDone when it returns.
func pacedAgent(events int, goAhead, agentDone chan struct{}, ack <-chan struct{}) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		defer close(agentDone)
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-goAhead:
		case <-ctx.Done():
			return nil
		}
		for i := range events {
			if err := em.Chunk(a2a.TextArtifact("s", fmt.Sprint(i)), i > 0, false); err != nil {
				return err
			}
			// Pace on the fast reader only, so it never falls behind.
			select {
			case <-ack:
			case <-ctx.Done():
				return nil
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// readAcking subscribes to a task, closes ready after the snapshot, and
// acknowledges every artifact update on ack.
func readAcking(t *testing.T, s a2a.Service, id string, ready chan struct{}, ack chan<- struct{}) (out subscription) {
	for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: id}) {
		if err != nil {
			out.err = err
			return out
		}
		out.evs = append(out.evs, ev)
		if len(out.evs) == 1 {
			close(ready)
			continue
		}
		if ev.Response.GetArtifactUpdate() != nil {
			ack <- struct{}{}
		}
	}
	return out
}

// readThenStall subscribes to a task, closes ready after the snapshot, and
// stops reading until resume is closed.
func readThenStall(t *testing.T, s a2a.Service, id string, ready, resume chan struct{}) (out subscription) {
	for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: id}) {
		if err != nil {
			out.err = err
			return out
		}
		out.evs = append(out.evs, ev)
		if len(out.evs) == 1 {
			close(ready)
			<-resume
		}
	}
	return out
}

// TestSeqContinuesAcrossExecutions: StreamEvent.Seq is 1 for the first
// event a task ever produced, then increases by one, across executions:
// the events of a follow-up continue the numbering even after the core let
// go of the task's in-memory state in between. The follow-up's message
// takes the number after the first stream's last event (its timeline
// entry, which no stream is sent): the follow-up's snapshot has it.
func TestSeqContinuesAcrossExecutions(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	first, err := testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq("input-required")))
	if err != nil || len(first) != 2 {
		t.Fatalf("first stream: %v, %v", describeAll(first), err)
	}
	last := first[len(first)-1].Seq
	id := first[0].Response.GetTask().GetId()
	settle(t, s, "", id)
	var evs []a2a.StreamEvent
	for range 10000 {
		evs, err = testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), followReq(id, "answer")))
		if !stillWorking(err) {
			break
		}
	}
	if err != nil || len(evs) != 4 {
		t.Fatalf("follow-up stream: %v, %v", describeAll(evs), err)
	}
	if snap := evs[0].Seq; snap != 0 && snap != last+1 {
		t.Errorf("follow-up snapshot seq %d; want %d (or 0, unknown)", snap, last+1)
	}
	for i, ev := range evs[1:] {
		if want := last + 2 + uint64(i); ev.Seq != want {
			t.Errorf("follow-up event %s has seq %d, want %d (first stream: %v, follow-up: %v)", describe(ev), ev.Seq, want, seqs(first), seqs(evs))
			break
		}
	}
}
