package memstore_test

import (
	"context"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// Example bounds the store: it keeps at most MaxTasks tasks, evicting the
// oldest finished ones to make room, so its memory stays flat however
// many tasks a long-running server has made.
func Example() {
	store := memstore.NewWith(&memstore.Options{MaxTasks: 2})
	ps, err := parleytest.Start(done, parleytest.WithStore(store))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ps.Close()
	srv, ctx := ps.Core(), context.Background()

	for _, text := range []string{"one", "two", "three"} {
		if _, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}); err != nil {
			fmt.Println(err)
			return
		}
	}
	list, err := srv.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range list.GetTasks() {
		fmt.Println(a2a.FirstText(t.GetHistory()[0]))
	}
	// Unordered output:
	// two
	// three
}

// done is an agent that completes every task at once.
var done = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})
