package equivalence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
)

// BenchmarkBindings compares the three bindings in one run, on one server
// (the conformance agent, in-memory store) over loopback: a blocking
// SendMessage, and a streamed message producing 100 events (the Task, a
// WORKING status, 97 artifact chunks, COMPLETED). Each iteration is a
// whole call, client included: the request is encoded and the response
// decoded into protocol messages, as a real client does. JSON-RPC and
// HTTP+JSON use HTTP/1.1 keep-alive connections, gRPC one cleartext HTTP/2
// connection.
//
//	go test -run '^$' -bench Bindings -benchmem ./equivalence
func BenchmarkBindings(b *testing.B) {
	e := start(b, plain)
	var seq atomic.Int64
	for _, w := range []struct {
		name, text string
		events     int // 0: unary
	}{
		{"SendMessage", "hello", 0},
		{"Stream100", "stream 97", 100},
	} {
		for _, bd := range bindings {
			b.Run(w.name+"/"+bd, func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					id := "bench-" + strconv.FormatInt(seq.Add(1), 10)
					var n int
					var err error
					switch bd {
					case grpcB:
						n, err = benchGRPC(ctx, e, id, w.text, w.events > 0)
					default:
						n, err = benchJSON(ctx, e, bd, id, w.text, w.events > 0)
					}
					if err != nil {
						b.Fatal(err)
					}
					if w.events > 0 && n != w.events {
						b.Fatalf("%d events, want %d", n, w.events)
					}
				}
			})
		}
	}
}

func benchMessage(id, text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{MessageId: id, Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}}
}

func benchGRPC(ctx context.Context, e *env, id, text string, streaming bool) (int, error) {
	req := connect.NewRequest(benchMessage(id, text))
	req.Header().Set("A2A-Version", "1.0")
	if !streaming {
		res, err := e.grpc.SendMessage(ctx, req)
		if err != nil {
			return 0, err
		}
		if res.Msg.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			return 0, fmt.Errorf("task %v", res.Msg.GetTask().GetStatus())
		}
		return 0, nil
	}
	s, err := e.grpc.SendStreamingMessage(ctx, req)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	n := 0
	for s.Receive() {
		n++
	}
	return n, s.Err()
}

// benchJSON makes one JSON-RPC or HTTP+JSON call, decoding the answer as
// a client does, and returns the number of events of a stream.
func benchJSON(ctx context.Context, e *env, b, id, text string, streaming bool) (int, error) {
	r, err := benchJSONRequest(ctx, e, b, id, text, streaming)
	if err != nil {
		return 0, err
	}
	r.Header.Set("A2A-Version", "1.0")
	resp, err := e.hc.Do(r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	if streaming {
		return benchJSONStream(b, resp.Body)
	}
	return 0, benchJSONUnary(b, resp.Body)
}

// benchJSONRequest builds the request of a (streamed) send.
func benchJSONRequest(ctx context.Context, e *env, b, id, text string, streaming bool) (*http.Request, error) {
	params, err := a2a.Marshal(benchMessage(id, text))
	if err != nil {
		return nil, err
	}
	var r *http.Request
	if b == jsonRPC {
		method := "SendMessage"
		if streaming {
			method = "SendStreamingMessage"
		}
		body := make([]byte, 0, len(params)+64)
		body = append(body, `{"jsonrpc":"2.0","id":1,"method":"`...)
		body = append(body, method...)
		body = append(body, `","params":`...)
		body = append(body, params...)
		body = append(body, '}')
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+"/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		path := "/message:send"
		if streaming {
			path = "/message:stream"
		}
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+path, bytes.NewReader(params))
		r.Header.Set("Content-Type", "application/a2a+json")
	}
	return r, nil
}

// benchJSONUnary decodes the answer of a blocking send, which must be a
// completed task.
func benchJSONUnary(b string, r io.Reader) error {
	body, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if b == jsonRPC {
		if body, err = rpcResult(body); err != nil {
			return err
		}
	}
	var out a2a.SendMessageResponse
	if err := a2a.Unmarshal(body, &out); err != nil {
		return err
	}
	if out.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		return fmt.Errorf("task %v", out.GetTask().GetStatus())
	}
	return nil
}

// benchJSONStream decodes every event of a stream and counts them.
func benchJSONStream(b string, r io.Reader) (int, error) {
	rd := sse.NewReader(r, maxEvent)
	n := 0
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		data := ev.Data
		if b == jsonRPC {
			if data, err = rpcResult(data); err != nil {
				return n, err
			}
		}
		var sr a2a.StreamResponse
		if err := a2a.Unmarshal(data, &sr); err != nil {
			return n, err
		}
		n++
	}
}

// rpcResult returns the result member of a JSON-RPC response.
func rpcResult(b []byte) ([]byte, error) {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, err
	}
	return env.Result, nil
}
