package taskstore_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"parley.dev/parley/a2a"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// countingStore is a store wrapper: it embeds the store it wraps, so every
// role it does not override, the batched appends of Tasks included, goes
// to the wrapped store unchanged.
type countingStore struct {
	taskstore.Store
	reads atomic.Int64
}

func (s *countingStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	s.reads.Add(1)
	return s.Store.GetTask(ctx, sc, id)
}

// Example wraps a store to observe it, the way a telemetry or
// fault-injection wrapper does.
func Example() {
	store := &countingStore{Store: memstore.New()}
	srv, err := parleytest.Start(server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}), parleytest.WithStore(store))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	ctx := context.Background()
	resp, err := srv.Core().SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
	if err != nil {
		fmt.Println(err)
		return
	}
	before := store.reads.Load()
	if _, err := srv.Core().GetTask(ctx, &a2a.GetTaskRequest{Id: resp.GetTask().GetId()}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("GetTask read the store:", store.reads.Load() > before)
	// Output: GetTask read the store: true
}
