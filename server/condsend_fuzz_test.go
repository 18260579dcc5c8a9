package server_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"parley.dev/parley/a2a"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// FuzzConditionalSend sends a 1.1 follow-up expecting a fuzzed generation
// (raw, or the task's own plus delta when raw is 0) of a task waiting for
// input, or a new message carrying it (newTask): a new message is taken
// whatever it expects; a follow-up expecting the task's generation is
// taken and moves it on; any other is TaskGenerationMismatchError with
// both generations in its metadata, and leaves the task as it was.
func FuzzConditionalSend(f *testing.F) {
	f.Add(int64(0), int8(0), false)
	f.Add(int64(0), int8(-1), false)
	f.Add(int64(0), int8(1), false)
	f.Add(int64(-1), int8(0), false)
	f.Add(int64(-9223372036854775808), int8(0), false)
	f.Add(int64(9223372036854775807), int8(0), true)
	f.Add(int64(0), int8(0), true)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
	})
	s := newServer(f, server.Options{Agent: agent, ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}})
	f.Fuzz(func(t *testing.T, raw int64, delta int8, newTask bool) {
		v11 := as(t, "", version(pversion.V11))
		task := taskOf(t)(s.SendMessage(v11, msgReq("start")))
		gen := task.GetGeneration()
		want := raw
		if raw == 0 {
			want = gen + int64(delta)
		}
		req := followReq(task.Id, "more")
		if newTask {
			req = msgReq("another")
		}
		req.Configuration = &a2a.SendMessageConfiguration{IfGenerationMatch: &want}
		resp, err := s.SendMessage(as(t, "", version(pversion.V11)), req)
		defer func() { // tasks waiting for input count against the open tasks quota
			for _, id := range []string{task.Id, resp.GetTask().GetId()} {
				if id != "" {
					s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: id})
				}
			}
		}()
		after, gerr := s.GetTask(as(t, "", version(pversion.V11)), &a2a.GetTaskRequest{Id: task.Id})
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case newTask || want == gen:
			if err != nil || resp.GetTask() == nil {
				t.Fatalf("expecting %d of a task at %d (new task %v): %v, want it taken", want, gen, newTask, err)
			}
			if !newTask && after.GetGeneration() <= gen {
				t.Fatalf("accepted, and the task is still at generation %d", after.GetGeneration())
			}
		default:
			var e *a2a.Error
			if !errors.As(err, &e) || e.Code != a2a.CodeTaskGenerationMismatch ||
				e.Metadata["expectedGeneration"] != strconv.FormatInt(want, 10) || e.Metadata["currentGeneration"] != strconv.FormatInt(gen, 10) {
				t.Fatalf("expecting %d of a task at %d: %v (%v), want a mismatch", want, gen, err, e)
			}
			if after.GetGeneration() != gen || len(after.GetHistory()) != len(task.GetHistory()) {
				t.Fatalf("after a refusal: generation %d, %d history messages; want %d, %d",
					after.GetGeneration(), len(after.GetHistory()), gen, len(task.GetHistory()))
			}
		}
	})
}
