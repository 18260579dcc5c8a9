package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// env is one Parley server (conformance agent) on a loopback port.
type env struct {
	t    *testing.T
	url  string
	card *a2a.AgentCard
	srv  *server.Server
	runs *atomic.Int64 // how many times the agent ran
}

// config adjusts a test server.
type config struct {
	tokens map[string]string
	// mutate changes the card (and server options) before the server
	// starts; the card is both served and given to clients.
	mutate func(card *a2a.AgentCard, o *server.Options)
	// wrap puts a handler in front of Parley's.
	wrap func(h http.Handler) http.Handler
	// ifaces overrides the card's interfaces; base is the server's URL,
	// "http://" followed by the gRPC dial target (see hostOf).
	ifaces func(base string) []*a2a.AgentInterface
}

// hostOf returns the host:port of an http or https URL: the url of a GRPC
// interface on the same server.
func hostOf(base string) string {
	return strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
}

// start runs the conformance agent behind a2ahttp, serving JSON-RPC,
// HTTP+JSON and gRPC on one loopback port (HTTP/1.1 and cleartext HTTP/2,
// as parley serve does).
func start(t *testing.T, cfg config) *env {
	t.Helper()
	runs := &atomic.Int64{}
	inner := agents.Conformance()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		runs.Add(1)
		return inner.Execute(ctx, req, em)
	})
	s := testkit.StartServer(t, &testkit.Options{
		Agent:      agent,
		Tokens:     cfg.tokens,
		Mutate:     cfg.mutate,
		Wrap:       cfg.wrap,
		Interfaces: cfg.ifaces,
	})
	return &env{t: t, url: s.URL, card: s.Card, srv: s.Core, runs: runs}
}

// binding is one row of the binding table every behaviour test runs over.
type binding struct {
	name    string
	factory client.TransportFactory
}

var bindings = []binding{
	{a2a.BindingJSONRPC, client.JSONRPC()},
	{a2a.BindingHTTPJSON, client.REST()},
	{a2a.BindingGRPC, client.GRPC()},
}

// isGRPC reports whether a request is a gRPC call.
func isGRPC(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// grpcMessage decodes the first message of a gRPC request body (a 5-byte
// prefix, then the message) into m.
func grpcMessage(body []byte, m proto.Message) error {
	if len(body) < 5 {
		return io.ErrUnexpectedEOF
	}
	return proto.Unmarshal(body[5:], m)
}

// client returns a Client restricted to one binding.
func (e *env) client(b binding, o *client.Options) *client.Client {
	e.t.Helper()
	var opts client.Options
	if o != nil {
		opts = *o
	}
	opts.Transports = []client.TransportFactory{b.factory}
	if opts.RetryDelay == 0 {
		opts.RetryDelay = 5 * time.Millisecond
	}
	c, err := client.New(e.card, &opts)
	if err != nil {
		e.t.Fatalf("client.New: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// ctx returns a context that ends with the test (at most 20 s).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// send sends a text message and returns the task it made.
func send(t *testing.T, c *client.Client, text string, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	t.Helper()
	resp, err := c.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage(text), Configuration: cfg})
	if err != nil {
		t.Fatalf("SendMessage(%q) = %v", text, err)
	}
	if resp.GetTask() == nil {
		t.Fatalf("SendMessage(%q) = %v, want a task", text, resp)
	}
	return resp.GetTask()
}

// closedURL returns an http URL on a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	return "http://" + testkit.FreeAddr(t)
}

// recorder keeps the requests a wrapped handler saw.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	proto               int // HTTP major version
	method, path, query string
	header              http.Header
	body                []byte
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

// isA2AError reports whether err is an *a2a.Error with the code.
func isA2AError(err error, code a2a.Code) bool {
	var e *a2a.Error
	return errors.As(err, &e) && e.Code == code
}

// wrap records every request and passes it on to h.
func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{proto: req.ProtoMajor, method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}
