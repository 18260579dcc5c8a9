package acts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDriver answers from canned outcomes: the runner's logic without a
// server (the wire is tested against Parley in package internal/check).
type fakeDriver struct {
	binding string
	card    map[string]any
	events  []map[string]any // every stream's events
	calls   int
	fail    string // a method whose calls fail with TaskNotFoundError
}

func (f *fakeDriver) Binding() string { return f.binding }
func (f *fakeDriver) Card(context.Context) *Outcome {
	return &Outcome{Status: 200, Body: f.card}
}
func (f *fakeDriver) Call(_ context.Context, method string, req map[string]any, _ CallOptions) *Outcome {
	f.calls++
	if method == f.fail {
		return &Outcome{Status: 404, Err: &WireError{Wire: "HTTP 404", Message: "no such task", Details: []any{"d"}}}
	}
	b, _ := json.Marshal(req)
	var echo any
	_ = json.Unmarshal(b, &echo)
	return &Outcome{Status: 200, Body: map[string]any{"method": method, "calls": float64(f.calls), "req": echo}}
}
func (f *fakeDriver) Stream(_ context.Context, _ string, _ map[string]any, _ CallOptions, ctl StreamControl) *Outcome {
	o := &Outcome{Status: 200}
	for _, e := range f.events {
		o.Events = append(o.Events, Event{Body: e})
		if ctl.Stop(o.Events) {
			return o
		}
	}
	o.Closed = true
	return o
}
func (f *fakeDriver) Raw(context.Context, RawRequest, []byte, *StreamControl) *Outcome {
	return &Outcome{Status: 418}
}
func (f *fakeDriver) Parse(string, []byte) (any, error) { return map[string]any{}, nil }

func status(state string) map[string]any {
	return map[string]any{"statusUpdate": map[string]any{"status": map[string]any{"state": state}}}
}

func runDoc(t *testing.T, doc string, d *fakeDriver, opts Options) map[string]*TestResult {
	t.Helper()
	parsed, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	opts.Drivers = []Driver{d}
	reps := Run(context.Background(), parsed, opts)
	out := map[string]*TestResult{}
	for _, s := range reps[0].Suites {
		for _, tr := range s.Tests {
			out[tr.ID] = tr
		}
	}
	return out
}

