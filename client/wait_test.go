package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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
