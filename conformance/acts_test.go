package conformance_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"parley.dev/parley/conformance"
	"parley.dev/parley/parleytest"
)

// TestRunACTS runs an ACTS file against an agent that is not Parley's
// conformance agent, on its three bindings: the must test passes, the
// should test, written to fail, fails; the reports say so.
func TestRunACTS(t *testing.T) {
	srv := parleytest.NewServer(t, shout)
	reps, err := conformance.RunACTS(t.Context(), srv.URL, "testdata/shout.acts.yaml",
		conformance.WithACTSVariable("word", "hey"), conformance.WithACTSVariable("shouted", "HEY"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 {
		t.Fatalf("%d reports, want one per binding", len(reps))
	}
	for _, r := range reps {
		var sum bytes.Buffer
		if err := r.WriteSummary(&sum); err != nil {
			t.Fatal(err)
		}
		if !r.Conformant() || !strings.Contains(sum.String(), "2 tests, 1 passed, 1 failed") ||
			!strings.Contains(sum.String(), "FAIL SHOUT-002 [should]: step send: task.artifacts[0].parts[0].text: values differ (expected quiet, got QUIET)") {
			t.Errorf("%s: conformant %v\n%s", r.Binding(), r.Conformant(), sum.String())
		}
		var js bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Transport string `json:"transport"`
			SDK       struct {
				Name string `json:"name"`
			} `json:"sdk"`
		}
		if err := json.Unmarshal(js.Bytes(), &rep); err != nil || rep.Transport != r.Binding() || rep.SDK.Name != parleytest.DefaultName {
			t.Errorf("%s: %+v %v", r.Binding(), rep, err)
		}
		if !strings.HasPrefix(r.FileName(), "acts-report-") || !strings.Contains(r.FileName(), "-"+r.Binding()+"-") {
			t.Errorf("file name %s", r.FileName())
		}
	}

	// Without the variables, the must test cannot run: a runner error.
	reps, err = conformance.RunACTS(t.Context(), srv.URL, "testdata/shout.acts.yaml", conformance.WithBindings("rest"))
	if err != nil || len(reps) != 1 || reps[0].Conformant() {
		t.Errorf("without variables: %v, %d reports", err, len(reps))
	}
	if _, err := conformance.RunACTS(t.Context(), srv.URL, "testdata/none.acts.yaml"); err == nil {
		t.Error("a missing file was run")
	}
	var ue *conformance.UnreachableError
	if _, err := conformance.RunACTS(t.Context(), "http://127.0.0.1:1", "testdata/shout.acts.yaml"); !errors.As(err, &ue) {
		t.Errorf("an unreachable agent: %v", err)
	}
}
