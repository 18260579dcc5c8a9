package check_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/acts"
	"parley.dev/parley/internal/check"
)

// runACTS runs the ACTS file or folder at path against base on every
// binding and returns the reports, by binding.
func runACTS(t *testing.T, base, path string, vars map[string]string) map[string]*acts.Report {
	t.Helper()
	doc, err := acts.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := check.ACTSDrivers(context.Background(), check.Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	reps := acts.Run(context.Background(), doc, acts.Options{Drivers: ds, SDK: acts.SDKInfo{Name: "parley", Version: "test", Language: "go"}, Vars: vars})
	out := map[string]*acts.Report{}
	for _, r := range reps {
		out[r.Transport] = r
	}
	if len(out) != 3 {
		t.Fatalf("reports for %d bindings, want 3", len(out))
	}
	return out
}

// results lists a report's tests by id.
func results(r *acts.Report) map[string]*acts.TestResult {
	m := map[string]*acts.TestResult{}
	for _, s := range r.Suites {
		for _, tr := range s.Tests {
			m[tr.ID] = tr
		}
	}
	return m
}

// TestACTSPasses runs Parley's own ACTS files, which cover every construct,
// against the conformance agent on the three bindings: every test passes
// or is skipped for the reason it was written to be skipped.
func TestACTSPasses(t *testing.T) {
	t.Setenv("PARLEY_ACTS_TEST_WORD", "acts")
	base := startParley(t, nil, nil)
	reps := runACTS(t, base, "testdata/acts", map[string]string{"webhookUrl": "https://hooks.example.com/acts"})
	for b, rep := range reps {
		var sb strings.Builder
		rep.Summarize(&sb)
		t.Logf("%s", sb.String())
		push := results(rep)["OPS-PUSH-001"].Notes
		if hasPushNote := len(push) == 1 && strings.Contains(push[0], "pushNotificationConfigs (spec §11.3)"); hasPushNote != (b == acts.REST) {
			t.Errorf("%s: OPS-PUSH-001 notes %v", b, push)
		}
		if n := results(rep)["OPS-MULTI-001"].Notes; len(n) != 2 || !strings.Contains(n[0], "params.taskId sent as message.taskId") {
			t.Errorf("%s: OPS-MULTI-001 notes %v", b, n)
		}
		for id, r := range results(rep) {
			wantSkip := strings.HasPrefix(id, "OPS-SKIP-") || (strings.HasPrefix(id, "RAW-") && !strings.Contains(strings.ToLower(id), b))
			switch {
			case wantSkip && r.Result != acts.Skip:
				t.Errorf("%s %s: %s, want skip", b, id, r.Result)
			case !wantSkip && r.Result != acts.Pass:
				t.Errorf("%s %s: %s: %v", b, id, r.Result, r.Failure)
			}
		}
	}
}

// TestACTSFails runs Parley's ACTS tests built to fail: on every binding
// each fails (E-: is a runner error) with the failure its description
// names, so that each kind of assertion is shown able to fail.
func TestACTSFails(t *testing.T) {
	base := startParley(t, nil, nil)
	doc, err := acts.Load("testdata/acts-fail/fail.acts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, s := range doc.Suites {
		for _, tc := range s.Tests {
			want[tc.ID] = tc.Description
		}
	}
	for b, rep := range runACTS(t, base, "testdata/acts-fail/fail.acts.yaml", nil) {
		got := results(rep)
		if len(got) != len(want) {
			t.Errorf("%s: %d results, want %d", b, len(got), len(want))
		}
		for id, r := range got {
			wantResult := acts.Fail
			if strings.HasPrefix(id, "E-") {
				wantResult = acts.Error
			}
			if r.Result != wantResult || r.Failure == nil || !strings.Contains(r.Failure.Error(), want[id]) {
				t.Errorf("%s %s: %s %v, want %s with %q", b, id, r.Result, r.Failure, wantResult, want[id])
			}
		}
		if n := got["F-DRAFT-NAME"].Notes; len(n) != 1 || !strings.Contains(n[0], "ExtendedAgentCardNotConfiguredError (spec §5.4)") {
			t.Errorf("%s: the draft's error name without its note: %v", b, n)
		}
		if rep.Summary.Failed+rep.Summary.Errors != len(want) || rep.Summary.ByLevel["must"].Total != len(want) {
			t.Errorf("%s: summary %+v", b, rep.Summary)
		}
	}
}

// TestACTSPlantedViolation: a server whose GetTask reports every task as
// still WORKING is caught on every binding, at the field it corrupts.
func TestACTSPlantedViolation(t *testing.T) {
	t.Setenv("PARLEY_ACTS_TEST_WORD", "acts")
	corrupt := func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				resp, err := next.Call(ctx, m, req)
				if task, ok := resp.(*a2a.Task); ok && m.Name == a2a.MethodGetTask {
					task = proto.Clone(task).(*a2a.Task)
					task.Status.State = a2a.TaskState_TASK_STATE_WORKING
					return task, err
				}
				return resp, err
			},
		}
	}
	base := startParleyWith(t, nil, nil, []a2a.Middleware{corrupt})
	for b, rep := range runACTS(t, base, "testdata/acts", map[string]string{"webhookUrl": "https://hooks.example.com/acts"}) {
		r := results(rep)["OPS-SEND-001"]
		if r.Result != acts.Fail || r.Failure.StepID != "get" || r.Failure.AssertionPath != "status.state" ||
			!strings.Contains(r.Failure.Actual, "TASK_STATE_WORKING") {
			t.Errorf("%s: %s %+v, want a failure of step get at status.state", b, r.Result, r.Failure)
		}
		if p := results(rep)["OPS-POLL-001"]; p.Result != acts.Fail || p.Failure.StepID != "poll" {
			t.Errorf("%s: OPS-POLL-001 %s %+v, want the poll to fail", b, p.Result, p.Failure)
		}
	}
}

// TestACTSStreamNotSSE: a streaming operation answered with plain JSON is
// no stream: the step fails saying so, rather than passing on no events.
func TestACTSStreamNotSSE(t *testing.T) {
	t.Setenv("PARLEY_ACTS_TEST_WORD", "acts")
	plain := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/message:stream" {
				w.Header().Set("Content-Type", "application/a2a+json")
				w.Write([]byte(`{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	base := startParley(t, nil, plain)
	rep := runACTS(t, base, "testdata/acts", map[string]string{"webhookUrl": "https://hooks.example.com/acts"})
	r := results(rep[acts.REST])["STR-001"]
	if r.Result != acts.Fail || !strings.Contains(r.Failure.Message, "instead of text/event-stream") {
		t.Errorf("rest STR-001: %s %+v", r.Result, r.Failure)
	}
	if r := results(rep[acts.JSONRPC])["STR-001"]; r.Result != acts.Pass {
		t.Errorf("jsonrpc STR-001: %s %+v", r.Result, r.Failure)
	}
}
