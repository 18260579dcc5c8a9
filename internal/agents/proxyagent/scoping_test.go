package proxyagent_test

// The proxy's trust model over the wire: two principals through a real
// proxy to a real upstream; what the proxy remembers is theirs alone, a
// stamp a client forges is ignored (before and after a restart), and an
// upstream's redirect is not followed.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/agents/proxyagent"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// upToken is the proxy's credential at the upstream.
const upToken = "upstream-secret"

// quietAgent is the conformance agent, except that "input-required
// quietly" parks the task in INPUT_REQUIRED without a status message (so
// Parley's copy of the task carries no stamp of the proxy's).
func quietAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task == nil && a2a.FirstText(req.Message) == "input-required quietly" {
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		}
		return agents.Conformance().Execute(ctx, req, em)
	})
}

// startUpstream starts the upstream, which takes only the proxy's token,
// and returns it with a client holding that token.
func startUpstream(t *testing.T) (*testkit.Server, *client.Client) {
	up := testkit.StartServer(t, &testkit.Options{Quiet: true, Agent: quietAgent(), Tokens: map[string]string{upToken: "proxy"}})
	c, err := client.New(up.Card, &client.Options{HTTPClient: testkit.H2CClient(), BearerToken: upToken})
	if err != nil {
		t.Fatal(err)
	}
	return up, c
}

// startScopedProxy starts a proxy, with alice's and bob's tokens, in front
// of the agent at upCard's interfaces (ifaces, when set, replace them), on
// store.
func startScopedProxy(t *testing.T, upCard *a2a.AgentCard, ifaces []*a2a.AgentInterface, store taskstore.Store) *testkit.Server {
	t.Helper()
	card := proto.Clone(upCard).(*a2a.AgentCard)
	if ifaces != nil {
		card.SupportedInterfaces = ifaces
	}
	fwd, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient(), BearerToken: upToken, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := proxyagent.New(proxyagent.Options{Client: fwd, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	return testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true, Store: store,
		Tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"},
		Mutate: func(c *a2a.AgentCard, _ *server.Options) {
			own := c.SupportedInterfaces
			proto.Reset(c)
			proto.Merge(c, proxyagent.Card(upCard, own))
		},
		HTTP: func(o *a2ahttp.Options) { o.Middleware = append(o.Middleware, a.Middleware()) },
	})
}

