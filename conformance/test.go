package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Test grades the agent at url as Run does, and reports each check as a
// subtest of t, grouped by where it ran:
//
//	card/<id>_<sections>        the agent card (spec §8)
//	JSONRPC/<id>_<sections>     one group per binding checked:
//	HTTP_JSON/<id>_<sections>   JSONRPC, HTTP_JSON, GRPC
//	GRPC/<id>_<sections>
//	bindings/<id>_<sections>    the comparison of the bindings (spec §5.1)
//
// for instance "JSONRPC/errors.unknown-task.get_§3.1.4_§5.4". The names
// hold no spaces, slashes or regular expression operators but the dots,
// so that a check's name is a pattern for go test -run that selects it;
// they change only when a check's ID or its sections do. Every check
// runs whatever -run selects; -run chooses what is reported.
//
// A FAIL fails its subtest with the check's detail, a SKIP skips it with
// the reason, a WARN is logged (the subtest passes), and PASS and N/A
// results pass, logging what was seen. When nothing can be graded (the agent cannot be reached,
// the URL is not usable), Test fails t at once.
//
// The checks of known behaviours run when the agent speaks a behaviour
// contract: Parley's conformance agent's words, or ACTS's tck-* prefixes
// (an agent written to ACTS §11.2 gets them all but B11.append-unknown).
// Against an agent speaking neither they are skipped, and the 49 checks the
// package documentation lists run: the card, authentication, errors,
// versions, media types, the JSON-RPC envelope, extensions, capabilities,
// the extended card, the ListTasks shape, gRPC's own and the comparison of
// the bindings.
func Test(t *testing.T, url string, opts ...Option) {
	t.Helper()
	rep, err := Run(t.Context(), url, opts...)
	if err != nil {
		if _, ok := errors.AsType[*UnreachableError](err); ok {
			t.Fatalf("conformance: %v (is the agent running, and is %s its base URL or its card's URL?)", err, url)
		}
		t.Fatalf("conformance: %s: %v", url, err)
	}
	results := rep.Results()
	for len(results) > 0 {
		group := groupName(results[0])
		n := 1
		for n < len(results) && groupName(results[n]) == group {
			n++
		}
		t.Run(group, func(t *testing.T) {
			for _, r := range results[:n] {
				t.Run(subtestName(r), func(t *testing.T) { report(t, r) })
			}
		})
		results = results[n:]
	}
}

// report grades one subtest by the status of its result.
func report(t *testing.T, r Result) {
	switch r.Status {
	case Fail:
		t.Errorf("FAIL (%s %s, %s): %s: %s%s", r.Level, r.Section, where(r), r.Title, r.Detail, exchange(r))
	case Warn:
		t.Logf("WARN (%s %s, %s): %s: %s", r.Level, r.Section, where(r), r.Title, r.Detail)
	case Skip:
		t.Skipf("not run: %s", r.Detail)
	default:
		if r.Detail != "" {
			t.Logf("%s: %s", r.Status, r.Detail)
		}
	}
}

// where says which interface a result is about.
func where(r Result) string {
	if r.Binding == "" {
		return "the agent"
	}
	if r.Operation != "" {
		return r.Operation + " over " + r.Binding
	}
	return r.Binding
}

// exchange is what was sent and what came back, on lines of their own.
func exchange(r Result) string {
	var b strings.Builder
	if r.Sent != "" {
		fmt.Fprintf(&b, "\n\tsent:     %s", indent(r.Sent))
	}
	if r.Received != "" {
		fmt.Fprintf(&b, "\n\treceived: %s", indent(r.Received))
	}
	return b.String()
}

// indent lines up the lines after the first under a label.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t          ")
}

// groupName is the top-level subtest a result is reported under.
func groupName(r Result) string {
	switch {
	case r.Binding != "":
		return testName(r.Binding)
	case strings.HasPrefix(r.ID, "equivalence."):
		return "bindings"
	}
	return "card"
}

// subtestName is the name Test gives the subtest of r within its group:
// the check's ID, then each section it cites, joined by underscores, with
// every character but letters, digits, '.', '-' and '§' made an
// underscore: "errors.unknown-task.get_§3.1.4_§5.4".
func subtestName(r Result) string {
	parts := []string{r.ID}
	for s := range strings.SplitSeq(r.Section, ",") {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return testName(strings.Join(parts, "_"))
}

// testName replaces what -run patterns or test names treat specially
// (spaces, slashes, regular expression operators) with underscores, one
// for a run of them.
func testName(s string) string {
	var b strings.Builder
	under := false
	for _, c := range s {
		ok := c == '.' || c == '-' || c == '§' || c == '_' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		switch {
		case ok:
			b.WriteRune(c)
			under = c == '_'
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}
