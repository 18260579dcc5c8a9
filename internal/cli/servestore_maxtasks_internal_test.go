package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// TestMaxTasksFlag: --max-tasks bounds the memory store (the finished
// task that ended first goes when a new one would pass it), defaults to
// memstore.DefaultMaxTasks.
func TestMaxTasksFlag(t *testing.T) {
	ctx := context.Background()
	if got := *newStoreFlags(t, nil).maxTasks; got != memstore.DefaultMaxTasks {
		t.Errorf("--max-tasks defaults to %d, want %d", got, memstore.DefaultMaxTasks)
	}

	s, err := newStoreFlags(t, nil, "--max-tasks", "2").open(ctx, "memory", false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		id := fmt.Sprint("task-", i)
		tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED,
			Timestamp: timestamppb.New(time.UnixMilli(int64(1_800_000_000_000 + i)))}}
		ev := taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}
		if err := s.CreateTask(ctx, taskstore.Scope{}, tk, ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetTask(ctx, taskstore.Scope{}, "task-0"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("the first finished task past --max-tasks 2: GetTask = %v, want ErrNotFound", err)
	}
	res, err := s.ListTasks(ctx, taskstore.Scope{}, taskstore.ListQuery{Limit: 10})
	if err != nil || res.Total != 2 {
		t.Errorf("ListTasks: %d tasks, %v, want 2", res.Total, err)
	}

}

// TestMaxMessagesFlag: --max-messages bounds the memory store's message
// records (the oldest goes when a new one would pass it), defaults to
// memstore.DefaultMaxMessages.
func TestMaxMessagesFlag(t *testing.T) {
	ctx := context.Background()
	if got := *newStoreFlags(t, nil).maxMessages; got != memstore.DefaultMaxMessages {
		t.Errorf("--max-messages defaults to %d, want %d", got, memstore.DefaultMaxMessages)
	}
	s, err := newStoreFlags(t, nil, "--max-messages", "2").open(ctx, "memory", false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		r := &taskstore.MessageRecord{MessageID: fmt.Sprint("m-", i), Digest: "d", Created: time.Now()}
		if _, err := s.PutMessage(ctx, taskstore.Scope{}, r); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []error{taskstore.ErrNotFound, nil, nil} {
		if _, err := s.GetMessage(ctx, taskstore.Scope{}, fmt.Sprint("m-", i)); !errors.Is(err, want) {
			t.Errorf("record m-%d past --max-messages 2: %v, want %v", i, err, want)
		}
	}

}

// TestMemoryOnlyFlagsWarn: each bound of the memory store alone is
// ignored, with a warning, by a durable store.
func TestMemoryOnlyFlagsWarn(t *testing.T) {
	for _, flag := range []string{"--max-tasks", "--max-messages"} {
		var logs syncBuf
		db, err := newStoreFlags(t, nil, flag, "5").open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "tasks.db"), false, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if !strings.Contains(logs.String(), flag+" applies to the memory store only") {
			t.Errorf("no warning that a sqlite store ignores %s:\n%s", flag, logs.String())
		}
	}
}
