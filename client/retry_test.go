package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// flaky sits in front of Parley and fails the first matching request
// after Parley handled it: "drop" closes the connection without an
// answer, "503" answers Service Unavailable. It records the messageIds it
// saw.
type flaky struct {
	h      http.Handler
	mode   string
	match  func(r *http.Request, body []byte) bool
	failed atomic.Bool
	count  atomic.Int64
	mu     sync.Mutex
	ids    []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if f.match != nil && !f.match(r, body) {
		f.h.ServeHTTP(w, r)
		return
	}
	f.count.Add(1)
	var probe struct {
		Message struct {
			MessageID string `json:"messageId"`
		} `json:"message"`
		Params struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		} `json:"params"`
	}
	json.Unmarshal(body, &probe)
	if isGRPC(r) {
		sm := &a2a.SendMessageRequest{}
		if grpcMessage(body, sm) == nil {
			probe.Message.MessageID = sm.GetMessage().GetMessageId()
		}
	}
	f.mu.Lock()
	f.ids = append(f.ids, probe.Message.MessageID+probe.Params.Message.MessageID)
	f.mu.Unlock()
	if f.failed.Swap(true) {
		f.h.ServeHTTP(w, r)
		return
	}
	// The server does the work; the answer is lost on the way back.
	f.h.ServeHTTP(httptest.NewRecorder(), r)
	switch f.mode {
	case "drop":
		if r.ProtoMajor == 2 {
			panic(http.ErrAbortHandler) // HTTP/2: the stream is reset
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case "503":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "upstream unavailable")
	}
}

func isSend(r *http.Request, body []byte) bool {
	return strings.HasPrefix(r.URL.Path, "/message:") || strings.HasSuffix(r.URL.Path, "/SendMessage") ||
		strings.HasSuffix(r.URL.Path, "/SendStreamingMessage") || bytes.Contains(body, []byte(`"method":"SendMessage"`)) ||
		bytes.Contains(body, []byte(`"method":"SendStreamingMessage"`))
}

// TestRetries: transport failures are retried with the same messageId, so
// the agent runs once and one task exists; server errors are not retried.
func TestRetries(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"drop", "503"} {
				for _, streaming := range []bool{false, true} {
					name := mode
					if streaming {
						name += " stream"
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						checkRetried(t, b, mode, streaming)
					})
				}
			}

			for _, tc := range []struct {
				name string
				run  func(t *testing.T, b binding)
			}{
				{"no retries", retryNone},
				{"server errors are not retried", retryNotServerErrors},
				{"unsafe operation", retryNotUnsafe},
			} {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, b)
				})
			}
		})
	}
}

// checkRetried sends a message through a proxy that loses the first
// answer (mode "drop" or "503") and checks that the retry reused the
// messageId: the agent ran once and one task exists.
func checkRetried(t *testing.T, b binding, mode string, streaming bool) {
	f := &flaky{mode: mode, match: isSend}
	e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
	c := e.client(b, nil)
	ctx := testCtx(t)
	req := &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("hello")}}}
	if streaming {
		evs, err := testkit.Collect(c.SendStreamingMessage(ctx, req))
		if err != nil || len(evs) == 0 {
			t.Fatalf("SendStreamingMessage = %q, %v", testkit.Kinds(evs), err)
		}
		last := evs[len(evs)-1].Response
		if last.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED &&
			last.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("stream ended with %q, want COMPLETED", testkit.Kinds(evs))
		}
	} else if resp, err := c.SendMessage(ctx, req); err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage = %v, %v", resp, err)
	}
	if req.Message.MessageId != "" {
		t.Errorf("the caller's request was modified")
	}
	f.mu.Lock()
	ids := append([]string(nil), f.ids...)
	f.mu.Unlock()
	if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("messageIds sent = %q, want the same one twice", ids)
	}
	if n := e.runs.Load(); n != 1 {
		t.Errorf("the agent ran %d times, want 1", n)
	}
	list, err := c.ListTasks(ctx, nil)
	if err != nil || list.TotalSize != 1 {
		t.Errorf("ListTasks = %v, %v; want exactly one task", list, err)
	}
}

// retryNone: with Retries -1 a lost answer is a request-phase TransportError
// after one attempt.
func retryNone(t *testing.T, b binding) {
	f := &flaky{mode: "drop", match: isSend}
	e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
	c := e.client(b, &client.Options{Retries: -1})
	_, err := c.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	var te *client.TransportError
	if !errors.As(err, &te) || te.Phase != client.PhaseRequest || !te.Temporary() {
		t.Fatalf("SendMessage = %v (%T), want a request-phase TransportError", err, err)
	}
	if f.count.Load() != 1 {
		t.Errorf("%d attempts, want 1", f.count.Load())
	}
}

// retryNotServerErrors: an error the server sends is not retried.
func retryNotServerErrors(t *testing.T, b binding) {
	f := &flaky{mode: "none"}
	f.failed.Store(true)
	e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
	c := e.client(b, nil)
	if _, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask = %v", err)
	}
	if f.count.Load() != 1 {
		t.Errorf("%d attempts, want 1", f.count.Load())
	}
}

// retryNotUnsafe: a lost answer of an operation that is not idempotent is
// not retried.
func retryNotUnsafe(t *testing.T, b binding) {
	f := &flaky{mode: "503", match: func(r *http.Request, body []byte) bool {
		return strings.Contains(r.URL.Path, "pushNotificationConfigs") || bytes.Contains(body, []byte("CreateTaskPushNotificationConfig")) ||
			strings.HasSuffix(r.URL.Path, "/CreateTaskPushNotificationConfig")
	}}
	e := start(t, config{wrap: func(h http.Handler) http.Handler { f.h = h; return f }})
	c := e.client(b, nil)
	task := send(t, c, "hello", nil)
	_, err := c.CreateTaskPushNotificationConfig(testCtx(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "http://127.0.0.1:9/hook"})
	var te *client.TransportError
	if !errors.As(err, &te) || te.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("CreateTaskPushNotificationConfig = %v, want a 503 TransportError", err)
	}
	if f.count.Load() != 1 {
		t.Errorf("%d attempts of a non-idempotent call, want 1", f.count.Load())
	}
}