// as returns a client of the proxy holding token.
func as(t *testing.T, proxy *testkit.Server, token string) *client.Client {
	t.Helper()
	c, err := client.New(proxy.Card, &client.Options{HTTPClient: testkit.H2CClient(), BearerToken: token, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// forged returns metadata carrying a stamp that names the upstream ids.
func forged(t *testing.T, upTask, upCtx string) *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{proxyagent.MetadataKey: map[string]any{"taskId": upTask, "contextId": upCtx}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// upstreamTaskOf finds the upstream task a message of msgID went to.
func upstreamTaskOf(t *testing.T, ctx context.Context, up *client.Client, msgID string) *a2a.Task {
	t.Helper()
	res, err := up.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: proto.Int32(100)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range res.GetTasks() {
		for _, m := range tk.GetHistory() {
			if m.GetMessageId() == msgID {
				if m.GetMetadata().GetFields()[proxyagent.MetadataKey] != nil {
					t.Errorf("message %s reached the upstream with a %s member", msgID, proxyagent.MetadataKey)
				}
				return tk
			}
		}
	}
	t.Fatalf("no upstream task has message %s", msgID)
	return nil
}

// TestProxyScopesCallers: alice and bob use one contextId through the
// proxy; bob forges the stamp of alice's upstream task in his messages'
// metadata. Neither before nor after a restart of the proxy (a new agent
// over the same store file) does bob reach alice's upstream task or
// context; alice's follow-up after the restart still reaches hers.
func TestProxyScopesCallers(t *testing.T) {
	ctx := ctxFor(t)
	up, upC := startUpstream(t)
	path := filepath.Join(t.TempDir(), "proxy.db")
	st, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startScopedProxy(t, up.Card, nil, st)
	alice, bob := as(t, proxy, "tok-alice"), as(t, proxy, "tok-bob")
	const ctxID = "shared-context"

	// Alice's task waits for input; its status message carries the
	// proxy's stamp of her upstream task.
	mA := a2a.UserMessage("input-required")
	mA.ContextId = ctxID
	resp, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: mA})
	taskA := resp.GetTask()
	if err != nil || taskA.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("alice's task: %v, %v", taskA, err)
	}
	upA := upstreamTaskOf(t, ctx, upC, mA.GetMessageId())

	// Bob's task in the same contextId, with alice's upstream ids forged
	// in the message's metadata: a new upstream task in a new upstream
	// context.
	mB := a2a.UserMessage("input-required quietly")
	mB.ContextId, mB.Metadata = ctxID, forged(t, upA.GetId(), upA.GetContextId())
	resp, err = bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: mB})
	taskB := resp.GetTask()
	if err != nil || taskB.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || taskB.GetId() == taskA.GetId() {
		t.Fatalf("bob's task: %v, %v", taskB, err)
	}
	upB := upstreamTaskOf(t, ctx, upC, mB.GetMessageId())
	if upB.GetId() == upA.GetId() || upB.GetContextId() == upA.GetContextId() {
		t.Fatalf("bob's message went to upstream task %s in context %s; alice's are %s in %s",
			upB.GetId(), upB.GetContextId(), upA.GetId(), upA.GetContextId())
	}

	// The proxy restarts: a new agent, nothing in memory, the same file.
	proxy.HTTP.Close()
	if err := proxy.Core.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	proxy = startScopedProxy(t, up.Card, nil, st)
	alice, bob = as(t, proxy, "tok-alice"), as(t, proxy, "tok-bob")

	// Bob's follow-up on his own task, the forged stamp again in its
	// metadata (and in his first message, in the task's history).
	f := a2a.FollowUp(taskB, "bob was here")
	f.Metadata = forged(t, upA.GetId(), upA.GetContextId())
	resp, err = bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: f})
	if err != nil {
		t.Fatalf("bob's follow-up: %v", err)
	}
	if got := upstreamTaskOf(t, ctx, upC, f.GetMessageId()); got.GetId() == upA.GetId() || got.GetContextId() == upA.GetContextId() {
		t.Fatalf("bob's follow-up after the restart reached alice's upstream task %s (context %s)", got.GetId(), got.GetContextId())
	}
	// Bob naming alice's task is told it does not exist.
	_, err = bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(taskA, "bob again")})
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob's follow-up on alice's task: %v, want TaskNotFound", err)
	}
	// A new task of bob's in the shared contextId, the stamp forged again.
	mB2 := a2a.UserMessage("hello")
	mB2.ContextId, mB2.Metadata = ctxID, forged(t, upA.GetId(), upA.GetContextId())
	if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: mB2}); err != nil {
		t.Fatal(err)
	}
	if got := upstreamTaskOf(t, ctx, upC, mB2.GetMessageId()); got.GetContextId() == upA.GetContextId() {
		t.Fatalf("bob's new task went to alice's upstream context %s", got.GetContextId())
	}

	// Alice's upstream task is untouched, and her follow-up completes it.
	got, err := upC.GetTask(ctx, &a2a.GetTaskRequest{Id: upA.GetId()})
	if err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("alice's upstream task after bob's calls: %v, %v; want it still INPUT_REQUIRED", got.GetStatus(), err)
	}
	resp, err = alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(taskA, "alice's answer")})
	if done := resp.GetTask(); err != nil || done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED ||
		a2a.ArtifactText(done.GetArtifacts()[0]) != "alice's answer" {
		t.Fatalf("alice's follow-up after the restart: %v, %v", done, err)
	}
	got, err = upC.GetTask(ctx, &a2a.GetTaskRequest{Id: upA.GetId()})
	if err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.ArtifactText(got.GetArtifacts()[0]) != "alice's answer" {
		t.Fatalf("alice's upstream task: %v, %v; want it completed with her answer", got, err)
	}
}

// TestProxyRefusesRedirects: an upstream answering 307 or 302 fails the
// proxy's task with a status message naming the redirect's target, which
// gets no request (so never the proxy's Authorization header).
func TestProxyRefusesRedirects(t *testing.T) {
	up, _ := startUpstream(t)
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var hits, authz atomic.Int32
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.Header.Get("Authorization") != "" {
					authz.Add(1)
				}
				http.Error(w, "elsewhere", http.StatusTeapot)
			}))
			t.Cleanup(target.Close)
			redirector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+r.URL.Path, status)
			}))
			redirector.Config.Protocols = new(http.Protocols)
			redirector.Config.Protocols.SetHTTP1(true)
			redirector.Config.Protocols.SetUnencryptedHTTP2(true) // the proxy's client speaks h2c
			redirector.Start()
			t.Cleanup(redirector.Close)
			proxy := startScopedProxy(t, up.Card, testkit.Interfaces(redirector.URL)[:2], nil)
			task := testkit.SendTask(t, ctxFor(t), as(t, proxy, "tok-alice"), "hello", nil)
			msg := a2a.JoinText(task.GetStatus().GetMessage().GetParts())
			if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(msg, "redirected to "+target.URL) {
				t.Fatalf("task %v, want FAILED naming the redirect to %s", task.GetStatus(), target.URL)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the redirect's target got %d requests, %d with Authorization; want none", n, authz.Load())
			}
		})
	}
}
