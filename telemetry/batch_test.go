package telemetry_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/telemetry"
)

// counted counts the events a store is given one at a time and in
// batches.
type counted struct {
	*memstore.Store
	single, batched atomic.Int64
}

func (c *counted) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	c.single.Add(1)
	return c.Store.Append(ctx, sc, id, ev)
}

func (c *counted) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	c.batched.Add(int64(len(evs)))
	return c.Store.AppendBatch(ctx, sc, id, evs)
}

func (c *counted) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	c.batched.Add(int64(len(evs)))
	return c.Store.CreateTaskBatch(ctx, sc, t, evs)
}

// TestStoreWrapperKeepsBatching: behind the telemetry store wrapper the
// core still writes a stream's chunks in batches, as on the bare store
// (the wrapper once hid the batch methods, and a 200-chunk stream then
// cost one write per chunk).
func TestStoreWrapperKeepsBatching(t *testing.T) {
	tel, err := telemetry.New(context.Background(), &telemetry.Options{Prometheus: true, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	for _, wrapped := range []bool{false, true} {
		st := &counted{Store: memstore.New()}
		srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Mutate: func(_ *a2a.AgentCard, o *server.Options) {
			o.Store = st
			if wrapped {
				o.Store = tel.Store(st)
			}
		}})
		c, err := client.New(srv.Card, &client.Options{Transports: []client.TransportFactory{client.REST()}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 200")}))
		cancel()
		if err != nil || len(evs) < 200 {
			t.Fatalf("wrapped %v: stream: %d events, %v", wrapped, len(evs), err)
		}
		single, batched := st.single.Load(), st.batched.Load()
		if batched < 150 || single > 10 {
			t.Errorf("wrapped %v: %d events written in batches, %d one at a time; want the chunks in batches", wrapped, batched, single)
		}
		t.Logf("wrapped %v: %d events in batches, %d alone", wrapped, batched, single)
	}
}
