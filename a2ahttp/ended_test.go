package a2ahttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03/v03pb"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// A call whose own context ends (the caller's deadline, the caller gone,
// the server no longer waiting at the end of a shutdown) is no internal
// error, on every entry of the protocol table: the store's failure, which
// wraps the context's error as a database driver does, is logged at DEBUG,
// never ERROR, and answered with the end of the call: gRPC
// DEADLINE_EXCEEDED for a grpc-timeout, UNAVAILABLE (HTTP 503 on the HTTP
// bindings) when the server stops waiting.

// blockingStore holds GetTask of the task "block" until the call's context
// ends, then fails with the context's error wrapped.
type blockingStore struct {
	taskstore.Store
	entered chan struct{}
}

func (s *blockingStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	if id != "block" {
		return s.Store.GetTask(ctx, sc, id)
	}
	s.entered <- struct{}{}
	<-ctx.Done()
	return nil, fmt.Errorf("blocking store: get task: %w", ctx.Err())
}

// logRecords is a slog.Handler that hands every record to a channel.
type logRecords chan slog.Record

func (c logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (c logRecords) Handle(_ context.Context, r slog.Record) error {
	c <- r
	return nil
}
func (c logRecords) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c logRecords) WithGroup(string) slog.Handler      { return c }

// awaitEnd waits for the log line of a failed call: the DEBUG line of a
// call ended by its context, or any line at ERROR (a failure).
func (c logRecords) awaitEnd(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-c:
			if r.Level >= slog.LevelError {
				t.Errorf("logged at %v: %s %v", r.Level, r.Message, r)
				return
			}
			if r.Message == "call ended before its answer" {
				if r.Level != slog.LevelDebug {
					t.Errorf("%q logged at %v, want DEBUG", r.Message, r.Level)
				}
				return
			}
		case <-deadline:
			t.Fatal("no log line of the ended call")
		}
	}
}

// getBlocked is a GetTask of the task "block" in p's wire form.
func getBlocked(t *testing.T, ctx context.Context, base string, p *protocol) *http.Request {
	t.Helper()
	var verb, path, ctype string
	var body []byte
	framed := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte{0, byte(len(b) >> 24), byte(len(b) >> 16), byte(len(b) >> 8), byte(len(b))}, b...)
	}
	switch p.version + " " + p.binding {
	case "1.0 " + a2a.BindingJSONRPC:
		verb, path, ctype, body = "POST", p.sendPath, p.sendType, []byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"block"}}`)
	case "0.3 " + a2a.BindingJSONRPC:
		verb, path, ctype, body = "POST", p.sendPath, p.sendType, []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"block"}}`)
	case "1.0 " + a2a.BindingHTTPJSON:
		verb, path = "GET", "/tasks/block"
	case "0.3 " + a2a.BindingHTTPJSON:
		verb, path = "GET", "/v1/tasks/block"
	case "1.0 " + a2a.BindingGRPC:
		verb, path, ctype, body = "POST", "/lf.a2a.v1.A2AService/GetTask", "application/grpc", framed(&a2a.GetTaskRequest{Id: "block"})
	case "0.3 " + a2a.BindingGRPC:
		verb, path, ctype, body = "POST", "/a2a.v1.A2AService/GetTask", "application/grpc", framed(&v03pb.GetTaskRequest{Name: "tasks/block"})
	default:
		t.Fatalf("no GetTask for %s %s", p.version, p.binding)
	}
	req, err := http.NewRequestWithContext(ctx, verb, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("A2A-Version", p.version)
	return req
}

// do sends req and returns the response with its body read (so that a gRPC
// status in the trailers is there), nil when the request failed.
func do(req *http.Request) *http.Response {
	resp, err := newH2C().Do(req)
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func TestCallEndedIsNoInternalError(t *testing.T) {
	t.Parallel()
	logs := make(logRecords, 1024)
	store := &blockingStore{Store: memstore.New(), entered: make(chan struct{}, 1)}
	stop, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	h, base := matrixServer(t, Options{Logger: slog.New(logs)}, func(o *server.Options, hs *http.Server) {
		o.Store = store
		o.Logger = slog.New(logs)
		hs.BaseContext = func(net.Listener) context.Context { return stop }
	})
	forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
		if p.binding == a2a.BindingGRPC {
			// The caller's deadline, met in the store.
			req := getBlocked(t, context.Background(), base, p)
			req.Header.Set("Grpc-Timeout", "100m")
			if got := outcome(do(req)); got != "grpc 4" {
				t.Errorf("GetTask with grpc-timeout 100m: %s, want grpc 4 (DEADLINE_EXCEEDED)", got)
			}
			<-store.entered
			logs.awaitEnd(t)
			// A deadline already past when the call arrives.
			req = getBlocked(t, context.Background(), base, p)
			req.Header.Set("Grpc-Timeout", "1n")
			if got := outcome(do(req)); got != "grpc 4" {
				t.Errorf("GetTask with grpc-timeout 1n: %s, want grpc 4 (DEADLINE_EXCEEDED)", got)
			}
			select { // connect-go answers it before the handler runs, or the store meets it
			case <-store.entered:
				logs.awaitEnd(t)
			default:
			}
		}

		// The caller leaves while the store works.
		ctx, leave := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); do(getBlocked(t, ctx, base, p)) }()
		<-store.entered
		leave()
		<-done
		logs.awaitEnd(t)
	})

	// The server stops waiting (as a2ahttp.Server does at the end of a
	// shutdown's grace) while callers still wait: every protocol's caller
	// is told to retry. Each protocol gets its own server, since the base
	// context ends once.
	for i := range h.protocols {
		p := &h.protocols[i]
		t.Run("stopped/"+p.version+"/"+p.binding, func(t *testing.T) {
			t.Parallel()
			logs := make(logRecords, 1024)
			store := &blockingStore{Store: memstore.New(), entered: make(chan struct{}, 1)}
			stop, stopWaiting := context.WithCancel(context.Background())
			defer stopWaiting()
			_, base := matrixServer(t, Options{Logger: slog.New(logs)}, func(o *server.Options, hs *http.Server) {
				o.Store = store
				o.Logger = slog.New(logs)
				hs.BaseContext = func(net.Listener) context.Context { return stop }
			})
			answer := make(chan *http.Response, 1)
			go func() { answer <- do(getBlocked(t, context.Background(), base, p)) }()
			<-store.entered
			stopWaiting()
			r := <-answer
			if p.binding == a2a.BindingGRPC {
				if got := outcome(r); got != "grpc 14" {
					t.Errorf("stopped: %s, want grpc 14 (UNAVAILABLE)", got)
				}
			} else if msg := busyRefusal(p, r); msg != "" {
				t.Errorf("stopped: %s", msg)
			}
			logs.awaitEnd(t)
		})
	}
}
