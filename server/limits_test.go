package server_test

// Request bounds (server.Limits): parts, identifiers, metadata, push
// configurations, enum values and header-unsafe characters, all refused
// with InvalidParams naming the field and the limit, before any store
// lookup. Identifiers are in limits_ids_test.go, push configurations in
// limits_push_test.go.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// violation returns the violation of err on field, failing the test when
// err is not InvalidParams or has none for the field. Every violation
// must also be in the error's message.
func violation(t testing.TB, what string, err error, field string) a2a.FieldViolation {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams {
		t.Errorf("%s: err = %v, want InvalidParams on %s", what, err, field)
		return a2a.FieldViolation{}
	}
	for _, v := range e.Violations {
		if v.Field == field {
			if !strings.Contains(e.Message, v.Description) {
				t.Errorf("%s: message %q does not carry the violation %q", what, e.Message, v.Description)
			}
			return v
		}
	}
	t.Errorf("%s: violations %v, want one on %s", what, e.Violations, field)
	return a2a.FieldViolation{}
}

// wantLimit checks err is InvalidParams on field naming the limit's name
// and value.
func wantLimit(t testing.TB, what string, err error, field, name string, limit int) {
	t.Helper()
	v := violation(t, what, err, field)
	if v.Field != "" && (!strings.Contains(v.Description, name) || !strings.Contains(v.Description, fmt.Sprint(limit))) {
		t.Errorf("%s: violation %q does not name the limit %s = %d", what, v.Description, name, limit)
	}
}

func parts(n int) []*a2a.Part {
	ps := make([]*a2a.Part, n)
	for i := range ps {
		ps[i] = a2a.TextPart("x")
	}
	return ps
}

// bigStruct is metadata whose encoding is at least n bytes.
func bigStruct(t testing.TB, n int) *structpb.Struct {
	st, err := structpb.NewStruct(map[string]any{"k": strings.Repeat("v", n)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestMaxParts(t *testing.T) {
	t.Parallel()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{})
		req := msgReq("x")
		req.Message.Parts = parts(server.DefaultMaxParts + 1)
		_, err := s.SendMessage(anon(t), req)
		wantLimit(t, "1001 parts", err, "message.parts", "maxParts", server.DefaultMaxParts)
		req.Message.Parts = parts(server.DefaultMaxParts)
		taskOf(t)(s.SendMessage(anon(t), req))
	})
	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{Limits: server.Limits{MaxParts: 3}})
		for _, tc := range []struct {
			field string
			mod   func(*a2a.SendMessageRequest)
		}{
			{"message.parts", func(r *a2a.SendMessageRequest) { r.Message.Parts = parts(4) }},
			{"message.referenceTaskIds", func(r *a2a.SendMessageRequest) { r.Message.ReferenceTaskIds = []string{"a", "b", "c", "d"} }},
			{"message.extensions", func(r *a2a.SendMessageRequest) { r.Message.Extensions = []string{"a", "b", "c", "d"} }},
			{"configuration.acceptedOutputModes", func(r *a2a.SendMessageRequest) {
				r.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"a/a", "b/b", "c/c", "d/d"}}
			}},
		} {
			req := msgReq("x")
			tc.mod(req)
			_, err := s.SendMessage(anon(t), req)
			wantLimit(t, tc.field, err, tc.field, "maxParts", 3)
			_, err = testkit.Collect(s.SendStreamingMessage(anon(t), req))
			wantLimit(t, tc.field+" (stream)", err, tc.field, "maxParts", 3)
		}
		req := msgReq("x")
		req.Message.Parts = parts(3)
		req.Message.ReferenceTaskIds = []string{"a", "b", "c"}
		taskOf(t)(s.SendMessage(anon(t), req))
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{Limits: server.Limits{MaxParts: -1}})
		req := msgReq("x")
		req.Message.Parts = parts(server.DefaultMaxParts + 5)
		taskOf(t)(s.SendMessage(anon(t), req))
	})
}

