package server_test

// CancelTask (spec §3.1.5).

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/server"
)

func TestCancelTask(t *testing.T) {
	t.Parallel()
	var started, causes sync.Map
	s := newServer(t, server.Options{Agent: cancelProbeAgent(&started, &causes)})

	for _, tc := range []struct {
		word  string
		state a2a.TaskState
	}{
		{"working", a2a.TaskState_TASK_STATE_WORKING},
		{"submitted", a2a.TaskState_TASK_STATE_SUBMITTED},
		{"input-required", a2a.TaskState_TASK_STATE_INPUT_REQUIRED},
		{"auth-required", a2a.TaskState_TASK_STATE_AUTH_REQUIRED},
	} {
		t.Run("cancelable/"+short(tc.state), func(t *testing.T) {
			t.Parallel()
			checkCancelable(t, s, &started, &causes, tc.word, tc.state)
		})
	}
	for _, text := range []string{"hello", "fail", "reject"} {
		t.Run("not cancelable/"+text, func(t *testing.T) {
			t.Parallel()
			task := sendTask(t, s, anon(t), text)
			if !a2a.IsTerminal(state(task)) {
				t.Fatalf("task is %s", short(state(task)))
			}
			_, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: task.Id})
			wantErr(t, "CancelTask", err, a2a.ErrTaskNotCancelable)
			if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); !proto.Equal(got, task) {
				t.Errorf("the task changed: %v", got)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		_, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: "no-such-task"})
		wantErr(t, "CancelTask", err, a2a.ErrTaskNotFound)
		_, err = s.CancelTask(anon(t), &a2a.CancelTaskRequest{})
		wantErr(t, "CancelTask without id", err, a2a.ErrInvalidParams)
	})
}

// cancelProbeAgent: "working X" and "submitted X" put the task in that
// state, say so on started[X], and report their context's cause on
// causes[X] once it is canceled. Other messages go to the conformance
// agent.
func cancelProbeAgent(started, causes *sync.Map) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		word, key, _ := strings.Cut(a2a.FirstText(req.Message), " ")
		var st a2a.TaskState
		switch word {
		case "working":
			st = a2a.TaskState_TASK_STATE_WORKING
		case "submitted":
			st = a2a.TaskState_TASK_STATE_SUBMITTED
		default:
			return agents.Conformance().Execute(ctx, req, em)
		}
		if err := em.Status(st, nil); err != nil {
			return err
		}
		s, _ := started.Load(key)
		close(s.(chan struct{}))
		<-ctx.Done()
		c, _ := causes.Load(key)
		c.(chan error) <- context.Cause(ctx)
		return nil
	})
}

// checkCancelable brings a task to want (through word, see
// cancelProbeAgent), cancels it, and checks the result, the stored state,
// the agent's context cause, and that canceling again changes nothing.
func checkCancelable(t *testing.T, s a2a.Service, started, causes *sync.Map, word string, want a2a.TaskState) {
	key := a2a.NewID()
	start, cause := make(chan struct{}), make(chan error, 1)
	started.Store(key, start)
	causes.Store(key, cause)
	running := !a2a.IsInterrupted(want)
	var task *a2a.Task
	if running {
		task = taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq(word+" "+key), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		<-start
	} else {
		task = sendTask(t, s, anon(t), word)
	}
	if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); state(got) != want {
		t.Fatalf("task is %s, want %s before canceling", short(state(got)), short(want))
	}
	got, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: task.Id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", got, err)
	}
	if st, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); state(st) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Errorf("stored state %s, want CANCELED", short(state(st)))
	}
	if running {
		select {
		case c := <-cause:
			if !errors.Is(c, server.ErrCanceled) {
				t.Errorf("agent context cause = %v, want server.ErrCanceled", c)
			}
		case <-time.After(guard):
			t.Fatal("the agent's context was not canceled")
		}
	}
	again, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: task.Id})
	if err != nil || !proto.Equal(again, got) {
		t.Errorf("canceling a CANCELED task = %v, %v; want it unchanged", again, err)
	}
}

// TestCancelUnderAnEmittingAgentLogsNoError: an agent that keeps emitting
// when its task is canceled gets ErrTaskClosed and returns it; that race
// is no failure, and is not logged as one (only at debug level).
func TestCancelUnderAnEmittingAgentLogsNoError(t *testing.T) {
	t.Parallel()
	var logs testenv.SyncBuffer
	emitting := make(chan string, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		emitting <- req.TaskID
		for {
			if err := em.Chunk(&a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart("x")}}, true, false); err != nil {
				return err
			}
		}
	})
	srv := newServer(t, server.Options{Agent: agent, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for range 5 {
		if _, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("go"),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}); err != nil {
			t.Fatal(err)
		}
		id := <-emitting
		if _, err := srv.CancelTask(ctx, &a2a.CancelTaskRequest{Id: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("canceling tasks whose agents emit logged errors:\n%s", logs.String())
	}
}
