package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// equivalence compares, across the checked bindings, the outcome of the
// requests every binding made (§5.1).
func (s *session) equivalence(runs []*bindingRun) {
	r := s.cardCheck(Result{ID: "equivalence.bindings", Title: "every binding answers the same requests the same way",
		Level: "MUST", Section: "§5.1",
		Requires: "When an agent supports multiple protocols, all supported protocols MUST provide identical functionality, consistent behavior and the same error handling"})
	if len(runs) < 2 {
		r.na("one binding checked")
		return
	}
	var diffs, same []string
	for _, k := range slices.Sorted(maps.Keys(runs[0].probes)) {
		vals := make([]string, len(runs))
		for i, b := range runs {
			vals[i] = b.probes[k]
		}
		switch {
		case slices.Contains(vals, ""):
			// Not every binding could complete the request.
		case slices.ContainsFunc(vals, func(v string) bool { return v != vals[0] }):
			var parts []string
			for i, b := range runs {
				parts = append(parts, b.t.binding+": "+vals[i])
			}
			diffs = append(diffs, k+" ("+strings.Join(parts, ", ")+")")
		default:
			same = append(same, k)
		}
	}
	var bindings []string
	for _, b := range runs {
		bindings = append(bindings, b.t.binding)
	}
	r.Sent = "the same requests on " + strings.Join(bindings, " and ")
	r.Received = fmt.Sprintf("%d compared, %d alike", len(same)+len(diffs), len(same))
	if len(diffs) > 0 {
		r.fail("different answers to the same request: %s", strings.Join(diffs, "; "))
	} else {
		r.pass("%d requests answered alike", len(same))
	}
}
