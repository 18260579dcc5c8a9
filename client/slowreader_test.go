package client_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// laggingChunks is a burst of chunks sent back to back: with a subscriber
// buffer of one event (16 for a lone stream), the stream's writer falls
// behind the agent at once and reads most of the stream from the task's
// event log.
const laggingChunks = 3000

// logReads is a store that counts the reads of its event log.
type logReads struct {
	taskstore.Store
	n atomic.Int64
}

func (s *logReads) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	s.n.Add(1)
	return s.Store.Events(ctx, sc, id, after, limit)
}

// startLagging starts a server whose readers fall behind after a few events.
func startLagging(t *testing.T) (*testkit.Server, *logReads) {
	store := &logReads{Store: memstore.New()}
	s := testkit.StartServer(t, &testkit.Options{Store: store, Quiet: true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.SubscriberBuffer = 1 }})
	return s, store
}

// TestLaggingReaderWire: a reader that reads slower than the agent emits is
// not cut off: on every binding it gets the whole stream, every event once
// and in order (SSE ids and gRPC's first-event-id count from 1 without a
// gap), the chunks in order, ending COMPLETED; the events it fell behind on
// came from the task's log.
func TestLaggingReaderWire(t *testing.T) {
	t.Parallel()
	text := "stream " + strconv.Itoa(laggingChunks)
	body := `{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
	check := func(t *testing.T, store *logReads, ids []uint64, datas []string) {
		t.Helper()
		if len(ids) != laggingChunks+3 { // the task, WORKING, the chunks, COMPLETED
			t.Fatalf("%d events; want %d", len(ids), laggingChunks+3)
		}
		for i, id := range ids {
			if id != uint64(i+1) {
				t.Fatalf("event %d has id %d; want %d", i, id, i+1)
			}
		}
		for i, d := range datas[2 : len(datas)-1] {
			if !strings.Contains(d, `"text":"chunk `+strconv.Itoa(i)+`"`) {
				t.Fatalf("event %d is %s; want chunk %d", i+2, d, i)
			}
		}
		if last := datas[len(datas)-1]; !strings.Contains(last, "TASK_STATE_COMPLETED") {
			t.Fatalf("last event %s; want COMPLETED", last)
		}
		if store.n.Load() == 0 {
			t.Errorf("the event log was never read: the reader never fell behind, and the test proved nothing")
		}
	}
	sseCase := func(path, contentType string, wrap func(string) string) func(t *testing.T) {
		return func(t *testing.T) {
			t.Parallel()
			s, store := startLagging(t)
			evs := postSSE(t, s.URL+path, contentType, wrap(strings.Replace(body, "%s", a2a.NewID(), 1)))
			ids, datas := make([]uint64, len(evs)), make([]string, len(evs))
			for i, ev := range evs {
				ids[i] = ev.ID
				datas[i] = string(ev.Data)
			}
			check(t, store, ids, datas)
		}
	}
	t.Run("JSONRPC", sseCase("/", "application/json", func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":` + params + `}`
	}))
	t.Run("HTTP+JSON", sseCase("/message:stream", "application/a2a+json", func(b string) string { return b }))
	t.Run("GRPC", func(t *testing.T) {
		t.Parallel()
		s, store := startLagging(t)
		c := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())
		req := connect.NewRequest(&a2a.SendMessageRequest{Message: a2a.UserMessage(text)})
		req.Header().Set("A2A-Version", "1.0")
		st, err := c.SendStreamingMessage(testCtx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var ids []uint64
		var datas []string
		for st.Receive() {
			if ids == nil {
				first, _ := strconv.ParseUint(st.ResponseHeader().Get("first-event-id"), 10, 64)
				ids = append(ids, first)
			} else {
				ids = append(ids, ids[len(ids)-1]+1)
			}
			b, _ := a2a.AppendJSON(nil, st.Msg())
			datas = append(datas, string(b))
		}
		if err := st.Err(); err != nil {
			t.Fatalf("after %d events: %v", len(ids), err)
		}
		check(t, store, ids, datas)
	})
}

// postSSE posts body and reads the whole event stream.
func postSSE(t *testing.T, url, contentType, body string) []sse.Event {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return testkit.ReadSSE(t, resp.Body, "error", "message")
}

// TestLaggingReaderNeverResumes: the client library reading a stream it
// falls behind on never has to resume it, on any binding, and its iterator
// yields the task's whole log.
func TestLaggingReaderNeverResumes(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s, store := startLagging(t)
			var resumed atomic.Int64
			c, err := client.New(s.Card, &client.Options{Transports: []client.TransportFactory{b.factory}, Resumes: 50,
				OnResume: func(string, uint64, error) { resumed.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t),
				&a2a.SendMessageRequest{Message: a2a.UserMessage("stream " + strconv.Itoa(laggingChunks))}))
			if err != nil {
				t.Fatalf("stream error after %d events: %v", len(evs), err)
			}
			log, err := store.Events(context.Background(), taskstore.Scope{}, evs[0].TaskID(), 0, 10_000)
			if err != nil {
				t.Fatal(err)
			}
			compareLog(t, evs, log)
			if n := resumed.Load(); n != 0 {
				t.Errorf("the client resumed %d times; want a stream that was never cut", n)
			}
		})
	}
}
