package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// benchServer returns a core running agent on a memory store, closed when
// the benchmark ends.
func benchServer(tb testing.TB, agent server.Agent, buffer int) *server.Server {
	tb.Helper()
	card, err := agents.Card("echo", []*a2a.AgentInterface{
		{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(&server.Options{
		Card: card, Agent: agent, Store: memstore.New(), SubscriberBuffer: buffer,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return srv
}

// benchCtx returns a context for one call. A CallInfo belongs to one call
// (the core writes to it), so every call gets its own.
func benchCtx(ctx context.Context) context.Context {
	return a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: a2a.ProtocolVersion})
}

func benchSend(id, text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{
		MessageId: id, Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart(text)},
	}}
}

// BenchmarkSendMessageBlocking is one blocking SendMessage through the core
// with the echo agent: validation, idempotency record, task creation, three
// agent events persisted and fanned out, and the completed task returned.
func BenchmarkSendMessageBlocking(b *testing.B) {
	srv := benchServer(b, agents.Echo(), 0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		resp, err := srv.SendMessage(benchCtx(context.Background()), benchSend("bench-"+strconv.Itoa(i), "hello"))
		if err != nil {
			b.Fatal(err)
		}
		if st := resp.GetTask().GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_COMPLETED {
			b.Fatalf("state %v, want COMPLETED", st)
		}
	}
}

// fanOutWindow is how many events the fan-out agent emits before it waits
// for every subscriber to catch up. It keeps each subscriber's backlog under
// its buffer (2×window) however the scheduler runs the readers, so none is
// cut off, while still letting the agent publish a burst at a time.
const fanOutWindow = 128

// fanOutAgent parks the task in WORKING, then emits as many WORKING status
// updates as it is told, one window at a time, then completes the task.
type fanOutAgent struct {
	ready  chan struct{}  // closed once the task is WORKING
	start  chan int       // how many events to emit
	window sync.WaitGroup // subscribers still reading the current window
	subs   int
}

func (a *fanOutAgent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	close(a.ready)
	total := <-a.start
	for sent := 0; sent < total; {
		k := min(fanOutWindow, total-sent)
		a.window.Add(a.subs)
		for range k {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
		}
		sent += k
		a.window.Wait()
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

// BenchmarkFanOut measures the cost of one task event delivered to every
// one of N SubscribeToTask streams on that task: the agent emits b.N status
// updates and the clock runs until every subscriber has received them all.
// ns/op is per event; ns/delivery divides it by the subscribers.
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) { benchFanOut(b, n) })
	}
}

func benchFanOut(b *testing.B, subs int) {
	agent := &fanOutAgent{ready: make(chan struct{}), start: make(chan int, 1), subs: subs}
	srv := benchServer(b, agent, 2*fanOutWindow)
	req := benchSend("fan-out", "go")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	resp, err := srv.SendMessage(benchCtx(context.Background()), req)
	if err != nil {
		b.Fatal(err)
	}
	taskID := resp.GetTask().GetId()
	<-agent.ready

	total := b.N
	var subscribed, finished sync.WaitGroup
	subscribed.Add(subs)
	finished.Add(subs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range subs {
		go func() {
			defer finished.Done()
			got, first := 0, true
			for ev, err := range srv.SubscribeToTask(benchCtx(ctx), &a2a.SubscribeToTaskRequest{Id: taskID}) {
				if err != nil {
					b.Errorf("subscriber: %v", err)
					if first {
						subscribed.Done()
					}
					return
				}
				if first { // the Task snapshot
					first = false
					subscribed.Done()
					continue
				}
				su := ev.Response.GetStatusUpdate()
				if su == nil || a2a.IsTerminal(su.GetStatus().GetState()) {
					continue
				}
				got++
				if got%fanOutWindow == 0 || got == total {
					agent.window.Done()
				}
			}
			if got != total {
				b.Errorf("subscriber got %d events, want %d", got, total)
			}
		}()
	}
	subscribed.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	agent.start <- total
	finished.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(subs), "ns/delivery")
}
