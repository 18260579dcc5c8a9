package check

import (
	"slices"
	"strings"
	"testing"
)

// TestContractWords: every word the checks send to an ACTS agent is a
// behaviour ACTS's contract names (§11.2, and tck-auth-required, which its
// suite uses), the word that ends a tck-multi-turn conversation, or
// nothing (the check is skipped); and the conformance contract sends the
// words as they are.
func TestContractWords(t *testing.T) {
	prefixes := []string{"tck-complete-task", "tck-input-required", "tck-reject-task", "tck-message-response",
		"tck-artifact-text", "tck-artifact-file", "tck-artifact-file-url", "tck-artifact-data", "tck-long-running",
		"tck-multi-turn", "tck-cancel", "tck-stream-basic", "tck-stream-chunked", "tck-task-failure", "tck-auth-required"}
	acts := &session{rep: &Report{Contract: ContractACTS}}
	conf := &session{rep: &Report{Contract: ContractConformance}}
	for word, want := range actsWords {
		got, ok := acts.say(word)
		switch {
		case got != want || ok != (want != ""):
			t.Errorf("say(%q) = %q, %v; want %q", word, got, ok, want)
		case want != "" && want != "done" && !slices.Contains(prefixes, strings.Fields(want)[0]):
			t.Errorf("%q is sent as %q, which ACTS's contract does not name", word, want)
		}
		if got, ok := conf.say(word); got != word || !ok {
			t.Errorf("conformance: say(%q) = %q, %v", word, got, ok)
		}
	}
	if got, ok := acts.say("again"); got != "again" || !ok {
		t.Errorf("an unlisted word: %q, %v; want it sent as it is", got, ok)
	}
	for _, c := range []string{"", "ACTS", " conformance ", "none"} {
		if _, ok := parseContract(c); !ok {
			t.Errorf("parseContract(%q) refused", c)
		}
	}
	if _, ok := parseContract("tck"); ok {
		t.Error("parseContract accepted tck")
	}
}
