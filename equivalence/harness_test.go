package equivalence_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2a/a2aconnect"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

var discardLogger = slog.New(slog.DiscardHandler)

// The three bindings, by the names the agent card uses.
const (
	jsonRPC = a2a.BindingJSONRPC
	restB   = a2a.BindingHTTPJSON
	grpcB   = a2a.BindingGRPC
)

var bindings = []string{jsonRPC, restB, grpcB}

// config adjusts a test server.
type config struct {
	agent   server.Agent
	tokens  map[string]string
	maxBody int64
	// failID makes the store fail (an internal error) on reads of this
	// task id.
	failID string
	mutate func(card *a2a.AgentCard, o *server.Options)
}

// env is one Parley server serving the three bindings on one loopback
// port, as `parley serve` does: HTTP/1.1 and cleartext HTTP/2.
type env struct {
	t    testing.TB
	base string
	card *a2a.AgentCard
	srv  *server.Server
	hc   *http.Client // HTTP/1.1, for the JSON bindings
	h2c  *http.Client // cleartext HTTP/2, for gRPC
	grpc a2aconnect.A2AServiceClient
}

// failingStore fails reads of one task id, to produce internal errors.
type failingStore struct {
	taskstore.Store
	id string
}

func (s failingStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	if id == s.id {
		return nil, errors.New("the disk is on fire")
	}
	return s.Store.GetTask(ctx, sc, id)
}

func start(t testing.TB, cfg config) *env {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	host := hs.Listener.Addr().String()
	base := "http://" + host
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{Url: host, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	agent := cfg.agent
	if agent == nil {
		agent = agents.Conformance()
	}
	var store taskstore.Store = memstore.New()
	if cfg.failID != "" {
		store = failingStore{store, cfg.failID}
	}
	opts := &server.Options{Card: card, Agent: agent, Store: store, RequireAuth: len(cfg.tokens) > 0,
		Logger: discardLogger}
	if cfg.mutate != nil {
		cfg.mutate(card, opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, Tokens: cfg.tokens, MaxBody: cfg.maxBody, KeepAlive: -1, Logger: discardLogger})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = h
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: &http.Transport{Protocols: p}}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		h2c.CloseIdleConnections()
		hc.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return &env{t: t, base: base, card: card, srv: srv, hc: hc, h2c: h2c,
		grpc: a2aconnect.NewA2AServiceClient(h2c, base, connect.WithGRPC())}
}

// callOpts are the service parameters and credentials of a call.
type callOpts struct {
	version    *string // nil means "1.0"; "" sends none
	token      string
	extensions string
}

func (o callOpts) header() http.Header {
	h := http.Header{}
	v := "1.0"
	if o.version != nil {
		v = *o.version
	}
	if v != "" {
		h.Set("A2A-Version", v)
	}
	if o.token != "" {
		h.Set("Authorization", "Bearer "+o.token)
	}
	if o.extensions != "" {
		h.Set("A2A-Extensions", o.extensions)
	}
	return h
}

// outcome is the result of one call in a form common to the bindings.
type outcome struct {
	// value is a unary call's response message.
	value proto.Message
	// events are a stream's events, in order.
	events []*a2a.StreamResponse
	// err is the error that failed the call or ended the stream.
	err *wireErr
	// extensions is the A2A-Extensions response header (gRPC: metadata).
	extensions string
	// challenge is the WWW-Authenticate response header.
	challenge string
}

// wireErr is an error as the client saw it.
type wireErr struct {
	code    a2a.Code
	message string
	reason  string
	domain  string
	meta    map[string]string
	fields  []string // google.rpc.BadRequest field violations
}

func (w *wireErr) String() string {
	return fmt.Sprintf("%s %q reason=%q meta=%v fields=%v", w.code.Name(), w.message, w.reason, w.meta, w.fields)
}

// responseType returns an empty response message of an operation, from the
// service descriptor.
func responseType(method string) proto.Message {
	md := a2a.File_a2a_proto.Services().Get(0).Methods().ByName(protoreflect.Name(method))
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		panic(err)
	}
	return mt.New().Interface()
}

// ---------------------------------------------------------------------------
// Raw wire: one client per binding.

