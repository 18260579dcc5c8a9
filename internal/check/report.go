package check

import "time"

// Report is the outcome of a run.
type Report struct {
	// Target is the URL Run was given.
	Target string `json:"target"`
	// CardURL is where the agent card was fetched.
	CardURL string `json:"cardUrl"`
	// Agent is the card's name.
	Agent string `json:"agent,omitempty"`
	// Conformance reports whether the target's agent speaks a behaviour
	// contract the checks drive (Parley's conformance agent's words, or
	// ACTS's tck-* prefixes), so that the behaviour checks ran; Contract
	// says which (ContractConformance or ContractACTS).
	Conformance bool   `json:"conformanceAgent"`
	Contract    string `json:"contract,omitempty"`
	// Detected says how the contract was recognised, or why none was.
	Detected string `json:"detected,omitempty"`
	// Bindings are the card's interfaces and whether each was checked.
	Bindings []Interface `json:"interfaces"`
	// Results are the checks in the order they completed: the card, then
	// binding by binding, then across bindings.
	Results []Result `json:"results"`
	// Counts are the results by verdict.
	Counts Counts `json:"counts"`
	// Started is when Run began and Duration how long it took.
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
}

// Interface is one interface of the card and whether it was checked.
type Interface struct {
	// Binding, URL and Version are the card's protocolBinding, url and
	// protocolVersion.
	Binding string `json:"protocolBinding"`
	URL     string `json:"url"`
	Version string `json:"protocolVersion"`
	// Checked reports whether the checks ran on it; Reason says why not.
	Checked bool   `json:"checked"`
	Reason  string `json:"reason,omitempty"`
}

// Counts are the results by verdict.
type Counts struct {
	Fail int `json:"mustFailed"`    // FAIL: MUST failed
	Warn int `json:"shouldNotMet"`  // WARN: SHOULD not met
	Pass int `json:"passed"`        // PASS
	NA   int `json:"notApplicable"` // N/A
	Skip int `json:"skipped"`       // SKIP
}

// countVerdicts counts results by verdict.
func countVerdicts(results []Result) Counts {
	var c Counts
	for _, r := range results {
		switch r.Verdict {
		case Fail:
			c.Fail++
		case Warn:
			c.Warn++
		case Pass:
			c.Pass++
		case NA:
			c.NA++
		case Skip:
			c.Skip++
		}
	}
	return c
}

// MustFailed reports whether any MUST failed.
func (r *Report) MustFailed() bool { return r.Counts.Fail > 0 }

// Find returns the results with the check id (one per binding).
func (r *Report) Find(id string) []Result {
	var out []Result
	for _, x := range r.Results {
		if x.ID == id {
			out = append(out, x)
		}
	}
	return out
}

// UnreachableError is returned by Run when the agent card cannot be
// fetched at all (nothing could be graded).
type UnreachableError struct{ Err error }

// Error implements the error interface.
func (e *UnreachableError) Error() string { return "cannot reach the agent: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }
