package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"parley.dev/parley/a2a"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/sqlitestore"
)

// Example keeps tasks in one SQLite file: a task made by one server is
// there for the next one that opens the file, as after a restart.
func Example() {
	dir, err := os.MkdirTemp("", "sqlitestore-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "parley.db")
	ctx := context.Background()

	// The first server runs a task to completion, then stops.
	id := func() string {
		store, err := sqlitestore.Open(path)
		if err != nil {
			fmt.Println(err)
			return ""
		}
		defer store.Close()
		ps, err := parleytest.Start(done, parleytest.WithStore(store))
		if err != nil {
			fmt.Println(err)
			return ""
		}
		defer ps.Close()
		srv := ps.Core()
		resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("remember me")})
		if err != nil {
			fmt.Println(err)
			return ""
		}
		return resp.GetTask().GetId()
	}()

	// A second server on the same file finds it.
	store, err := sqlitestore.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ps, err := parleytest.Start(done, parleytest.WithStore(store))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ps.Close()
	srv := ps.Core()
	task, err := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(task.GetStatus().GetState(), a2a.FirstText(task.GetHistory()[0]))
	// Output: TASK_STATE_COMPLETED remember me
}

// done is an agent that completes every task at once.
var done = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})
