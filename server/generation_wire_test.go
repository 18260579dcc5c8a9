package server_test

// The task generation of the A2A 1.1 preview (spec §3.2.7), over the
// wire: on the three bindings and every store, a 1.1 caller sees the
// generation of a task and of each event (1 at creation, one more per
// emitted event, never twice the same), and a 1.0 caller of the same
// server sees none of it; a restart keeps the counter.

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// askVersion sends every request with A2A-Version v (gRPC metadata
// included: it is the same HTTP/2 header).
type askVersion struct {
	base http.RoundTripper
	v    string
}

func (a askVersion) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("A2A-Version", a.v)
	return a.base.RoundTrip(r)
}

// generationAgent: "stream" works, sends an artifact in two chunks and
// asks for input; a follow-up works, adds a second artifact and
// completes; "wait" works until canceled.
func generationAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		text := req.Message.GetParts()[0].GetText()
		if err := em.StatusText(a2a.TaskState_TASK_STATE_WORKING, ""); err != nil {
			return err
		}
		switch {
		case text == "wait":
			<-ctx.Done()
			return nil
		case req.Task != nil: // the follow-up
			if err := em.Artifact(&a2a.Artifact{ArtifactId: "b", Parts: []*a2a.Part{a2a.TextPart("done")}}); err != nil {
				return err
			}
			return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "")
		}
		if err := em.StartArtifact(&a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart("one")}}); err != nil {
			return err
		}
		if err := em.FinishArtifact(&a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart("two")}}); err != nil {
			return err
		}
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "more?")
	})
}

// startGenerationServer serves generationAgent on store with the 1.1
// preview on (or off).
func startGenerationServer(t *testing.T, store taskstore.Store, preview bool) *testkit.Server {
	return testkit.StartServer(t, &testkit.Options{Agent: generationAgent(), Store: store, Quiet: true,
		Mutate: func(card *a2a.AgentCard, o *server.Options) {
			if preview {
				o.ProtocolVersions = []string{pversion.V11, a2a.ProtocolVersion, pversion.V03}
			}
		}})
}

// versionClient is a client of one binding that asks for version v.
func versionClient(t *testing.T, s *testkit.Server, f client.TransportFactory, v string) *client.Client {
	base := http.DefaultTransport
	if f.Binding == a2a.BindingGRPC {
		base = testkit.H2CClient().Transport
	}
	c, err := client.New(s.Card, &client.Options{HTTPClient: &http.Client{Transport: askVersion{base, v}},
		Transports: []client.TransportFactory{f}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// streamGenerations sends text on a stream and returns the generation of
// each event, the Task first.
func streamGenerations(t *testing.T, ctx context.Context, c *client.Client, msg *a2a.Message) (gens []int64, taskID string) {
	t.Helper()
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		gens = append(gens, ev.Generation())
		if tk := ev.Response.GetTask(); tk != nil {
			taskID = tk.GetId()
		}
		if taskID == "" {
			taskID = ev.Response.GetStatusUpdate().GetTaskId()
		}
	}
	return gens, taskID
}

func TestGenerationOverTheWire(t *testing.T) {
	onEachStoreAndBinding(t, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory, c11 *client.Client) {
		c10 := versionClient(t, s, f, a2a.ProtocolVersion)

		// A stream with artifacts: the Task (1), WORKING (2), two
		// chunks (3, 4), INPUT_REQUIRED (5).
		gens, id := streamGenerations(t, ctx, c11, a2a.UserMessage("stream"))
		if want := []int64{1, 2, 3, 4, 5}; !slices.Equal(gens, want) {
			t.Fatalf("1.1 stream generations %v, want %v", gens, want)
		}
		wantTask := func(c *client.Client, what string, want int64) {
			t.Helper()
			tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
			if err != nil || tk.GetGeneration() != want {
				t.Errorf("%s: GetTask generation %d, %v; want %d", what, tk.GetGeneration(), err, want)
			}
			res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil {
				t.Fatalf("%s: ListTasks: %v", what, err)
			}
			for _, lt := range res.GetTasks() {
				if lt.GetId() == id && lt.GetGeneration() != want {
					t.Errorf("%s: ListTasks generation %d, want %d", what, lt.GetGeneration(), want)
				}
			}
		}
		wantTask(c11, "1.1 after the stream", 5)
		wantTask(c10, "1.0 after the stream", 0)

		// A follow-up, blocking: its message (6, a timeline entry
		// no stream is sent), WORKING (7), an artifact (8),
		// COMPLETED (9).
		follow := a2a.UserMessage("go on")
		follow.TaskId = id
		resp, err := c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow})
		if err != nil || resp.GetTask().GetGeneration() != 9 {
			t.Errorf("1.1 follow-up: task generation %d, %v; want 9", resp.GetTask().GetGeneration(), err)
		}
		wantTask(c11, "1.1 after the follow-up", 9)

		// The same requests in 1.0 carry no generation: a stream
		// and a blocking send.
		gens, _ = streamGenerations(t, ctx, c10, a2a.UserMessage("stream"))
		if slices.ContainsFunc(gens, func(g int64) bool { return g != 0 }) {
			t.Errorf("1.0 stream generations %v, want none", gens)
		}
		resp, err = c10.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream")})
		if err != nil || resp.GetTask() == nil || resp.GetTask().GetGeneration() != 0 {
			t.Errorf("1.0 send: %v, %v; want a task without a generation", resp, err)
		}

		// A cancel: WORKING (2), then CANCELED (3), seen by a
		// 1.1 subscriber as it happens.
		resp, err = c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("wait"),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
		if err != nil {
			t.Fatalf("send wait: %v", err)
		}
		wid := resp.GetTask().GetId()
		waitFor(t, ctx, c11, wid, a2a.TaskState_TASK_STATE_WORKING)
		subGens := make(chan []int64, 1)
		subscribed := make(chan struct{})
		go func() {
			var g []int64
			for ev, err := range c11.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: wid}) {
				if err != nil {
					break
				}
				if len(g) == 0 {
					close(subscribed)
				}
				g = append(g, ev.Generation())
			}
			subGens <- g
		}()
		<-subscribed
		canceled, err := c11.CancelTask(ctx, &a2a.CancelTaskRequest{Id: wid})
		if err != nil || canceled.GetGeneration() != 3 {
			t.Errorf("1.1 CancelTask: generation %d, %v; want 3", canceled.GetGeneration(), err)
		}
		if g := <-subGens; !slices.Equal(g, []int64{2, 3}) {
			t.Errorf("1.1 subscriber generations %v, want [2 3] (the snapshot, then CANCELED)", g)
		}
		if tk, err := c10.GetTask(ctx, &a2a.GetTaskRequest{Id: wid}); err != nil || tk.GetGeneration() != 0 {
			t.Errorf("1.0 GetTask of the canceled task: generation %d, %v; want none", tk.GetGeneration(), err)
		}
	})
}

