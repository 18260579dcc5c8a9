package push_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// guard bounds every wait so a bug shows up as a failure, not a hung test.
const guard = 10 * time.Second

// hit is one request a receiver got.
type hit struct {
	at     time.Time
	header http.Header
	body   []byte
	status int
}

// receiver is a webhook on loopback that records every request and answers
// as respond says (200 when respond is nil).
type receiver struct {
	srv *httptest.Server
	url string

	mu      sync.Mutex
	hits    []hit
	respond func(n int, w http.ResponseWriter) int // n counts requests from 1
	changed chan struct{}
}

func newReceiver(t testing.TB, respond func(n int, w http.ResponseWriter) int) *receiver {
	rc := &receiver{respond: respond, changed: make(chan struct{}, 1)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	rc.url = rc.srv.URL + "/hook"
	t.Cleanup(rc.srv.Close)
	return rc
}

// newReceiverAt starts a receiver on a given loopback address (to bring
// back one that was down).
func newReceiverAt(t testing.TB, addr string) *receiver {
	rc := &receiver{changed: make(chan struct{}, 1)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rc.srv.Listener.Close()
	rc.srv.Listener = ln
	rc.srv.Start()
	rc.url = rc.srv.URL + "/hook"
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.hits) + 1
	rc.hits = append(rc.hits, hit{at: time.Now(), header: r.Header.Clone(), body: body, status: -1})
	respond := rc.respond
	rc.mu.Unlock()
	status := http.StatusOK
	if respond != nil {
		status = respond(n, w)
	}
	rc.mu.Lock()
	rc.hits[n-1].status = status
	rc.mu.Unlock()
	w.WriteHeader(status)
	select {
	case rc.changed <- struct{}{}:
	default:
	}
}

func (rc *receiver) all() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// delivered returns the bodies answered 2xx, in arrival order.
func (rc *receiver) delivered() [][]byte {
	var out [][]byte
	for _, h := range rc.all() {
		if h.status >= 200 && h.status < 300 {
			out = append(out, h.body)
		}
	}
	return out
}

// waitDelivered waits until at least n notifications were acknowledged.
func (rc *receiver) waitDelivered(t testing.TB, n int) [][]byte {
	t.Helper()
	deadline := time.After(guard)
	for {
		if got := rc.delivered(); len(got) >= n {
			return got
		}
		select {
		case <-rc.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("receiver got %d notifications, want %d:\n%s", len(rc.delivered()), n, describe(rc.delivered()))
		}
	}
}

func describe(bodies [][]byte) string {
	var b strings.Builder
	for _, x := range bodies {
		b.Write(x)
		b.WriteByte('\n')
	}
	return b.String()
}

// decode parses a notification body.
func decode(t testing.TB, body []byte) *a2a.StreamResponse {
	t.Helper()
	r := new(a2a.StreamResponse)
	if err := a2a.Unmarshal(body, r); err != nil {
		t.Fatalf("notification body %s: %v", body, err)
	}
	return r
}

// kind names a notification for comparisons: "task:STATE",
// "status:STATE" or "artifact:ID".
func kind(t testing.TB, body []byte) string {
	r := decode(t, body)
	switch {
	case r.GetTask() != nil:
		return "task:" + strings.TrimPrefix(r.GetTask().GetStatus().GetState().String(), "TASK_STATE_")
	case r.GetStatusUpdate() != nil:
		return "status:" + strings.TrimPrefix(r.GetStatusUpdate().GetStatus().GetState().String(), "TASK_STATE_")
	case r.GetArtifactUpdate() != nil:
		return "artifact:" + r.GetArtifactUpdate().GetArtifact().GetArtifactId()
	}
	return "other"
}

func kinds(t testing.TB, bodies [][]byte) []string {
	out := make([]string, len(bodies))
	for i, b := range bodies {
		out[i] = kind(t, b)
	}
	return out
}

// env is a server with push delivery over a store.
type env struct {
	srv    *server.Server
	sender *push.Sender
	store  taskstore.Store
	logs   *testenv.SyncBuffer
}

// fast is the delivery configuration of most tests: loopback allowed,
// millisecond backoff.
func fast() *push.Options {
	g, err := push.NewGuard(&push.GuardOptions{AllowPrivate: true})
	if err != nil {
		panic(err)
	}
	return &push.Options{Guard: g, Backoff: push.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}, Timeout: 5 * time.Second}
}

