package client_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// cutText is the conformance agent's long, paced stream the cut tests read:
// 200 chunks 2 ms apart, so that cuts fall while the task is still running
// as well as on events already stored.
const cutText = "stream 200 every 2"

// TestCutConnections: streams read through a proxy that drops the TCP
// connection at random points are resumed by the client with nothing lost
// and nothing repeated, on every binding: the events the iterator yields
// are the task's event log, every sequence number once, in order, and the
// artifact put back together from them is the stored one. The proxy's seed
// is logged when the test fails (PARLEY_CUT_SEED replays it).
func TestCutConnections(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, sub := range []bool{false, true} {
				name := "SendStreamingMessage"
				if sub {
					name = "SubscribeToTask"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					cutStream(t, b, sub)
				})
			}
		})
	}
}

// cutStream runs one stream of cutText through a cutting proxy and checks
// it against the task's log.
func cutStream(t *testing.T, b binding, subscribe bool) {
	store := memstore.New()
	s := testkit.StartServer(t, &testkit.Options{Store: store, Quiet: true})
	p := testkit.StartCutProxy(t, s.Addr, &testkit.CutOptions{MinBytes: 1 << 10, MaxBytes: 8 << 10})
	card := proto.Clone(s.Card).(*a2a.AgentCard)
	card.SupportedInterfaces = testkit.Interfaces("http://" + p.Addr)
	var resumes atomic.Int64
	c, err := client.New(card, &client.Options{
		Transports: []client.TransportFactory{b.factory},
		RetryDelay: time.Millisecond,
		Resumes:    20,
		OnResume:   func(string, uint64, error) { resumes.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	ctx := testCtx(t)
	req := &a2a.SendMessageRequest{Message: a2a.UserMessage(cutText)}
	seq := c.SendStreamingMessage(ctx, req)
	if subscribe {
		// Started directly on the server: only the subscription crosses
		// the proxy.
		direct := directClient(t, s, b)
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		resp, err := direct.SendMessage(ctx, req)
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		seq = c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: resp.GetTask().GetId()})
	}
	evs, err := testkit.Collect(seq)
	if err != nil {
		t.Fatalf("stream error after %d events: %v (%d cuts, %d resumes)", len(evs), err, p.Cuts(), resumes.Load())
	}
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	id := evs[0].TaskID()
	log, err := store.Events(context.Background(), taskstore.Scope{}, id, 0, 10_000)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	first := 0 // the log index of the first event expected on the stream
	if subscribe {
		// A subscription starts with a snapshot numbered as the task's
		// last event at that moment, then the events after it.
		if !evs[0].Snapshot() || evs[0].Seq == 0 {
			t.Fatalf("first event %q (Seq %d), want a numbered Task snapshot", testkit.Kinds(evs[:1]), evs[0].Seq)
		}
		first = int(evs[0].Seq)
		evs = evs[1:]
	}
	compareLog(t, evs, log[first:])
	task, err := store.GetTask(context.Background(), taskstore.Scope{}, id)
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	var asm a2a.ArtifactAssembler
	for _, ev := range evs {
		asm.Add(ev)
	}
	stored := a2a.ArtifactText(task.GetArtifacts()[0])
	if got := asm.Text("stream"); (!subscribe && got != stored) || (subscribe && !strings.HasSuffix(stored, got)) || got == "" {
		t.Errorf("reassembled artifact %q, stored %q", got, stored)
	}
	if p.Cuts() == 0 || resumes.Load() == 0 {
		t.Errorf("%d cuts, %d resumes: the proxy never broke the stream, so the test proved nothing", p.Cuts(), resumes.Load())
	}
	t.Logf("%d events, %d cuts, %d resumes (seed %d)", len(evs), p.Cuts(), resumes.Load(), p.Seed)
}

// compareLog checks that evs are exactly the logged events, in order.
func compareLog(t *testing.T, evs, log []a2a.StreamEvent) {
	t.Helper()
	if len(evs) != len(log) {
		t.Errorf("%d events received, %d in the log", len(evs), len(log))
	}
	for i := range min(len(evs), len(log)) {
		if evs[i].Seq != log[i].Seq || !proto.Equal(evs[i].Response, seenBy10(log[i].Response)) {
			t.Fatalf("event %d: Seq %d %q, log has Seq %d %q", i, evs[i].Seq, testkit.Kinds(evs[i:i+1]), log[i].Seq, testkit.Kinds(log[i:i+1]))
		}
	}
}

// seenBy10 is a logged event as a v1.0 caller gets it: without the A2A 1.1
// generation the log keeps.
func seenBy10(r *a2a.StreamResponse) *a2a.StreamResponse {
	r = proto.Clone(r).(*a2a.StreamResponse)
	if t := r.GetTask(); t != nil {
		t.Generation = 0
	}
	if u := r.GetStatusUpdate(); u != nil {
		u.Generation = 0
	}
	if u := r.GetArtifactUpdate(); u != nil {
		u.Generation = 0
	}
	return r
}

// directClient returns a client of the server's binding b, not through
// any proxy.
func directClient(t *testing.T, s *testkit.Server, b binding) *client.Client {
	t.Helper()
	c, err := client.New(s.Card, &client.Options{Transports: []client.TransportFactory{b.factory}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
