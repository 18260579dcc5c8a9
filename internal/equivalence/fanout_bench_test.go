package equivalence_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// fanOutWireWindow is how many events the fan-out agent emits before it
// waits for every subscriber to have read them: the backlog of a reader
// then stays under its buffer (SubscriberBuffer, 256 by default), however
// the scheduler runs the readers.
const fanOutWireWindow = 64

// wireFanOutAgent parks its task in WORKING, then emits WORKING status
// updates with a short agent message, as many as it is told, a window at
// a time, then completes the task.
type wireFanOutAgent struct {
	ready  chan struct{}
	start  chan int
	window sync.WaitGroup
	subs   int
}

func (a *wireFanOutAgent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	close(a.ready)
	total := <-a.start
	for sent := 0; sent < total; {
		k := min(fanOutWireWindow, total-sent)
		a.window.Add(a.subs)
		for i := range k {
			msg := a2a.AgentMessage(fmt.Sprintf("step %d of %d: the work goes on, nothing to report yet", sent+i+1, total))
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, msg); err != nil {
				return err
			}
		}
		sent += k
		a.window.Wait()
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

// BenchmarkFanOutWire is BenchmarkFanOut of package server through the
// wire: one task, 100 SubscribeToTask streams on it over loopback (one
// HTTP/1.1 connection each for JSON-RPC and HTTP+JSON, one HTTP/2
// connection for gRPC), and the agent emits b.N status updates that every
// stream must receive. ns/op is per event published; ns/delivery and
// cpu-ns/delivery (the process's CPU time, readers included) per event
// delivered to one stream. The readers only count SSE ids (gRPC: decode
// each message), so most of the CPU is the server's.
//
//	go test -run '^$' -bench FanOutWire -benchtime 2000x ./internal/equivalence
func BenchmarkFanOutWire(b *testing.B) {
	for _, bd := range bindings {
		b.Run(bd, func(b *testing.B) { benchFanOutWire(b, bd, 100) })
	}
}

func benchFanOutWire(b *testing.B, bd string, subs int) {
	agent := &wireFanOutAgent{ready: make(chan struct{}), start: make(chan int, 1), subs: subs}
	e := start(b, config{agent: agent})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := e.srv.SendMessage(a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: a2a.ProtocolVersion}), &a2a.SendMessageRequest{
		Message:       a2a.UserMessage("fan out"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		b.Fatal(err)
	}
	id := resp.GetTask().GetId()
	<-agent.ready

	total := b.N
	var subscribed, finished sync.WaitGroup
	subscribed.Add(subs)
	finished.Add(subs)
	// count is called for every event a stream reads after the snapshot.
	reader := func(events func(yield func() bool) error) {
		defer finished.Done()
		got, first := 0, true
		err := events(func() bool {
			if first {
				first = false
				subscribed.Done()
				return true
			}
			got++
			if got <= total && (got%fanOutWireWindow == 0 || got == total) {
				agent.window.Done()
			}
			return true
		})
		if first {
			subscribed.Done()
		}
		if err != nil && ctx.Err() == nil {
			b.Errorf("stream: %v", err)
		}
		if got != total+1 { // and COMPLETED
			b.Errorf("stream got %d events, want %d", got, total+1)
		}
	}
	for range subs {
		switch bd {
		case grpcB:
			go reader(func(yield func() bool) error {
				req := connect.NewRequest(&a2a.SubscribeToTaskRequest{Id: id})
				req.Header().Set("A2A-Version", "1.0")
				s, err := e.grpc.SubscribeToTask(ctx, req)
				if err != nil {
					return err
				}
				defer s.Close()
				for s.Receive() {
					yield()
				}
				return s.Err()
			})
		default:
			go reader(func(yield func() bool) error {
				r := fanOutRequest(ctx, e, bd, id)
				res, err := e.hc.Do(r)
				if err != nil {
					return err
				}
				defer res.Body.Close()
				if res.StatusCode != http.StatusOK {
					return fmt.Errorf("HTTP %d", res.StatusCode)
				}
				return countSSE(res.Body, yield)
			})
		}
	}
	subscribed.Wait()
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	agent.start <- total
	finished.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	deliveries := float64(total) * float64(subs)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deliveries, "ns/delivery")
	b.ReportMetric(float64(cpu.Nanoseconds())/deliveries, "cpu-ns/delivery")
	b.ReportMetric(deliveries/b.Elapsed().Seconds(), "deliveries/s")
}

// fanOutRequest is a SubscribeToTask request of a JSON binding.
func fanOutRequest(ctx context.Context, e *env, bd, id string) *http.Request {
	var r *http.Request
	if bd == jsonRPC {
		body := `{"jsonrpc":"2.0","id":"sub-` + id + `","method":"SubscribeToTask","params":{"id":"` + id + `"}}`
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+"/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+"/tasks/"+id+":subscribe", nil)
	}
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Accept", "text/event-stream")
	return r
}

// countSSE calls yield for every event of an SSE body (every "id:" line:
// the core numbers every event of a task stream), without decoding it.
func countSSE(body io.Reader, yield func() bool) error {
	r := bufio.NewReaderSize(body, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("id: ")) && !yield() {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
