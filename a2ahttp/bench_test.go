package a2ahttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
)

// benchHTTP is a loopback server (a2ahttp in front of the conformance agent
// on a memory store; JSON-RPC at /, HTTP+JSON at the root as `parley serve`
// mounts them) and a keep-alive client. Allocations reported by these
// benchmarks include the client's.
type benchHTTP struct {
	url    string
	client *http.Client
}

func startBenchHTTP(b *testing.B) *benchHTTP {
	b.Helper()
	s := testkit.StartServer(b, &testkit.Options{Quiet: true, Interfaces: func(string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{Url: "http://127.0.0.1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		}
	}})
	tr := &http.Transport{MaxIdleConns: 4, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return &benchHTTP{url: s.URL, client: &http.Client{Transport: tr}}
}

// do sends a request, drains the answer (so the connection is reused) and
// returns its body when keep is set.
func (e *benchHTTP) do(b *testing.B, req *http.Request, keep bool) []byte {
	req.Header.Set("A2A-Version", "1.0")
	res, err := e.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var body []byte
	if keep || res.StatusCode != http.StatusOK {
		body, err = io.ReadAll(res.Body)
	} else {
		_, err = io.Copy(io.Discard, res.Body)
	}
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b.Fatalf("%s %s: HTTP %d %s", req.Method, req.URL.Path, res.StatusCode, body)
	}
	return body
}

// appendSendParams appends a SendMessageRequest with a fresh messageId (a repeated
// one would be answered from the idempotency record without running the
// agent).
func appendSendParams(b []byte, n int) []byte {
	b = append(b, `{"message":{"messageId":"bench-`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, `","role":"ROLE_USER","parts":[{"text":"hello"}]}}`...)
}

func BenchmarkJSONRPCSendMessage(b *testing.B) {
	e := startBenchHTTP(b)
	buf := make([]byte, 0, 256)
	check := func(body []byte) {
		var r struct {
			Result struct {
				Task struct {
					Status struct{ State string }
				}
			}
		}
		if err := json.Unmarshal(body, &r); err != nil || r.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
			b.Fatalf("unexpected answer %s", body)
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`...)
		buf = append(appendSendParams(buf, n), '}')
		req, _ := http.NewRequest(http.MethodPost, e.url+"/", bytes.NewReader(buf))
		req.Header.Set("Content-Type", "application/json")
		body := e.do(b, req, n == 1)
		if n == 1 {
			check(body)
		}
	}
}

func BenchmarkRESTSendMessage(b *testing.B) {
	e := startBenchHTTP(b)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		buf = appendSendParams(buf[:0], n)
		req, _ := http.NewRequest(http.MethodPost, e.url+"/message:send", bytes.NewReader(buf))
		req.Header.Set("Content-Type", "application/a2a+json")
		body := e.do(b, req, n == 1)
		if n == 1 && !bytes.Contains(body, []byte(`"TASK_STATE_COMPLETED"`)) {
			b.Fatalf("unexpected answer %s", body)
		}
	}
}

func BenchmarkRESTGetTask(b *testing.B) {
	e := startBenchHTTP(b)
	req, _ := http.NewRequest(http.MethodPost, e.url+"/message:send", bytes.NewReader(appendSendParams(nil, 0)))
	req.Header.Set("Content-Type", "application/a2a+json")
	var sent struct{ Task struct{ ID string } }
	if err := json.Unmarshal(e.do(b, req, true), &sent); err != nil || sent.Task.ID == "" {
		b.Fatalf("creating the task: %v", err)
	}
	url := e.url + "/tasks/" + sent.Task.ID
	b.ReportAllocs()
	first := true
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		body := e.do(b, req, first)
		if first && !bytes.Contains(body, []byte(sent.Task.ID)) {
			b.Fatalf("unexpected answer %s", body)
		}
		first = false
	}
}
