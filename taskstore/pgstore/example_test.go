package pgstore_test

import (
	"context"
	"log"
	"os"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/pgstore"
)

// Example runs one replica of several that share a PostgreSQL database:
// a lease fences this replica's task writes and lets the others end its
// tasks if it dies, and the bus wakes the followers of a task on every
// replica when its log grows. (It needs a database, so it is compiled,
// not run, by go test.)
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	lease, err := store.Join(ctx, "replica-1", 15*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Leave(ctx)
	bus, err := pgstore.NewBus(ctx, store.Pool(), "")
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()

	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	srv, err := server.New(&server.Options{
		Card: &a2a.AgentCard{ /* … */ }, Agent: agent, Store: store,
		Cluster: &server.Cluster{Bus: bus, Leases: lease},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close(ctx)
	// Serve srv with package a2ahttp.
}