// waitFor polls the task until it is in state st.
func waitFor(t *testing.T, ctx context.Context, c *client.Client, id string, st a2a.TaskState) {
	t.Helper()
	for ctx.Err() == nil {
		tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err == nil && tk.GetStatus().GetState() == st {
			return
		}
	}
	t.Fatalf("task %s never reached %s", id, st)
}

// TestGenerationRefusedWhenPreviewOff: with the preview off, a 1.1 call
// is refused as any unknown version is, naming what is served.
func TestGenerationRefusedWhenPreviewOff(t *testing.T) {
	s := startGenerationServer(t, nil, false)
	for _, b := range scopeBindings {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			c := versionClient(t, s, b.f(), pversion.V11)
			_, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
			e := a2a.AsError(err)
			if e == nil || e.Code != a2a.CodeVersionNotSupported || !strings.Contains(e.Message, "1.0, 0.3") {
				t.Errorf("1.1 call with the preview off: %v; want VersionNotSupportedError listing 1.0, 0.3", err)
			}
		})
	}
}

// TestGenerationCardInterfaces: with the preview on the card lists a 1.1
// interface beside each 1.0 one; off, none.
func TestGenerationCardInterfaces(t *testing.T) {
	for _, preview := range []bool{false, true} {
		s := startGenerationServer(t, nil, preview)
		var v10, v11 []string
		for _, in := range s.Handler.Card().GetSupportedInterfaces() {
			switch in.GetProtocolVersion() {
			case a2a.ProtocolVersion:
				v10 = append(v10, in.GetProtocolBinding()+" "+in.GetUrl())
			case pversion.V11:
				v11 = append(v11, in.GetProtocolBinding()+" "+in.GetUrl())
			}
		}
		if want := map[bool][]string{false: nil, true: v10}[preview]; !slices.Equal(v11, want) {
			t.Errorf("preview %v: 1.1 interfaces %v, want %v", preview, v11, want)
		}
	}
}

// TestGenerationSurvivesRestart: a task's generation is kept by the
// store, and a server opened on it again goes on from it.
func TestGenerationSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	open := func() taskstore.Store {
		st, err := sqlitestore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	st := open()
	s := startGenerationServer(t, st, true)
	gens, id := streamGenerations(t, ctx, versionClient(t, s, client.JSONRPC(), pversion.V11), a2a.UserMessage("stream"))
	if len(gens) != 5 || gens[4] != 5 {
		t.Fatalf("stream generations %v, want 1 to 5", gens)
	}
	s.HTTP.Close()
	if err := s.Core.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	s2 := startGenerationServer(t, open(), true)
	c := versionClient(t, s2, client.REST(), pversion.V11)
	if tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); err != nil || tk.GetGeneration() != 5 {
		t.Fatalf("after the restart: generation %d, %v; want 5", tk.GetGeneration(), err)
	}
	follow := a2a.UserMessage("go on")
	follow.TaskId = id
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow})
	if err != nil || resp.GetTask().GetGeneration() != 9 {
		t.Fatalf("follow-up after the restart: generation %d, %v; want 9", resp.GetTask().GetGeneration(), err)
	}
}