// source is an open event stream.
type source interface {
	// recv returns the next event; at the end it returns nil and the error
	// that ended the stream (nil for a normal end).
	recv() (*a2a.StreamResponse, *wireErr)
	close()
}

// errSource is a stream that failed before its first event.
type errSource struct{ err *wireErr }

func (s errSource) recv() (*a2a.StreamResponse, *wireErr) { return nil, s.err }
func (s errSource) close()                                {}

// unary performs a unary call over a binding.
func (e *env) unary(ctx context.Context, b, method string, req proto.Message, o callOpts) outcome {
	switch b {
	case grpcB:
		return e.grpcUnary(ctx, method, req, o)
	default:
		r := e.httpRequest(ctx, b, method, req, o)
		resp, err := e.hc.Do(r)
		if err != nil {
			e.t.Fatalf("%s %s: %v", r.Method, r.URL, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			e.t.Fatalf("%s %s: reading the body: %v", r.Method, r.URL, err)
		}
		out := outcome{extensions: resp.Header.Get("A2A-Extensions"), challenge: resp.Header.Get("WWW-Authenticate")}
		out.value, out.err = e.decodeJSON(b, method, resp.StatusCode, body)
		return out
	}
}

// open starts a streaming call over a binding.
func (e *env) open(ctx context.Context, b, method string, req proto.Message, o callOpts) (source, outcome) {
	if b == grpcB {
		return e.grpcOpen(ctx, method, req, o)
	}
	r := e.httpRequest(ctx, b, method, req, o)
	resp, err := e.hc.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	out := outcome{extensions: resp.Header.Get("A2A-Extensions"), challenge: resp.Header.Get("WWW-Authenticate")}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		_, werr := e.decodeJSON(b, method, resp.StatusCode, body)
		if werr == nil {
			e.t.Fatalf("%s: a stream answered %d %s without an error", method, resp.StatusCode, body)
		}
		return errSource{werr}, out
	}
	return &sseSource{e: e, b: b, status: resp.StatusCode, body: resp.Body, r: bufio.NewReader(resp.Body)}, out
}

