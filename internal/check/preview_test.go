package check_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/check"
)

// TestRunParleyPreview grades the A2A 1.1 preview of a Parley served as
// parley serve serves it: with 1.1 among the versions, every 1.1.* check
// passes on the three bindings; without it, each is N/A and nothing else
// changes verdict.
func TestRunParleyPreview(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		cfg := &a2ahttp.ServeConfig{Addr: "127.0.0.1:0", Agent: agents.Conformance(), Name: "conformance",
			Description: "d", Version: "1", Skills: []*a2a.AgentSkill{{Id: "s", Name: "s", Description: "s", Tags: []string{"s"}}}}
		if on {
			cfg.ProtocolVersions = []string{"1.1", "1.0", "0.3"}
		}
		srv, err := a2ahttp.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		rep, err := check.Run(context.Background(), check.Options{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		if got := notPassing(rep, check.Fail, check.Warn); len(got) > 0 {
			t.Errorf("preview %v: %v", on, got)
		}
		seen := map[string]int{}
		for _, r := range rep.Results {
			if !strings.HasPrefix(r.ID, "1.1.") {
				continue
			}
			seen[r.Binding]++
			want := check.Pass
			if !on {
				want = check.NA
			}
			if r.Verdict != want {
				t.Errorf("preview %v: %s %s is %s (%s), want %s", on, r.Binding, r.ID, r.Verdict, r.Finding, want)
			}
		}
		for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
			if seen[b] != 9 {
				t.Errorf("preview %v: %d 1.1 checks on %s, want 9", on, seen[b], b)
			}
		}
	}
}

// TestRunGradesABrokenTimeline: a server whose 1.1 GetTask answers the
// timeline out of order, and ignores timelineLength, fails
// 1.1.timeline-order and 1.1.timeline-length; an entry of a kind the
// checker does not know is skipped, not held against the server.
func TestRunGradesABrokenTimeline(t *testing.T) {
	t.Parallel()
	for _, breakIt := range []string{"reverse", "unknown kind"} {
		tamper := func(next a2a.Invoker) a2a.Invoker {
			return a2a.InvokerFuncs{Next: next,
				CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
					if g, ok := req.(*a2a.GetTaskRequest); ok && breakIt == "reverse" {
						g.TimelineLength = nil // ignored
					}
					out, err := next.Call(ctx, m, req)
					tk, ok := out.(*a2a.Task)
					if m.Name != a2a.MethodGetTask || !ok || len(tk.GetTimeline()) < 2 {
						return out, err
					}
					tk = a2a.CloneTask(tk)
					if breakIt == "reverse" {
						tl, _ := proto.Clone(&a2a.Task{Timeline: tk.Timeline}).(*a2a.Task)
						slices.Reverse(tl.Timeline)
						tk.Timeline = tl.Timeline // out of order, and never trimmed
					} else {
						tk.Timeline[0].Entry = nil // as a kind this checker does not know reads
					}
					return tk, err
				},
			}
		}
		cfg := &a2ahttp.ServeConfig{Addr: "127.0.0.1:0", Agent: agents.Conformance(), Name: "conformance",
			Description: "d", Version: "1", Skills: []*a2a.AgentSkill{{Id: "s", Name: "s", Description: "s", Tags: []string{"s"}}},
			ProtocolVersions: []string{"1.1", "1.0"},
			HandlerOptions:   func(o *a2ahttp.Options) { o.Middleware = append(o.Middleware, tamper) }}
		srv, err := a2ahttp.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		rep, err := check.Run(context.Background(), check.Options{URL: srv.URL(), Bindings: []string{a2a.BindingJSONRPC}})
		if err != nil {
			t.Fatal(err)
		}
		order, length := rep.Find("1.1.timeline-order"), rep.Find("1.1.timeline-length")
		if len(order) != 1 || len(length) != 1 {
			t.Fatalf("%s: 1.1.timeline-order %+v, 1.1.timeline-length %+v", breakIt, order, length)
		}
		switch {
		case breakIt == "reverse" && (order[0].Verdict != check.Fail || !strings.Contains(order[0].Finding, "strictly increasing")):
			t.Errorf("reversed timeline: 1.1.timeline-order %s (%s), want a failure naming the order", order[0].Verdict, order[0].Finding)
		case breakIt == "reverse" && length[0].Verdict != check.Fail:
			t.Errorf("timelineLength ignored: 1.1.timeline-length %s (%s), want a failure", length[0].Verdict, length[0].Finding)
		case breakIt == "unknown kind" && (order[0].Verdict != check.Pass || !strings.Contains(order[0].Finding, "does not know")):
			t.Errorf("an unknown entry kind: 1.1.timeline-order %s (%s), want a pass that says it was skipped", order[0].Verdict, order[0].Finding)
		}
	}
}
