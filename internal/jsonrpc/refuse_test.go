package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/transport"
)

// TestRefusedStreamShape: a stream refused before its first event
// (SubscribeToTask of an unknown or a finished task) is one SSE event
// holding the JSON-RPC error response when the request accepts
// text/event-stream, and a plain JSON-RPC error body otherwise; Parley's
// own Transport reads the error from either.
func TestRefusedStreamShape(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := jsonrpc.NewTransport(srv.URL+"/", transport.Config{HTTPClient: http.DefaultClient, Header: http.Header{"A2A-Version": {"1.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.Call(ctx, a2a.MethodByName(a2a.MethodSendMessage), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	done := resp.(*a2a.SendMessageResponse).GetTask()
	if !a2a.IsTerminal(done.GetStatus().GetState()) {
		t.Fatalf("SendMessage(hello) = %v, want a finished task", done)
	}
	for _, c := range []struct {
		name, task string
		code       int
		want       error
	}{
		{"unknown task", "no-such-task", -32001, a2a.ErrTaskNotFound},
		{"finished task", done.GetId(), -32004, a2a.ErrUnsupportedOperation},
	} {
		body := `{"jsonrpc":"2.0","id":"r-7","method":"SubscribeToTask","params":{"id":"` + c.task + `"}}`
		for _, accept := range []string{"text/event-stream", "application/json, text/event-stream", "", "application/json", "text/event-stream;q=0"} {
			hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/", strings.NewReader(body))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("A2A-Version", "1.0")
			if accept != "" {
				hr.Header.Set("Accept", accept)
			}
			res, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s, Accept %q: status %d, want 200", c.name, accept, res.StatusCode)
			}
			wantSSE := strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "q=0")
			data := raw
			if ct := res.Header.Get("Content-Type"); wantSSE {
				if ct != "text/event-stream" {
					t.Fatalf("%s, Accept %q: Content-Type %q, want text/event-stream (%s)", c.name, accept, ct, raw)
				}
				evs := testkit.ReadSSE(t, bytes.NewReader(raw))
				if len(evs) != 1 {
					t.Fatalf("%s, Accept %q: %d events, want 1: %q", c.name, accept, len(evs), raw)
				}
				data = evs[0].Data
			} else if ct != "application/json" {
				t.Fatalf("%s, Accept %q: Content-Type %q, want application/json (%s)", c.name, accept, ct, raw)
			}
			var env struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(data, &env); err != nil || env.JSONRPC != "2.0" || string(env.ID) != `"r-7"` || env.Error.Code != c.code {
				t.Errorf("%s, Accept %q: response %s (%v), want a JSON-RPC error %d with id \"r-7\"", c.name, accept, data, err, c.code)
			}
		}
		var got error
		n := 0
		for _, err := range tr.Stream(ctx, a2a.MethodByName(a2a.MethodSubscribeToTask), &a2a.SubscribeToTaskRequest{Id: c.task}) {
			n++
			got = err
		}
		if n != 1 || !errors.Is(got, c.want) {
			t.Errorf("Transport.Stream(SubscribeToTask %s) = %d items ending in %v, want one error %v", c.name, n, got, c.want)
		}
	}
}