// TestMonotonicState: the ordering rule of ACTS §7.1 on streams no
// Parley agent sends: a state after a terminal one, and a return to
// SUBMITTED, fail; interrupted states and repeats do not.
func TestMonotonicState(t *testing.T) {
	doc := `
acts_version: "1.0"
spec_version: "1.0"
suites:
  - id: s
    name: s
    tests:
      - id: T
        name: t
        level: must
        steps:
          - id: s
            operation: send_streaming_message
            params: {message: {role: ROLE_USER, parts: [{text: x}]}}
            expect_stream: {ordering: monotonic_state}
`
	for name, c := range map[string]struct {
		states []string
		fail   string
	}{
		"lifecycle":         {[]string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, ""},
		"interrupted":       {[]string{"TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_FAILED"}, ""},
		"after terminal":    {[]string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_WORKING"}, "events[2]: monotonic_state: a state after the terminal TASK_STATE_COMPLETED"},
		"back to submitted": {[]string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"}, "events[2]: monotonic_state: back to SUBMITTED"},
		"terminal to other": {[]string{"TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"}, "a state after the terminal TASK_STATE_CANCELED"},
	} {
		d := &fakeDriver{binding: JSONRPC}
		for _, s := range c.states {
			d.events = append(d.events, status(s))
		}
		r := runDoc(t, doc, d, Options{})["T"]
		switch {
		case c.fail == "" && r.Result != Pass:
			t.Errorf("%s: %s %v", name, r.Result, r.Failure)
		case c.fail != "" && (r.Result != Fail || !strings.Contains(r.Failure.Error(), c.fail)):
			t.Errorf("%s: %s %v, want a failure with %q", name, r.Result, r.Failure, c.fail)
		}
	}
}

// TestSkipsAndRepeat: preconditions, transport filters and runner
// requirements skip with their reason; repeat retries until its
// condition holds; the report counts by level and is named per §13.5.
func TestSkipsAndRepeat(t *testing.T) {
	doc := `
acts_version: "1.0"
spec_version: "1.0"
suites:
  - id: s
    name: s
    tests:
      - {id: CAP, name: c, level: must, preconditions: {capabilities: {streaming: true}}, steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: CAP-FALSE, name: c, level: must, preconditions: {capabilities: {pushNotifications: false}}, steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: AUTH, name: c, level: must, preconditions: {capabilities: {authentication: true}}, steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: SKILL, name: c, level: should, preconditions: {skills: [{id: other}]}, steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: GRPC-ONLY, name: c, level: may, transport: [grpc], steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: PRE-GRPC, name: c, level: may, preconditions: {transport: [grpc]}, steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: HOOK, name: c, level: may, runner_requirements: [webhook_endpoint], steps: [{id: a, operation: get_agent_card, params: {}}]}
      - {id: REPEAT, name: c, level: must, steps: [{id: a, operation: get_task, params: {id: x}, repeat: {until: "calls == 3", delay_ms: 1}}]}
`
	d := &fakeDriver{binding: JSONRPC, card: map[string]any{"capabilities": map[string]any{"streaming": false},
		"skills": []any{map[string]any{"id": "echo"}}}}
	got := runDoc(t, doc, d, Options{})
	for id, reason := range map[string]string{
		"CAP":       "precondition capabilities.streaming: true, the card says false",
		"AUTH":      "precondition authentication",
		"SKILL":     "precondition skill other",
		"GRPC-ONLY": "transport filter: grpc",
		"PRE-GRPC":  "precondition transport: grpc",
		"HOOK":      "runner requirement webhook_endpoint",
	} {
		if r := got[id]; r.Result != Skip || !strings.HasPrefix(r.SkipReason, reason) {
			t.Errorf("%s: %s %q, want skip %q", id, r.Result, r.SkipReason, reason)
		}
	}
	if r := got["CAP-FALSE"]; r.Result != Pass {
		t.Errorf("an absent capability is false: %s %v", r.Result, r.Failure)
	}
	if r := got["REPEAT"]; r.Result != Pass || d.calls != 3 {
		t.Errorf("repeat: %s %v after %d calls", r.Result, r.Failure, d.calls)
	}

	parsed, _ := Parse([]byte(doc))
	rep := Run(context.Background(), parsed, Options{Drivers: []Driver{&fakeDriver{binding: REST, card: d.card}}, SDK: SDKInfo{Name: "My SDK/2"}})[0]
	if s := rep.Summary; s.Total != 8 || s.Passed != 2 || s.Skipped != 6 || s.ByLevel["must"].Total != 4 || s.ByLevel["may"].Skipped != 3 {
		t.Errorf("summary %+v", s)
	}
	if !strings.HasPrefix(rep.FileName(), "acts-report-My-SDK-2-rest-") || !strings.HasSuffix(rep.FileName(), "Z.json") {
		t.Errorf("file name %s", rep.FileName())
	}
	dir := t.TempDir()
	p, err := rep.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["transport"] != "rest" || back["summary"].(map[string]any)["by_level"] == nil {
		t.Errorf("report %s: %v", b, err)
	}
}

// TestLoadRefuses: what ACTS §2, §3, §4.4 and §17 require of a document's
// structure.
func TestLoadRefuses(t *testing.T) {
	for name, c := range map[string]struct{ doc, want string }{
		"no version":     {`{spec_version: "1.0", suites: []}`, "acts_version is missing"},
		"major 2":        {`{acts_version: "2.0", spec_version: "1.0", include: [x]}`, "this runner reads ACTS 1.x"},
		"nothing":        {`{acts_version: "1.0", spec_version: "1.0"}`, "neither suites nor include"},
		"bad level":      {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: never, steps: [{id: a, operation: get_task, params: {}}]}]}]}`, `level "never"`},
		"bad operation":  {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: fly, params: {}}]}]}]}`, `unknown operation "fly"`},
		"two kinds":      {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, transport: [rest], steps: [{id: a, operation: get_task, raw: {method: GET, path: /}}]}]}]}`, "exactly one of"},
		"raw unfiltered": {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, raw: {method: GET, path: /}}]}]}]}`, "no transport filter"},
		"bad transport":  {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, transport: [soap], steps: [{id: a, operation: get_task}]}]}]}`, `transport "soap"`},
		"bad until":      {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: get_task, repeat: {until: "x"}}]}]}]}`, "repeat.until"},
		"duplicate step": {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: get_task}, {id: a, operation: get_task}]}]}]}`, "unique"},
		"both expects":   {`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: get_task, expect: {status: 200}, expect_error: {code: X}}]}]}]}`, "exclusive"},
		"not yaml":       {"acts_version: [", "yaml"},
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	js := `{"acts_version": "1.0", "spec_version": "1.0", "suites": [{"id": "s", "name": "s", "tests": [{"id": "T", "name": "t", "level": "may", "steps": [{"id": "a", "operation": "get_agent_card", "params": {}, "expect": {"status": 200}}]}]}]}`
	if d, err := Parse([]byte(js)); err != nil || d.Suites[0].Tests[0].Steps[0].Expect.Status != 200 {
		t.Errorf("JSON input (ACTS §1.4): %v", err)
	}
	if _, err := Load(filepath.Join("testdata", "include-cycle.acts.yaml")); err == nil || !strings.Contains(err.Error(), "include cycle") {
		t.Errorf("include cycle: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), SuiteFile) {
		t.Errorf("a folder without %s: %v", SuiteFile, err)
	}
}

// FuzzParse: no document makes the loader or a run over a fake agent
// panic or hang.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: get_task, params: {id: "{{x}}"}, expect: {body: {any_of: [{a: {items: {b: 1}}}]}}, capture: {c: "a[*].b"}}]}]}]}`,
		`{acts_version: "1", spec_version: "1", suites: [{id: s, name: s, tests: [{id: T, name: t, level: must, steps: [{id: a, operation: send_streaming_message, expect_stream: {min_count: 1, events: [{index: 3, match: any_position}], final_event: {not: {}}}}]}]}]}`,
		`{acts_version: "1", spec_version: "1", include: [a, b]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(b)
		if err != nil || len(d.Include) > 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		Run(ctx, d, Options{Drivers: []Driver{&fakeDriver{binding: GRPC, events: []map[string]any{status("TASK_STATE_WORKING")}}}})
	})
}

// TestExpectBlockShapes: an expect block's members beside status and body
// are body's (the draft's suite writes them so), and one whose status is
// the word error, or whose body asserts an error member, expects the
// operation to fail: it passes on an error and fails on success, and its
// error member is matched against the error.
func TestExpectBlockShapes(t *testing.T) {
	doc := `
