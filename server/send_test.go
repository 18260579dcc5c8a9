package server_test

// Validation of a send (spec §3.3.2), and when a blocking SendMessage
// returns.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"parley.dev/parley/internal/testkit"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

func TestSendValidation(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	edit := func(f func(m *a2a.Message)) *a2a.SendMessageRequest {
		r := msgReq("hello")
		f(r.Message)
		return r
	}
	for _, tc := range []struct {
		name string
		req  *a2a.SendMessageRequest
		want error
	}{
		{"no message", &a2a.SendMessageRequest{}, a2a.ErrInvalidParams},
		{"no messageId", edit(func(m *a2a.Message) { m.MessageId = "" }), a2a.ErrInvalidParams},
		{"no role", edit(func(m *a2a.Message) { m.Role = a2a.Role_ROLE_UNSPECIFIED }), a2a.ErrInvalidParams},
		{"agent role", edit(func(m *a2a.Message) { m.Role = a2a.Role_ROLE_AGENT }), a2a.ErrInvalidParams},
		{"no parts", edit(func(m *a2a.Message) { m.Parts = nil }), a2a.ErrInvalidParams},
		{"empty part", edit(func(m *a2a.Message) { m.Parts = []*a2a.Part{{}} }), a2a.ErrInvalidParams},
		{"unaccepted media type", edit(func(m *a2a.Message) {
			m.Parts = append(m.Parts, &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte{0x89, 'P', 'N', 'G'}}, MediaType: "image/png"})
		}), a2a.ErrContentTypeNotSupported},
		{"text with parameters", edit(func(m *a2a.Message) { m.Parts[0].MediaType = "text/plain; charset=utf-8" }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			_, err := s.SendMessage(anon(t), tc.req)
			if tc.want == nil {
				if err != nil {
					t.Errorf("SendMessage: %v", err)
				}
				return
			}
			wantErr(t, "SendMessage", err, tc.want)
			_, err = testkit.Collect(s.SendStreamingMessage(anon(t), tc.req))
			wantErr(t, "SendStreamingMessage", err, tc.want)
			if calls.Load() != before {
				t.Error("the agent ran for an invalid request")
			}
		})
	}
}

func TestBlockingSendReturnsWhenSettled(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		st := a2a.TaskState(a2a.TaskState_value[a2a.FirstText(req.Message)])
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		for _, id := range []string{"a1", "a2"} {
			if err := em.Artifact(a2a.TextArtifact(id, "content of "+id)); err != nil {
				return err
			}
		}
		if err := em.StatusText(st, "now "+short(st)); err != nil {
			return err
		}
		if a2a.IsInterrupted(st) {
			// Still inside Execute: the blocking call must not wait for it.
			select {
			case <-hold:
			case <-ctx.Done():
			}
		}
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	for _, st := range []a2a.TaskState{
		a2a.TaskState_TASK_STATE_COMPLETED, a2a.TaskState_TASK_STATE_FAILED,
		a2a.TaskState_TASK_STATE_CANCELED, a2a.TaskState_TASK_STATE_REJECTED,
		a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_AUTH_REQUIRED,
	} {
		t.Run(short(st), func(t *testing.T) {
			t.Parallel()
			task := taskOf(t)(s.SendMessage(shortCtx(t, ""), msgReq(st.String())))
			if state(task) != st {
				t.Errorf("returned in %s, want %s", short(state(task)), short(st))
			}
			if len(task.Artifacts) != 2 || task.Artifacts[0].ArtifactId != "a1" || task.Artifacts[1].ArtifactId != "a2" {
				t.Errorf("artifacts = %v, want a1 and a2", task.Artifacts)
			}
			if a2a.FirstText(task.Status.GetMessage()) != "now "+short(st) {
				t.Errorf("status message = %v", task.Status.GetMessage())
			}
		})
	}
}

func TestReturnImmediately(t *testing.T) {
	t.Parallel()
	release, done := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		defer close(done)
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil
		}
		if err := em.Artifact(a2a.TextArtifact("r", "result")); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	task := taskOf(t)(s.SendMessage(shortCtx(t, ""), withConfig(msgReq("job"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	if st := state(task); st != a2a.TaskState_TASK_STATE_SUBMITTED && st != a2a.TaskState_TASK_STATE_WORKING {
		t.Errorf("returnImmediately gave a %s task, want SUBMITTED or WORKING", short(st))
	}
	if task.Id == "" || task.ContextId == "" || len(task.History) != 1 {
		t.Errorf("task = %v", task)
	}
	close(release)
	if !within(t, done, "the agent to finish") {
		return
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_COMPLETED || len(got.Artifacts) != 1 {
		t.Errorf("task afterwards = %v", got)
	}
}

// TestBlockingSendWithSmallBuffer: a blocking SendMessage waits until the
// task is terminal or interrupted however many events the agent emits in a
// burst, even with a subscriber buffer far smaller than the burst (a
// blocking call does not read a stream).
func TestBlockingSendWithSmallBuffer(t *testing.T) {
	t.Parallel()
	const chunks = 300
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		for i := range chunks {
			if err := em.Chunk(a2a.TextArtifact("big", fmt.Sprint(i)), i > 0, i == chunks-1); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, SubscriberBuffer: 2})
	bad := 0
	for range 5 {
		resp, err := s.SendMessage(anon(t), msgReq("burst"))
		if err != nil || state(resp.GetTask()) != a2a.TaskState_TASK_STATE_COMPLETED || len(resp.GetTask().GetArtifacts()[0].GetParts()) != chunks {
			bad++
			if bad == 1 {
				t.Errorf("SendMessage returned %s with %d parts (err %v); want COMPLETED with %d", short(state(resp.GetTask())),
					len(resp.GetTask().GetArtifacts()[0].GetParts()), err, chunks)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 5 blocking sends returned early", bad)
	}
}
