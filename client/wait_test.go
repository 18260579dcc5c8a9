package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// cutSubscribe ends every SubscribeToTask response after its first event,
// the way a server (or proxy) that closes streams early does.
type cutSubscribe struct {
	h    http.Handler
	cuts atomic.Int64
}

type cutWriter struct {
	http.ResponseWriter
	cancel context.CancelFunc
	grpc   bool
}

// Write passes the first event on, then ends the handler's request, so
// the handler closes the stream cleanly (gRPC: with UNAVAILABLE).
func (w *cutWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("data:")) || (w.grpc && len(b) > 0) {
		w.cancel()
	}
	return n, err
}

func (w *cutWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (c *cutSubscribe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasSuffix(r.URL.Path, ":subscribe") || strings.HasSuffix(r.URL.Path, "/SubscribeToTask") ||
		bytes.Contains(body, []byte(`"SubscribeToTask"`)) {
		c.cuts.Add(1)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		r = r.WithContext(ctx)
		w = &cutWriter{ResponseWriter: w, cancel: cancel, grpc: isGRPC(r)}
	}
	c.h.ServeHTTP(w, r)
}

// TestWaitForCompletion follows tasks with and without streaming.
func TestWaitForCompletion(t *testing.T) {
	t.Parallel()
	noStream := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.Streaming = ptr(false) }
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name  string
				cfg   config
				claim bool // the client's card claims streaming
				cut   bool
				text  string
				state a2a.TaskState
			}{
				{name: "streaming", text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "polling", cfg: config{mutate: noStream}, text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "server refuses streams", cfg: config{mutate: noStream}, claim: true, text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "streams cut", cut: true, text: "slow 600", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "input required", text: "input-required", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED},
				{name: "already done", text: "fail", state: a2a.TaskState_TASK_STATE_FAILED},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					cs := &cutSubscribe{}
					if tc.cut {
						tc.cfg.wrap = func(h http.Handler) http.Handler { cs.h = h; return cs }
					}
					e := start(t, tc.cfg)
					if tc.claim {
						e.card = proto.Clone(e.card).(*a2a.AgentCard)
						e.card.Capabilities.Streaming = ptr(true)
					}
					c := e.client(b, &client.Options{PollInterval: 20 * time.Millisecond})
					task := send(t, c, tc.text, &a2a.SendMessageConfiguration{ReturnImmediately: true})
					ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
					defer cancel()
					got, err := c.WaitForCompletion(ctx, task.Id)
					if err != nil || got.GetStatus().GetState() != tc.state || got.Id != task.Id {
						t.Fatalf("WaitForCompletion = %v, %v; want the task in %v", got, err, tc.state)
					}
					if tc.state == a2a.TaskState_TASK_STATE_COMPLETED && len(got.Artifacts) != 1 {
						t.Errorf("artifacts = %v, want the echo", got.Artifacts)
					}
					if tc.cut && cs.cuts.Load() < 2 {
						t.Errorf("%d subscriptions, want a resubscription after the cut", cs.cuts.Load())
					}
				})
			}
			t.Run("unknown task", func(t *testing.T) {
				t.Parallel()
				e := start(t, config{})
				_, err := e.client(b, nil).WaitForCompletion(testCtx(t), "nope")
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("WaitForCompletion(unknown) = %v, want TaskNotFound", err)
				}
			})
		})
	}
}

// refuseSubscribe answers every SubscribeToTask with the error code, in
// the binding's shape, and passes every other request on to h. With
// TaskNotFound it is the official Go SDK's server, which refuses to
// subscribe to any task it is not executing at the moment ("no active
// execution"), finished or interrupted.
func refuseSubscribe(code a2a.Code) func(h http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var rpc struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(body, &rpc)
			switch {
			case isGRPC(r) && strings.HasSuffix(r.URL.Path, "/SubscribeToTask"):
				status, _ := code.GRPCStatus()
				w.Header().Set("Content-Type", "application/grpc")
				w.Header().Set("Grpc-Status", strconv.Itoa(status))
				w.Header().Set("Grpc-Message", "refused")
				w.WriteHeader(http.StatusOK)
			case rpc.Method == a2a.MethodSubscribeToTask:
				writeFakeError(w, true, rpc.ID, a2a.NewError(code, "refused"))
			case strings.HasSuffix(r.URL.Path, ":subscribe"):
				writeFakeError(w, false, nil, a2a.NewError(code, "refused"))
			default:
				h.ServeHTTP(w, r)
			}
		})
	}
}

// TestWaitForCompletionRefused: a subscription refused with one of the
// errors the spec gives SubscribeToTask (TaskNotFound here; the
// UnsupportedOperation of a server that does not stream is "server
// refuses streams" above) is followed by GetTask, which decides: a
// finished or interrupted task is returned, a running one is polled to
// its end, an unknown one is TaskNotFound. Any other error is returned as
// it is.
func TestWaitForCompletionRefused(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name    string
				refusal a2a.Code
				text    string // "" waits for an unknown task
				state   a2a.TaskState
				err     error // the error wanted instead of a task
			}{
				{name: "finished", refusal: a2a.CodeTaskNotFound, text: "fail", state: a2a.TaskState_TASK_STATE_FAILED},
				{name: "interrupted", refusal: a2a.CodeTaskNotFound, text: "input-required", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED},
				{name: "running", refusal: a2a.CodeTaskNotFound, text: "slow 300", state: a2a.TaskState_TASK_STATE_COMPLETED},
				{name: "unknown", refusal: a2a.CodeTaskNotFound, err: a2a.ErrTaskNotFound},
				{name: "other error", refusal: a2a.CodeInternal, text: "slow 300", err: a2a.ErrInternal},
			} {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					e := start(t, config{wrap: refuseSubscribe(tc.refusal)})
					c := e.client(b, &client.Options{PollInterval: 20 * time.Millisecond})
					id := "nope"
					if tc.text != "" {
						id = send(t, c, tc.text, &a2a.SendMessageConfiguration{ReturnImmediately: true}).Id
					}
					ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
					defer cancel()
					got, err := c.WaitForCompletion(ctx, id)
					if tc.err != nil {
						if !errors.Is(err, tc.err) {
							t.Fatalf("WaitForCompletion = %v, %v; want %v", got, err, tc.err)
						}
						return
					}
					if err != nil || got.GetStatus().GetState() != tc.state || got.Id != id {
						t.Fatalf("WaitForCompletion = %v, %v; want the task in %v", got, err, tc.state)
					}
				})
			}
		})
	}
}
