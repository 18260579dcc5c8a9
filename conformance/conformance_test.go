package conformance_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/conformance"
	"parley.dev/parley/parleytest"
)

// TestGoodAgent grades an agent served by the test kit, over its three
// bindings: no check fails.
func TestGoodAgent(t *testing.T) {
	srv := parleytest.NewServer(t, shout)
	conformance.Test(t, srv.URL)
}

// TestGoodAgentWithTokens grades an agent that needs bearer tokens, with
// two principals, over one binding.
func TestGoodAgentWithTokens(t *testing.T) {
	srv := parleytest.NewServer(t, shout, parleytest.WithTokens(map[string]string{"tok-a": "alice", "tok-b": "bob"}))
	conformance.Test(t, srv.URL, conformance.WithToken("tok-a"), conformance.WithSecondToken("tok-b"),
		conformance.WithBindings(a2a.BindingHTTPJSON), conformance.WithHeader("X-Test", "1"))
}

// TestRun checks the report of a good agent and the options that show in
// it.
func TestRun(t *testing.T) {
	srv := parleytest.NewServer(t, shout)
	var progress int
	rep, err := conformance.Run(t.Context(), srv.URL,
		conformance.WithBindings(a2a.BindingGRPC),
		conformance.WithHTTPClient(nil),
		conformance.WithProgress(func(conformance.Result) { progress++ }))
	if err != nil {
		t.Fatal(err)
	}
	results := rep.Results()
	if rep.Verdict() != conformance.Pass || rep.Count(conformance.Fail) != 0 || len(results) == 0 {
		t.Fatalf("verdict %s, %d failed, %d results; want PASS, 0, some", rep.Verdict(), rep.Count(conformance.Fail), len(results))
	}
	if progress != len(results) {
		t.Errorf("progress saw %d results, the report has %d", progress, len(results))
	}
	if rep.Agent() != parleytest.DefaultName || rep.CardURL() != srv.URL+"/.well-known/agent-card.json" || rep.ConformanceAgent() {
		t.Errorf("agent %q card %q conformance %v", rep.Agent(), rep.CardURL(), rep.ConformanceAgent())
	}
	bindings := map[string]bool{}
	for _, r := range results {
		bindings[r.Binding] = true
		if r.ID == "" || r.Title == "" || r.Level == "" || !strings.HasPrefix(r.Section, "§") || r.Status == "" {
			t.Errorf("incomplete result %+v", r)
		}
		if r.Status == conformance.Skip && r.Detail == "" {
			t.Errorf("%s %s skipped without a reason", r.Binding, r.ID)
		}
	}
	if bindings[a2a.BindingJSONRPC] || bindings[a2a.BindingHTTPJSON] || !bindings[a2a.BindingGRPC] {
		t.Errorf("results for bindings %v; want gRPC's only (and the card's)", bindings)
	}
	var text, js strings.Builder
	if err := rep.WriteText(&text, conformance.TextOptions{Mode: conformance.VerdictOnly}); err != nil {
		t.Fatal(err)
	}
	if got := text.String(); !strings.HasPrefix(got, "verdict: PASS (0 MUST failed") || got != rep.VerdictLine()+"\n" {
		t.Errorf("verdict text %q, line %q", got, rep.VerdictLine())
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"mustFailed":0`) {
		t.Errorf("WriteJSON: %v; no \"mustFailed\":0 in %.300s", err, js.String())
	}
}

// TestRunUnreachable: nothing listens at the URL.
func TestRunUnreachable(t *testing.T) {
	url := closedURL(t)
	_, err := conformance.Run(t.Context(), url)
	var ue *conformance.UnreachableError
	if !errors.As(err, &ue) || ue.URL != url+"/.well-known/agent-card.json" || !strings.HasPrefix(err.Error(), "cannot reach the agent: ") {
		t.Fatalf("Run = %v; want an *UnreachableError for the card URL", err)
	}
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// The tests below run this test binary again, as a child, on an agent
// that breaks the specification: Test must fail there, which a test
// cannot see of its own t.

// helperEnv selects the child test to run.
const helperEnv = "CONFORMANCE_TEST_CHILD"

// TestChild is the child test: conformance.Test on a broken agent, or on
// nothing at all. It runs only as a child of the tests below.
func TestChild(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "broken":
		conformance.Test(t, brokenAgent(t))
	case "unreachable":
		conformance.Test(t, closedURL(t))
	default:
		t.Skip("runs as a child of TestBrokenAgent and TestUnreachableAgent")
	}
}

// brokenAgent serves a well-formed agent card whose only interface, a
// JSON-RPC one, answers every request with the same success of the wrong
// shape.
func brokenAgent(t *testing.T) string {
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	card := fmt.Sprintf(`{"name":"broken","description":"answers everything alike","version":"1.0.0",
		"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"skills":[{"id":"all","name":"all","description":"everything","tags":["all"]}]}`, hs.URL+"/rpc")
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, card)
	})
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"hello":"world"}}`)
	})
	return hs.URL
}

// runChild runs TestChild (narrowed by the -run pattern) as a child
// process and returns its verbose output; the child must fail.
func runChild(t *testing.T, mode, pattern string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 1 {
		t.Fatalf("child %s: %v; want exit status 1\n%s", mode, err, out)
	}
	return string(out)
}

var failedSubtest = regexp.MustCompile(`(?m)^\s*--- FAIL: TestChild/(\S+)/(\S+) `)

// TestBrokenAgent: the checks the broken agent fails fail their
// subtests, with the check's detail, and a failing subtest's name selects
// it alone with -run.
func TestBrokenAgent(t *testing.T) {
	out := runChild(t, "broken", "^TestChild$")
	failed := failedSubtest.FindAllStringSubmatch(out, -1)
	if len(failed) == 0 || !strings.Contains(out, "--- FAIL: TestChild ") {
		t.Fatalf("no subtest failed:\n%s", out)
	}
	names := map[string]bool{}
	for _, f := range failed {
		names[f[1]+"/"+f[2]] = true
	}
	const unknown = "JSONRPC/errors.unknown-task.get_§3.1.3_§5.4_§9.5_§10.6_§11.6"
	if !names[unknown] {
		t.Errorf("%s did not fail; failed: %v\n%s", unknown, names, out)
	}
	if !strings.Contains(out, "the call succeeded; want TaskNotFound") {
		t.Errorf("no detail for the unknown task:\n%s", out)
	}
	if !strings.Contains(out, "--- SKIP: TestChild/") {
		t.Errorf("the checks needing the conformance agent were not skipped:\n%s", out)
	}
	for name := range names {
		if strings.ContainsAny(name, " +()[]*?") {
			t.Errorf("subtest name %q is not a plain -run pattern", name)
		}
	}

	// One subtest, selected by its name as a pattern.
	group, check, _ := strings.Cut(unknown, "/")
	out = runChild(t, "broken", "^TestChild$/^"+group+"$/^"+check+"$")
	failed = failedSubtest.FindAllStringSubmatch(out, -1)
	if len(failed) != 1 || failed[0][1]+"/"+failed[0][2] != unknown || strings.Contains(out, "--- PASS: TestChild/") {
		t.Errorf("-run %s reported %v; want that subtest alone:\n%s", unknown, failed, out)
	}
}

// TestUnreachableAgent: nothing to grade fails the test with the reason,
// and no subtest runs.
func TestUnreachableAgent(t *testing.T) {
	out := runChild(t, "unreachable", "^TestChild$")
	if !strings.Contains(out, "--- FAIL: TestChild ") || !strings.Contains(out, "cannot reach the agent") || strings.Contains(out, "TestChild/") {
		t.Errorf("output:\n%s", out)
	}
}