func TestMaxMetadataBytes(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxMetadataBytes: 1024}})
	big, small := bigStruct(t, 2000), bigStruct(t, 900)
	for _, tc := range []struct {
		field string
		mod   func(*a2a.SendMessageRequest, *structpb.Struct)
	}{
		{"metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) { r.Metadata = st }},
		{"message.metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) { r.Message.Metadata = st }},
		{"message.parts[1].metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) {
			r.Message.Parts = append(r.Message.Parts, &a2a.Part{Content: &a2a.Part_Text{Text: "y"}, Metadata: st})
		}},
	} {
		req := msgReq("x")
		tc.mod(req, big)
		_, err := s.SendMessage(anon(t), req)
		wantLimit(t, tc.field, err, tc.field, "maxMetadataBytes", 1024)
		req = msgReq("x")
		tc.mod(req, small)
		taskOf(t)(s.SendMessage(anon(t), req))
	}
	// The default is 64 KiB.
	d := newServer(t, server.Options{})
	req := msgReq("x")
	req.Metadata = bigStruct(t, 70<<10)
	_, err := d.SendMessage(anon(t), req)
	wantLimit(t, "70 KiB metadata", err, "metadata", "maxMetadataBytes", server.DefaultMaxMetadataBytes)
	req.Metadata = bigStruct(t, 60<<10)
	taskOf(t)(d.SendMessage(anon(t), req))
}

func TestUndefinedEnumNumbers(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	req := msgReq("x")
	req.Message.Role = a2a.Role(99)
	_, err := s.SendMessage(anon(t), req)
	if v := violation(t, "role 99", err, "message.role"); v.Field != "" && !strings.Contains(v.Description, "99") {
		t.Errorf("violation %q does not name the value", v.Description)
	}
	_, err = s.ListTasks(anon(t), &a2a.ListTasksRequest{Status: a2a.TaskState(42)})
	violation(t, "status 42", err, "status")

	// An agent that emits an undefined role or state is told so.
	var roleErr, stateErr error
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		m := a2a.AgentMessage("hi")
		m.Role = a2a.Role(7)
		roleErr = em.Status(a2a.TaskState_TASK_STATE_WORKING, m)
		stateErr = em.Status(a2a.TaskState(77), nil)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	a := newServer(t, server.Options{Agent: agent})
	if tk := sendTask(t, a, anon(t), "x"); state(tk) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("task %v", tk)
	}
	if roleErr == nil || stateErr == nil {
		t.Errorf("emitting role 7: %v, state 77: %v; want errors", roleErr, stateErr)
	}
}

// TestAgentOutputLimits: what an agent emits is held to the same bounds;
// the emitter says why.
func TestAgentOutputLimits(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 4)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		a := a2a.TextArtifact("a", "x")
		a.Parts = parts(3)
		errs <- em.Artifact(a)
		errs <- em.Artifact(a2a.TextArtifact(strings.Repeat("i", 41), "x"))
		b := a2a.TextArtifact("b", "x")
		b.Metadata = bigStruct(t, 100)
		errs <- em.Artifact(b)
		m := a2a.AgentMessage("x")
		m.Parts = parts(3)
		errs <- em.Status(a2a.TaskState_TASK_STATE_WORKING, m)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, Limits: server.Limits{MaxParts: 2, MaxIDBytes: 40, MaxMetadataBytes: 64}})
	tk := sendTask(t, s, anon(t), "x")
	if state(tk) != a2a.TaskState_TASK_STATE_COMPLETED || len(tk.Artifacts) != 0 {
		t.Errorf("task %v; want COMPLETED without artifacts", tk)
	}
	for _, want := range []string{"artifact.parts", "artifact.artifactId", "artifact.metadata", "message.parts"} {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("emit over the limit of %s: %v", want, err)
		}
	}
}

// TestLimitsDoNotChangeValidRequests: a request within every limit is
// answered exactly as before (the conformance agent's echo), on a
// server with every limit set low.
func TestLimitsDoNotChangeValidRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxParts: 2, MaxIDBytes: 40, MaxMetadataBytes: 200, MaxPushConfigs: 1}})
	req := msgReq("hello")
	req.Message.Metadata = bigStruct(t, 10)
	req.Message.Parts = append(req.Message.Parts, a2a.TextPart("second"))
	tk := sendTask(t, s, anon(t), "hello")
	if len(tk.Artifacts) != 1 || a2a.FirstText(&a2a.Message{Parts: tk.Artifacts[0].Parts}) != "hello" {
		t.Errorf("task %v", tk)
	}
	got := taskOf(t)(s.SendMessage(anon(t), req))
	if !proto.Equal(got.History[0].Metadata, req.Message.Metadata) || len(got.History[0].Parts) != 2 {
		t.Errorf("stored message %v", got.History[0])
	}
}

func TestLimitsOptions(t *testing.T) {
	t.Parallel()
	nan := server.Options{Card: testCard(true, true), Agent: server.AgentFunc(func(context.Context, *server.Request, *server.Emitter) error { return nil }),
		Push: testkit.NoDelivery{}, Limits: server.Limits{TaskRate: zero() / zero()}}
	if _, err := server.New(&nan); err == nil {
		t.Error("New with TaskRate NaN succeeded; want an error")
	}
}

func zero() float64 { return 0 }