// httpRequest builds the JSON-RPC or HTTP+JSON request of an operation.
func (e *env) httpRequest(ctx context.Context, b, method string, req proto.Message, o callOpts) *http.Request {
	e.t.Helper()
	var params []byte = []byte("{}")
	if req != nil {
		var err error
		if params, err = a2a.Marshal(req); err != nil {
			e.t.Fatal(err)
		}
	}
	var r *http.Request
	if b == jsonRPC {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"req-1","method":%q,"params":%s}`, method, params)
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+"/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = e.restRequest(ctx, method, params)
	}
	for k, v := range o.header() {
		r.Header[k] = v
	}
	return r
}

// restRequest maps a request message onto its HTTP+JSON route: path
// variables and the tenant go into the path, the rest into the body (POST)
// or the query string (GET, DELETE).
func (e *env) restRequest(ctx context.Context, method string, params []byte) *http.Request {
	m := a2a.MethodByName(method)
	if m == nil { // an operation that does not exist
		r, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/"+method, nil)
		return r
	}
	p := map[string]any{}
	if err := json.Unmarshal(params, &p); err != nil {
		e.t.Fatal(err)
	}
	path := m.Path
	for _, name := range []string{"taskId", "id"} {
		if ph := "{" + name + "}"; strings.Contains(path, ph) {
			v, _ := p[name].(string)
			path = strings.Replace(path, ph, url.PathEscape(v), 1)
			delete(p, name)
		}
	}
	if ten, _ := p["tenant"].(string); ten != "" {
		path = "/" + url.PathEscape(ten) + path
		delete(p, "tenant")
	}
	var body io.Reader
	if m.HTTPMethod == "POST" {
		b, _ := json.Marshal(p)
		body = bytes.NewReader(b)
	} else if len(p) > 0 {
		q := url.Values{}
		for k, v := range p {
			switch x := v.(type) {
			case string:
				q.Set(k, x)
			case float64:
				q.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
			case bool:
				q.Set(k, strconv.FormatBool(x))
			default:
				e.t.Fatalf("%s: %s cannot go in a query string", method, k)
			}
		}
		path += "?" + q.Encode()
	}
	r, _ := http.NewRequestWithContext(ctx, m.HTTPMethod, e.base+path, body)
	if body != nil {
		r.Header.Set("Content-Type", "application/a2a+json")
	}
	return r
}

// decodeJSON decodes a JSON-RPC or HTTP+JSON unary response.
func (e *env) decodeJSON(b, method string, status int, body []byte) (proto.Message, *wireErr) {
	e.t.Helper()
	if b == jsonRPC {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.JSONRPC != "2.0" {
			e.t.Fatalf("%s: not a JSON-RPC response (%d): %s", method, status, body)
		}
		if env.Error != nil {
			return nil, rpcError(env.Error)
		}
		v := responseType(method)
		if err := a2a.Unmarshal(env.Result, v); err != nil {
			e.t.Fatalf("%s: result does not decode: %v: %s", method, err, body)
		}
		return v, nil
	}
	if status >= 400 {
		var doc struct {
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Error == nil {
			e.t.Fatalf("%s: error response %d is not a google.rpc.Status body: %s", method, status, body)
		}
		return nil, restError(status, doc.Error)
	}
	v := responseType(method)
	if err := a2a.Unmarshal(body, v); err != nil {
		e.t.Fatalf("%s: response does not decode: %v: %s", method, err, body)
	}
	return v, nil
}

// details decodes the JSON form of google.rpc error details.
func details(w *wireErr, raw json.RawMessage) {
	var list []map[string]json.RawMessage
	json.Unmarshal(raw, &list)
	for _, d := range list {
		var typ string
		json.Unmarshal(d["@type"], &typ)
		switch typ {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			json.Unmarshal(d["reason"], &w.reason)
			json.Unmarshal(d["domain"], &w.domain)
			json.Unmarshal(d["metadata"], &w.meta)
		case "type.googleapis.com/google.rpc.BadRequest":
			var fv []struct{ Field string }
			json.Unmarshal(d["fieldViolations"], &fv)
			for _, f := range fv {
				w.fields = append(w.fields, f.Field)
			}
		}
	}
}

// rpcError decodes a JSON-RPC error object. JSON-RPC has no code of its own
// for an oversized request: Parley sends -32600 saying it exceeds the limit.
func rpcError(raw json.RawMessage) *wireErr {
	var o struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	json.Unmarshal(raw, &o)
	w := &wireErr{message: o.Message}
	w.code, _ = a2a.CodeForJSONRPC(o.Code)
	if o.Code == int(a2a.CodeInvalidRequest) && strings.Contains(o.Message, "exceeds the limit") {
		w.code = a2a.CodeRequestTooLarge
	}
	details(w, o.Data)
	return w
}

// restError decodes an HTTP+JSON error body: the ErrorInfo reason names an
// A2A error; other errors are known by their HTTP status.
func restError(status int, raw json.RawMessage) *wireErr {
	var o struct {
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}
	json.Unmarshal(raw, &o)
	w := &wireErr{message: o.Message}
	details(w, o.Details)
	if c, ok := a2a.CodeForReason(w.reason); ok {
		w.code = c
		return w
	}
	switch status {
	case 400:
		w.code = a2a.CodeInvalidParams
	case 401:
		w.code = a2a.CodeUnauthenticated
	case 404, 405:
		w.code = a2a.CodeMethodNotFound
	case 413:
		w.code = a2a.CodeRequestTooLarge
	default:
		w.code = a2a.CodeInternal
	}
	return w
}

// sseSource reads a Server-Sent Events stream of either JSON binding.
type sseSource struct {
	e      *env
	b      string
	status int
	body   io.ReadCloser
	r      *bufio.Reader
	done   bool
}

func (s *sseSource) recv() (*a2a.StreamResponse, *wireErr) {
	if s.done {
		return nil, nil
	}
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.done = true
			if len(data) == 0 {
				return nil, nil
			}
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && len(data) > 0:
			return s.event([]byte(strings.Join(data, "\n")))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
		if s.done {
			return s.event([]byte(strings.Join(data, "\n")))
		}
	}
}

func (s *sseSource) event(data []byte) (*a2a.StreamResponse, *wireErr) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		s.e.t.Fatalf("SSE data is not JSON: %q", data)
	}
	raw := json.RawMessage(data)
	if s.b == jsonRPC {
		if doc["jsonrpc"] == nil || string(doc["id"]) != `"req-1"` {
			s.e.t.Fatalf("SSE event is not a JSON-RPC response for id req-1: %s", data)
		}
		if doc["error"] != nil {
			s.done = true
			return nil, rpcError(doc["error"])
		}
		raw = doc["result"]
	} else if doc["error"] != nil {
		s.done = true
		return nil, restError(s.status, doc["error"])
	}
	ev := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(raw, ev); err != nil {
		s.e.t.Fatalf("SSE event does not decode as a StreamResponse: %v: %s", err, data)
	}
	return ev, nil
}

func (s *sseSource) close() { s.body.Close() }

// grpcUnary calls a unary RPC with the generated client.
func (e *env) grpcUnary(ctx context.Context, method string, req proto.Message, o callOpts) outcome {
	c := e.grpc
	var (
		v   proto.Message
		h   http.Header
		err error
	)
	switch method {
	case a2a.MethodSendMessage:
		v, h, err = unaryCall(ctx, c.SendMessage, req, o)
	case a2a.MethodGetTask:
		v, h, err = unaryCall(ctx, c.GetTask, req, o)
	case a2a.MethodListTasks:
		v, h, err = unaryCall(ctx, c.ListTasks, req, o)
	case a2a.MethodCancelTask:
		v, h, err = unaryCall(ctx, c.CancelTask, req, o)
	case a2a.MethodCreateTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.CreateTaskPushNotificationConfig, req, o)
	case a2a.MethodGetTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.GetTaskPushNotificationConfig, req, o)
	case a2a.MethodListTaskPushNotificationConfigs:
		v, h, err = unaryCall(ctx, c.ListTaskPushNotificationConfigs, req, o)
	case a2a.MethodDeleteTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.DeleteTaskPushNotificationConfig, req, o)
	case a2a.MethodGetExtendedAgentCard:
		v, h, err = unaryCall(ctx, c.GetExtendedAgentCard, req, o)
	default: // an operation that does not exist
		raw := connect.NewClient[emptypb.Empty, emptypb.Empty](e.h2c, e.base+"/"+a2aconnect.A2AServiceName+"/"+method, connect.WithGRPC())
		v, h, err = unaryCall(ctx, raw.CallUnary, &emptypb.Empty{}, o)
	}
	if err != nil {
		return grpcOutcome(e.t, err, nil)
	}
	return outcome{value: v, extensions: h.Get("A2A-Extensions"), challenge: h.Get("WWW-Authenticate")}
}

func unaryCall[Req, Resp any](ctx context.Context, f func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error), req proto.Message, o callOpts) (proto.Message, http.Header, error) {
	if req == nil {
		req = any(new(Req)).(proto.Message)
	}
	r := connect.NewRequest(any(req).(*Req))
	for k, v := range o.header() {
		r.Header()[k] = v
	}
	resp, err := f(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	return any(resp.Msg).(proto.Message), resp.Header(), nil
}

// grpcOutcome decodes a gRPC status: the ErrorInfo reason names an A2A
// error; other errors are known by their gRPC code.
func grpcOutcome(t testing.TB, err error, header http.Header) outcome {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("gRPC call failed without a status: %v", err)
	}
	if !connect.IsWireError(err) {
		t.Fatalf("gRPC error did not come from the server: %v", err)
	}
	w := &wireErr{message: ce.Message()}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			t.Fatalf("undecodable error detail %s: %v", d.Type(), err)
		}
		switch x := v.(type) {
		case *errdetails.ErrorInfo:
			w.reason, w.domain, w.meta = x.Reason, x.Domain, x.Metadata
		case *errdetails.BadRequest:
			for _, f := range x.FieldViolations {
				w.fields = append(w.fields, f.Field)
			}
		}
	}
	if c, ok := a2a.CodeForReason(w.reason); ok {
		w.code = c
	} else {
		switch ce.Code() {
		case connect.CodeInvalidArgument:
			w.code = a2a.CodeInvalidParams
		case connect.CodeUnauthenticated:
			w.code = a2a.CodeUnauthenticated
		case connect.CodeUnimplemented:
			w.code = a2a.CodeMethodNotFound
		case connect.CodeResourceExhausted:
			w.code = a2a.CodeRequestTooLarge
		default:
			w.code = a2a.CodeInternal
		}
	}
	if header == nil {
		header = ce.Meta()
	}
	return outcome{err: w, extensions: header.Get("A2A-Extensions"), challenge: header.Get("WWW-Authenticate")}
}

// grpcSource reads a server stream.
type grpcSource struct {
	t      testing.TB
	s      *connect.ServerStreamForClient[a2a.StreamResponse]
	cancel context.CancelFunc
	last   outcome // the status that ended the stream
}

func (g *grpcSource) recv() (*a2a.StreamResponse, *wireErr) {
	if g.s.Receive() {
		return g.s.Msg(), nil
	}
	if err := g.s.Err(); err != nil {
		g.last = grpcOutcome(g.t, err, nil)
		return nil, g.last.err
	}
	return nil, nil
}

func (g *grpcSource) close() { g.cancel(); g.s.Close() }

func (e *env) grpcOpen(ctx context.Context, method string, req proto.Message, o callOpts) (source, outcome) {
	ctx, cancel := context.WithCancel(ctx)
	r := connect.NewRequest[a2a.SendMessageRequest](nil)
	var (
		s   *connect.ServerStreamForClient[a2a.StreamResponse]
		err error
	)
	switch method {
	case a2a.MethodSendStreamingMessage:
		r.Msg = req.(*a2a.SendMessageRequest)
		for k, v := range o.header() {
			r.Header()[k] = v
		}
		s, err = e.grpc.SendStreamingMessage(ctx, r)
	case a2a.MethodSubscribeToTask:
		sr := connect.NewRequest(req.(*a2a.SubscribeToTaskRequest))
		for k, v := range o.header() {
			sr.Header()[k] = v
		}
		s, err = e.grpc.SubscribeToTask(ctx, sr)
	default:
		e.t.Fatalf("%s is not a streaming operation", method)
	}
	if err != nil {
		cancel()
		o := grpcOutcome(e.t, err, nil)
		return errSource{o.err}, o
	}
	g := &grpcSource{t: e.t, s: s, cancel: cancel}
	// The first Receive reads the response headers (or the status of a
	// stream refused before its first event).
	first, werr := g.recv()
	if first == nil {
		g.close()
		if werr == nil {
			e.t.Fatalf("%s: the stream ended without an event or a status", method)
		}
		return errSource{werr}, outcome{extensions: g.last.extensions, challenge: g.last.challenge}
	}
	h := s.ResponseHeader()
	out := outcome{extensions: h.Get("A2A-Extensions"), challenge: h.Get("WWW-Authenticate")}
	return &prefetched{first: first, source: g}, out
}

// prefetched is a source whose first event was already read.
type prefetched struct {
	first *a2a.StreamResponse
	source
}

func (p *prefetched) recv() (*a2a.StreamResponse, *wireErr) {
	if p.first != nil {
		ev := p.first
		p.first = nil
		return ev, nil
	}
	return p.source.recv()
}

// ---------------------------------------------------------------------------
// A caller: one binding of one server, as a scenario sees it.

type caller struct {
	t *testing.T
	e *env
	b string
	z *normalizer
}

func (c *caller) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	c.t.Cleanup(cancel)
	return ctx
}

func opt(o []callOpts) callOpts {
	if len(o) > 0 {
		return o[0]
	}
	return callOpts{}
}

// call performs an operation and returns its outcome; a streaming one is
// read to its end.
func (c *caller) call(method string, req proto.Message, o ...callOpts) outcome {
	c.t.Helper()
	if m := a2a.MethodByName(method); m != nil && m.Streaming {
		s := c.open(method, req, o...)
		return s.drain()
	}
	out := c.e.unary(c.ctx(), c.b, method, req, opt(o))
	c.z.see(out)
	return out
}

// ok performs a call that must succeed.
func (c *caller) ok(method string, req proto.Message, o ...callOpts) outcome {
	c.t.Helper()
	out := c.call(method, req, o...)
	if out.err != nil {
		c.t.Fatalf("%s over %s: %s", method, c.b, out.err)
	}
	return out
}

// stream is an open streaming call.
type stream struct {
	c       *caller
	src     source
	out     outcome
	pending chan received // a read in flight on another goroutine
}

type received struct {
	ev  *a2a.StreamResponse
	err *wireErr
}

// readAhead starts reading the next event on another goroutine, and
// returns a channel that is ready when it arrived; the next call to next
// returns it.
func (s *stream) readAhead() <-chan received {
	ch := make(chan received, 1)
	s.pending = ch
	go func() {
		ev, err := s.src.recv()
		ch <- received{ev, err}
		close(ch)
	}()
	return ch
}

func (c *caller) open(method string, req proto.Message, o ...callOpts) *stream {
	c.t.Helper()
	src, out := c.e.open(c.ctx(), c.b, method, req, opt(o))
	s := &stream{c: c, src: src, out: out}
	c.t.Cleanup(src.close)
	return s
}

// next returns the next event, or nil at the end (s.out.err then holds the
// error that ended the stream, if any).
func (s *stream) next() *a2a.StreamResponse {
	var ev *a2a.StreamResponse
	var err *wireErr
	if p := s.pending; p != nil {
		s.pending = nil
		r := <-p
		ev, err = r.ev, r.err
	} else {
		ev, err = s.src.recv()
	}
	if ev == nil {
		s.out.err = err
		return nil
	}
	s.out.events = append(s.out.events, ev)
	s.c.z.see(outcome{events: []*a2a.StreamResponse{ev}})
	return ev
}

// drain reads the stream to its end.
func (s *stream) drain() outcome {
	for s.next() != nil {
	}
	s.src.close()
	return s.out
}

// task sends a message and returns the task it created or continued.
func (c *caller) task(req *a2a.SendMessageRequest, o ...callOpts) *a2a.Task {
	c.t.Helper()
	out := c.ok(a2a.MethodSendMessage, req, o...)
	t := out.value.(*a2a.SendMessageResponse).GetTask()
	if t == nil {
		c.t.Fatalf("SendMessage over %s answered without a task: %v", c.b, out.value)
	}
	return t
}

// ---------------------------------------------------------------------------
// Expectations and normalization.

// want is a scenario's expected outcome, the same for every binding.
type want struct {
	// code is the expected error; 0 means success.
	code a2a.Code
	// meta lists ErrorInfo metadata entries the error must carry.
	meta map[string]string
	// fields are the expected BadRequest field violations (nil: not
	// checked).
	fields []string
	// check runs further checks on a successful outcome.
	check func(t *testing.T, o outcome)
	// anyMessage exempts the error message from the comparison between
	// bindings (it is written by the transport, not by the core).
	anyMessage bool
}

func (w want) verify(t *testing.T, o outcome) {
	t.Helper()
	if w.code == 0 {
		if o.err != nil {
			t.Fatalf("got %s, want success", o.err)
		}
		if w.check != nil {
			w.check(t, o)
		}
		return
	}
	if o.err == nil {
		t.Fatalf("got success (%v, %d events), want %s", o.value, len(o.events), w.code.Name())
	}
	if o.err.code != w.code {
		t.Fatalf("got %s, want %s", o.err, w.code.Name())
	}
	if w.code.IsA2A() && (o.err.reason != w.code.Reason() || o.err.domain != a2a.DomainA2A) {
		t.Errorf("ErrorInfo reason %q domain %q, want %q %q", o.err.reason, o.err.domain, w.code.Reason(), a2a.DomainA2A)
	}
	for k, v := range w.meta {
		if o.err.meta[k] != v {
			t.Errorf("ErrorInfo metadata %s = %q, want %q (all: %v)", k, o.err.meta[k], v, o.err.meta)
		}
	}
	if w.fields != nil && !slices.Equal(o.err.fields, w.fields) {
		t.Errorf("field violations %v, want %v", o.err.fields, w.fields)
	}
	if w.check != nil {
		w.check(t, o)
	}
}

// normalizer replaces server- and client-generated identifiers with
// placeholders numbered in order of appearance, so that outcomes of the
// same scenario on different servers compare equal.
type normalizer struct {
	ids  map[string]string
	host string // the server's host:port, which appears in agent cards
}

func newNormalizer() *normalizer { return &normalizer{ids: map[string]string{}} }

// idFields are the string fields that hold generated identifiers or
// opaque tokens.
var idFields = map[protoreflect.Name]bool{
	"id": true, "task_id": true, "context_id": true, "message_id": true,
	"reference_task_ids": true, "next_page_token": true,
}

func (z *normalizer) id(s string) string {
	if s == "" {
		return ""
	}
	if p, ok := z.ids[s]; ok {
		return p
	}
	p := fmt.Sprintf("<id%d>", len(z.ids)+1)
	z.ids[s] = p
	return p
}

// see registers the identifiers in an outcome.
func (z *normalizer) see(o outcome) {
	if o.value != nil {
		z.message(proto.Clone(o.value).ProtoReflect())
	}
	for _, ev := range o.events {
		z.message(proto.Clone(ev).ProtoReflect())
	}
}

// message rewrites m in place: identifiers become placeholders and
// timestamps are cleared. Fields are visited in declaration order, so the
// numbering is deterministic.
func (z *normalizer) message(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		switch {
		case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Timestamp":
			m.Clear(fd)
		case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Struct":
		case fd.IsList() && fd.Message() != nil:
			l := m.Get(fd).List()
			for j := range l.Len() {
				z.message(l.Get(j).Message())
			}
		case fd.IsList() && fd.Kind() == protoreflect.StringKind && idFields[fd.Name()]:
			l := m.Mutable(fd).List()
			for j := range l.Len() {
				l.Set(j, protoreflect.ValueOfString(z.id(l.Get(j).String())))
			}
		case fd.IsMap():
			if fd.MapValue().Message() == nil {
				continue
			}
			mp := m.Get(fd).Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool { keys = append(keys, k); return true })
			sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
			for _, k := range keys {
				z.message(mp.Get(k).Message())
			}
		case fd.Message() != nil:
			z.message(m.Get(fd).Message())
		case fd.Kind() == protoreflect.StringKind && idFields[fd.Name()]:
			m.Set(fd, protoreflect.ValueOfString(z.id(m.Get(fd).String())))
		}
	}
}

// text replaces every known identifier in s.
func (z *normalizer) text(s string) string {
	for raw, p := range z.ids {
		if len(raw) >= 6 {
			s = strings.ReplaceAll(s, raw, p)
		}
	}
	return s
}

// normalize renders an outcome as text with identifiers, timestamps and
// (when asked) the error message neutralized.
func (z *normalizer) normalize(o outcome, anyMessage bool) string {
	var b strings.Builder
	opts := prototext.MarshalOptions{Multiline: true}
	if o.value != nil {
		m := proto.Clone(o.value)
		z.message(m.ProtoReflect())
		fmt.Fprintf(&b, "value %T:\n%s", o.value, opts.Format(m))
	}
	for i, ev := range o.events {
		m := proto.Clone(ev)
		z.message(m.ProtoReflect())
		fmt.Fprintf(&b, "event %d:\n%s", i, opts.Format(m))
	}
	if o.err != nil {
		msg := z.text(o.err.message)
		if anyMessage {
			msg = "*"
		}
		keys := make([]string, 0, len(o.err.meta))
		for k := range o.err.meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "error %s reason=%q domain=%q message=%q\n", o.err.code.Name(), o.err.reason, o.err.domain, msg)
		for _, k := range keys {
			v := o.err.meta[k]
			if strings.HasSuffix(strings.ToLower(k), "id") {
				v = z.id(v)
			}
			fmt.Fprintf(&b, "  meta %s=%q\n", k, z.text(v))
		}
		fmt.Fprintf(&b, "  fields %q\n", o.err.fields)
	}
	fmt.Fprintf(&b, "extensions %q challenge %q\n", o.extensions, o.challenge)
	if z.host == "" {
		return b.String()
	}
	return strings.ReplaceAll(b.String(), z.host, "<host>")
}