acts_version: "1.0"
spec_version: "1.0"
suites:
  - id: s
    name: s
    tests:
      - {id: beside-pass, name: n, level: must, steps: [{id: a, operation: get_task, params: {id: x}, expect: {status: 200, method: GetTask}}]}
      - {id: beside-fail, name: n, level: must, steps: [{id: a, operation: get_task, params: {id: x}, expect: {method: CancelTask}}]}
      - {id: merged-fail, name: n, level: must, steps: [{id: a, operation: get_task, params: {id: x}, expect: {body: {method: GetTask}, calls: 7}}]}
      - {id: err-pass, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {status: error, error: {exists: true}}}]}
      - {id: err-word-pass, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {status: error}}]}
      - {id: err-member-pass, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {status: 404, error: {message: {contains: "no such"}}}}]}
      - {id: err-member-fail, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {error: {message: {contains: "other"}}}}]}
      - {id: err-status-fail, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {status: 409, error: {exists: true}}}]}
      - {id: err-on-success, name: n, level: must, steps: [{id: a, operation: get_task, params: {id: x}, expect: {status: error, error: {exists: true}}}]}
      - {id: success-on-err, name: n, level: must, steps: [{id: a, operation: cancel_task, params: {id: x}, expect: {status: 200}}]}
`
	got := runDoc(t, doc, &fakeDriver{binding: JSONRPC, fail: "CancelTask"}, Options{})
	for id, tr := range got {
		want := Pass
		if strings.HasSuffix(id, "-fail") || strings.HasPrefix(id, "err-on") || strings.HasPrefix(id, "success-on") {
			want = Fail
		}
		if tr.Result != want {
			t.Errorf("%s: %s %+v, want %s", id, tr.Result, tr.Failure, want)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d results, want 10", len(got))
	}
	if _, err := Parse([]byte(strings.Replace(doc, "expect: {body: {method: GetTask}, calls: 7}", "expect: {body: {method: GetTask}, method: GetTask}", 1))); err == nil {
		t.Error("a member both in body and beside it was accepted")
	}
}
