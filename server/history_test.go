package server_test

// historyLength on every operation that returns a task (docs/decisions.md#b4).

import (
	"context"
	"slices"
	"testing"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// historyAgent builds history: user, "w1", "w2", "need" (INPUT_REQUIRED);
// a follow-up then adds the user's message and "done" (COMPLETED).
func historyAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "done")
		}
		for _, w := range []string{"w1", "w2"} {
			if err := em.StatusText(a2a.TaskState_TASK_STATE_WORKING, w); err != nil {
				return err
			}
		}
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "need")
	})
}

func TestHistoryLength(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Agent: historyAgent()})
	full := []string{"start", "w1", "w2", "need"}
	cases := []struct {
		name string
		n    *int32
		want []string
	}{
		{"unset", nil, full},
		{"0", i32(0), nil},
		{"1", i32(1), []string{"need"}},
		{"2", i32(2), []string{"w2", "need"}},
		{"4", i32(4), full},
		{"10", i32(10), full},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			task := checkReadHistory(t, s, tc.n, tc.want, full)
			checkSnapshotHistory(t, s, task.Id, tc.n)
		})
	}
	t.Run("new task stream", func(t *testing.T) {
		t.Parallel()
		checkNewStreamHistory(t, s)
	})
	t.Run("negative", func(t *testing.T) {
		t.Parallel()
		checkNegativeHistoryLength(t, s)
	})
}

// checkReadHistory starts a task with historyLength n and checks the
// history that SendMessage, GetTask and ListTasks return, and that the
// store keeps all of full. It returns the task.
func checkReadHistory(t *testing.T, s a2a.Service, n *int32, want, full []string) *a2a.Task {
	t.Helper()
	// SendMessage (blocking result).
	req := withConfig(msgReq("start"), &a2a.SendMessageConfiguration{HistoryLength: n})
	ctxID := a2a.NewID()
	req.Message.ContextId = ctxID
	task := taskOf(t)(s.SendMessage(anon(t), req))
	if got := historyTexts(task); !slices.Equal(got, want) {
		t.Errorf("SendMessage history = %q, want %q", got, want)
	}
	if n != nil && *n == 0 && task.History != nil {
		t.Errorf("SendMessage with historyLength 0 kept an empty history list")
	}
	// GetTask.
	got, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id, HistoryLength: n})
	if err != nil {
		t.Fatal(err)
	}
	if h := historyTexts(got); !slices.Equal(h, want) {
		t.Errorf("GetTask history = %q, want %q", h, want)
	}
	// ListTasks.
	res, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{ContextId: ctxID, HistoryLength: n})
	if err != nil || len(res.Tasks) != 1 {
		t.Fatalf("ListTasks = %v, %v", res, err)
	}
	if h := historyTexts(res.Tasks[0]); !slices.Equal(h, want) {
		t.Errorf("ListTasks history = %q, want %q", h, want)
	}
	// The stored task keeps everything.
	if st, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); !slices.Equal(historyTexts(st), full) {
		t.Errorf("stored history = %q, want %q", historyTexts(st), full)
	}
	return task
}

// checkSnapshotHistory sends a streaming follow-up with historyLength n
// and checks the history of the task snapshot that starts the stream:
// start, w1, w2, need, more, cut to the last n.
func checkSnapshotHistory(t *testing.T, s a2a.Service, taskID string, n *int32) {
	t.Helper()
	f := withConfig(followReq(taskID, "more"), &a2a.SendMessageConfiguration{HistoryLength: n})
	var evs []a2a.StreamEvent
	var err error
	for range 10000 {
		evs, err = testkit.Collect(s.SendStreamingMessage(anon(t), proto.Clone(f).(*a2a.SendMessageRequest)))
		if !stillWorking(err) {
			break
		}
	}
	if err != nil || len(evs) == 0 || evs[0].Response.GetTask() == nil {
		t.Fatalf("follow-up stream = %v, %v", describeAll(evs), err)
	}
	snapFull := []string{"start", "w1", "w2", "need", "more"}
	wantSnap := snapFull
	if n != nil {
		wantSnap = snapFull[max(0, len(snapFull)-int(*n)):]
		if *n == 0 {
			wantSnap = nil
		}
	}
	if h := historyTexts(evs[0].Response.GetTask()); !slices.Equal(h, wantSnap) {
		t.Errorf("stream snapshot history = %q, want %q", h, wantSnap)
	}
}

// checkNewStreamHistory: the first event of a new task's stream follows
// historyLength too.
func checkNewStreamHistory(t *testing.T, s a2a.Service) {
	for _, n := range []*int32{nil, i32(0), i32(1)} {
		req := withConfig(msgReq("start"), &a2a.SendMessageConfiguration{HistoryLength: n})
		evs, err := testkit.Collect(s.SendStreamingMessage(anon(t), req))
		if err != nil || len(evs) == 0 || evs[0].Response.GetTask() == nil {
			t.Fatalf("stream = %v, %v", describeAll(evs), err)
		}
		got := historyTexts(evs[0].Response.GetTask())
		if (n != nil && *n == 0 && len(got) != 0) || (!(n != nil && *n == 0) && !slices.Equal(got, []string{"start"})) {
			t.Errorf("historyLength %v: first task event history = %q", n, got)
		}
	}
}

// checkNegativeHistoryLength: a negative historyLength is invalid on every
// operation that takes one, and a refused follow-up changes nothing.
func checkNegativeHistoryLength(t *testing.T, s a2a.Service) {
	parked := sendTask(t, s, anon(t), "start")
	neg := &a2a.SendMessageConfiguration{HistoryLength: i32(-1)}
	_, err := s.SendMessage(anon(t), withConfig(msgReq("start"), neg))
	wantErr(t, "SendMessage", err, a2a.ErrInvalidParams)
	_, err = testkit.Collect(s.SendStreamingMessage(anon(t), withConfig(msgReq("start"), neg)))
	wantErr(t, "SendStreamingMessage", err, a2a.ErrInvalidParams)
	_, err = s.SendMessage(anon(t), withConfig(followReq(parked.Id, "more"), neg))
	wantErr(t, "SendMessage follow-up", err, a2a.ErrInvalidParams)
	_, err = s.GetTask(anon(t), &a2a.GetTaskRequest{Id: parked.Id, HistoryLength: i32(-1)})
	wantErr(t, "GetTask", err, a2a.ErrInvalidParams)
	_, err = s.ListTasks(anon(t), &a2a.ListTasksRequest{HistoryLength: i32(-5)})
	wantErr(t, "ListTasks", err, a2a.ErrInvalidParams)
	if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: parked.Id}); state(got) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || len(got.History) != 4 {
		t.Errorf("the refused follow-up changed the task: %s %q", short(state(got)), historyTexts(got))
	}
}
