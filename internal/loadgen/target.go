package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// target is the parsed URL and the request bytes of a run.
type target struct {
	ep         *endpoint
	addr, host string
	req        []byte // one request; idOff is where its messageId counter is
	idOff      int    // -1: nothing to rewrite
	// check returns the kind of failure an answer shows, "" when it is
	// the answer the operation expects.
	check func(status int, body []byte) string
	// Streams: numbered says the answers are event streams whose numbers
	// are checked; chunks and cutShare are Config's.
	numbered bool
	chunks   int
	cutShare float64
	// grpcURL is the URL of the procedure a gRPC run calls (BindingGRPC);
	// req is then its message, a gRPC frame.
	grpcURL string
}

// counterDigits is the width of the request counter that ends a messageId.
const counterDigits = 12

// newTarget parses the URL and precomputes the request of cfg's operation
// (creating the task GetTask reads).
func newTarget(ctx context.Context, cfg Config) (*target, error) {
	ep, err := newEndpoint(cfg.URL, cfg.Binding)
	if err != nil {
		return nil, err
	}
	t := &target{ep: ep, addr: ep.addr, host: ep.host}
	if ep.grpc {
		return t, t.grpcOp(ctx, cfg)
	}
	switch cfg.Op {
	case OpSend:
		t.req, t.idOff = ep.send("SendMessage", "/message:send", "", ep.message("hello"))
		t.check = completedCheck(ep.rpc)
	case OpStream:
		msg := ep.message("stream " + strconv.Itoa(cfg.Chunks))
		t.req, t.idOff = ep.send("SendStreamingMessage", "/message:stream", "text/event-stream", msg)
		t.check = streamCheck(ep.rpc, cfg.Chunks)
		t.numbered, t.chunks, t.cutShare = true, cfg.Chunks, cfg.CutShare
	case OpGet:
		id, err := ep.createTask(ctx, cfg.Timeout)
		if err != nil {
			return nil, err
		}
		t.req, t.idOff = ep.getTask(id)
		t.check = taskCheck(ep.rpc, id)
	default:
		return nil, fmt.Errorf("op %q: want send, stream or get", cfg.Op)
	}
	return t, nil
}

// endpoint is where a run's requests go and how they are written.
type endpoint struct {
	addr    string // the address dialled, HOST:PORT
	host    string // the Host header
	base    string // the HTTP+JSON base path, without a trailing slash
	rpcPath string // the JSON-RPC path
	rpc     bool   // JSON-RPC; else HTTP+JSON (or gRPC)
	grpc    bool   // gRPC
	// msgID is the messageId of the requests as built:
	// "lg-RRRRRRRR-WWWW-NNNNNNNNNNNN", with the run, then zeros where each
	// worker writes its number and its counter.
	msgID string
}

// newEndpoint checks the URL and the binding of a run.
func newEndpoint(rawURL, binding string) (*endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http://HOST:PORT[/PATH] (plain HTTP/1.1)", rawURL)
	}
	if binding != BindingJSONRPC && binding != BindingREST && binding != BindingGRPC {
		return nil, fmt.Errorf("binding %q: want jsonrpc, rest or grpc", binding)
	}
	ep := &endpoint{addr: u.Host, host: u.Host, base: strings.TrimSuffix(u.EscapedPath(), "/"),
		rpcPath: u.EscapedPath(), rpc: binding == BindingJSONRPC, grpc: binding == BindingGRPC}
	if u.Port() == "" {
		ep.addr = u.Host + ":80"
	}
	if ep.rpcPath == "" {
		ep.rpcPath = "/"
	}
	run := make([]byte, 8)
	putHex(run, uint64(time.Now().UnixNano()))
	ep.msgID = "lg-" + string(run) + "-0000-" + strings.Repeat("0", counterDigits)
	return ep, nil
}

// message is the JSON of a SendMessageRequest whose user message holds
// text.
func (ep *endpoint) message(text string) string {
	return `{"message":{"messageId":"` + ep.msgID + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
}