func memory(testing.TB) taskstore.Store { return memstore.New() }

func sqlite(t testing.TB) taskstore.Store {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var stores = []struct {
	name string
	open func(testing.TB) taskstore.Store
}{{"memory", memory}, {"sqlite", sqlite}}

// newEnv starts a sender and a server (conformance agent) on the store.
func newEnv(t testing.TB, store taskstore.Store, o *push.Options) *env {
	t.Helper()
	return newEnvServing(t, store, o, nil)
}

// newEnvServing is newEnv with the protocol versions the server serves
// (nil: the defaults).
func newEnvServing(t testing.TB, store taskstore.Store, o *push.Options, versions []string) *env {
	t.Helper()
	e := &env{store: store, logs: &testenv.SyncBuffer{}}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o == nil {
		o = fast()
	}
	o.Logger = log
	var err error
	e.sender, err = push.New(store, o)
	if err != nil {
		t.Fatal(err)
	}
	card, err := agents.Card("conformance", []*a2a.AgentInterface{{
		Url: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}})
	if err != nil {
		t.Fatal(err)
	}
	card.Capabilities.PushNotifications = proto.Bool(true)
	e.srv, err = server.New(&server.Options{Card: card, Agent: agents.Conformance(), Store: store, Logger: log, Push: e.sender,
		ProtocolVersions: versions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.close(t) })
	return e
}

func (e *env) close(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := e.srv.Close(ctx); err != nil {
		t.Errorf("server Close: %v", err)
	}
	if err := e.sender.Close(ctx); err != nil {
		t.Errorf("sender Close: %v", err)
	}
}

// call returns a context for one call (each call needs its own CallInfo).
func call(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: a2a.ProtocolVersion})
}

// send sends text, with an inline push config when cfg is not nil, and
// returns the task.
func (e *env) send(t testing.TB, text string, cfg *a2a.TaskPushNotificationConfig) *a2a.Task {
	t.Helper()
	req := &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}
	if cfg != nil {
		req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: proto.Clone(cfg).(*a2a.TaskPushNotificationConfig)}
	}
	resp, err := e.srv.SendMessage(call(t), req)
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", text, err)
	}
	if resp.GetTask() == nil {
		t.Fatalf("SendMessage(%q) = %v, want a task", text, resp)
	}
	return resp.GetTask()
}

// follow sends a follow-up message on a task.
func (e *env) follow(t testing.TB, taskID, text string) *a2a.Task {
	t.Helper()
	m := a2a.UserMessage(text)
	m.TaskId = taskID
	resp, err := e.srv.SendMessage(call(t), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatalf("follow-up on %s: %v", taskID, err)
	}
	return resp.GetTask()
}

// create registers a push config on a task.
func (e *env) create(t testing.TB, cfg *a2a.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	t.Helper()
	got, err := e.srv.CreateTaskPushNotificationConfig(call(t), cfg)
	if err != nil {
		t.Fatalf("CreateTaskPushNotificationConfig(%v): %v", cfg, err)
	}
	return got
}

// eventually polls cond until it holds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// storeConfig puts a configuration straight into the store, with the task
// snapshot queued for it, as a configuration written before the current
// registration rules (or by another process) would be: the server's checks
// are bypassed, so delivery alone must cope with it.
func (e *env) storeConfig(t testing.TB, task *a2a.Task, cfg *a2a.TaskPushNotificationConfig) {
	t.Helper()
	snap := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: task}}
	if err := e.store.PutPushConfig(call(t), taskstore.Scope{}, &taskstore.PushConfig{TaskPushNotificationConfig: cfg}, taskstore.Event{Push: true, Response: snap}); err != nil {
		t.Fatalf("PutPushConfig(%s): %v", cfg.GetUrl(), err)
	}
	e.sender.Queued(cfg.TaskId)
}