// rpcBody is a JSON-RPC request for method.
func rpcBody(method, params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

// post is a POST request of body to path, and where the messageId
// counter is in it (-1 when the body holds no messageId).
func (ep *endpoint) post(path, ctype, accept, body string) (req []byte, idOff int) {
	h := "POST " + path + " HTTP/1.1\r\nHost: " + ep.host + "\r\nA2A-Version: 1.0\r\nContent-Type: " + ctype + "\r\n"
	if accept != "" {
		h += "Accept: " + accept + "\r\n"
	}
	h += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	idOff = -1
	if i := strings.Index(body, ep.msgID); i >= 0 {
		idOff = len(h) + i + len(ep.msgID) - counterDigits
	}
	return []byte(h + body), idOff
}

// send is the request that sends msg: the JSON-RPC method, or a POST to
// restPath below the HTTP+JSON base.
func (ep *endpoint) send(method, restPath, accept, msg string) (req []byte, idOff int) {
	if ep.rpc {
		return ep.post(ep.rpcPath, "application/json", accept, rpcBody(method, msg))
	}
	return ep.post(ep.base+restPath, "application/a2a+json", accept, msg)
}

// getTask is the GetTask request of the task id.
func (ep *endpoint) getTask(id string) (req []byte, idOff int) {
	if ep.rpc {
		return ep.post(ep.rpcPath, "application/json", "", rpcBody("GetTask", `{"id":"`+id+`"}`))
	}
	return []byte("GET " + ep.base + "/tasks/" + url.PathEscape(id) + " HTTP/1.1\r\nHost: " + ep.host + "\r\nA2A-Version: 1.0\r\n\r\n"), -1
}

// createTask sends one blocking message and returns the id of its task.
func (ep *endpoint) createTask(ctx context.Context, timeout time.Duration) (string, error) {
	msg := strings.Replace(ep.message("hello"), "-0000-", "-ffff-", 1) // not a worker's messageId
	req, _ := ep.send("SendMessage", "/message:send", "", msg)
	c := rawConn{redialer: redialer{addr: ep.addr}}
	defer c.close()
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	status, body, err := c.roundTrip(req, deadline)
	if err != nil {
		return "", fmt.Errorf("creating the task to get: %w", err)
	}
	var r struct {
		Task   struct{ ID string }
		Result struct{ Task struct{ ID string } }
	}
	if status != 200 || json.Unmarshal(body, &r) != nil {
		return "", fmt.Errorf("creating the task to get: HTTP %d %.300s", status, body)
	}
	id := r.Task.ID
	if ep.rpc {
		id = r.Result.Task.ID
	}
	if id == "" {
		return "", errors.New("creating the task to get: the answer holds no task id")
	}
	return id, nil
}

// completedCheck accepts the answer of a blocking SendMessage when it
// holds a completed task.
func completedCheck(rpc bool) func(int, []byte) string {
	return func(status int, body []byte) string {
		if k := checkStatus(status, body, rpc); k != "" {
			return k
		}
		if !bytes.Contains(body, []byte(`"TASK_STATE_COMPLETED"`)) {
			return "not completed"
		}
		return ""
	}
}

// streamCheck accepts a stream of at least chunks events whose last one
// says the task completed.
func streamCheck(rpc bool, chunks int) func(int, []byte) string {
	return func(status int, body []byte) string {
		if status != 200 {
			return "http " + strconv.Itoa(status)
		}
		events := bytes.Count(body, []byte("data:"))
		last := body[bytes.LastIndex(body, []byte("data:"))+1:]
		if rpc && bytes.Contains(last, []byte(`"error"`)) {
			return "rpc error"
		}
		if events < chunks || !bytes.Contains(last, []byte(`"TASK_STATE_COMPLETED"`)) {
			return "short stream"
		}
		return ""
	}
}

// taskCheck accepts the answer of GetTask when it holds the task id.
func taskCheck(rpc bool, id string) func(int, []byte) string {
	wantID := []byte(`"id":"` + id + `"`)
	return func(status int, body []byte) string {
		if k := checkStatus(status, body, rpc); k != "" {
			return k
		}
		if !bytes.Contains(body, wantID) {
			return "wrong task"
		}
		return ""
	}
}

// checkStatus returns the kind of failure of an answer that is not a 200,
// or that is a JSON-RPC error; "" otherwise.
func checkStatus(status int, body []byte, rpc bool) string {
	if status != 200 {
		return "http " + strconv.Itoa(status)
	}
	if rpc && !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result"`)) &&
		bytes.Contains(body, []byte(`"error"`)) {
		return "rpc error"
	}
	return ""
}

// putHex writes v in hex, zero-padded, into b.
func putHex(b []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
}
