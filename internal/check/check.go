// Package check grades an A2A server against the specification (A2A
// v1.0.1) and against the behaviours where the official SDKs split
// (B1–B14, docs/decisions.md). It is what `parley check` and the public
// conformance package run.
//
// Run fetches the agent card, checks it, and then runs the operation checks
// binding by binding, over every interface of the card (JSON-RPC,
// HTTP+JSON and gRPC; a gRPC dial target host:port is called over
// cleartext HTTP/2, or over TLS when the card was served over https).
// Checks that work against any agent always run: the card, errors for
// unknown tasks, version handling, pagination shape, content types,
// JSON-RPC envelope errors, gRPC statuses and details, capability gating,
// extended card access. Checks that need an agent that behaves in a known
// way run only when the target serves Parley's conformance agent
// (recognised by its card, or by a probe message "message" answered with
// "pong"), and are skipped with a reason otherwise.
//
// Every result carries what was sent, what came back (abridged), what the
// spec requires with its § number and level, and a verdict. A verdict
// grades the server against the spec only; for the B rows the result also
// says whether the server made the same choice as Parley, which is not a
// requirement. When a check cannot be completed (a connection fails, an
// earlier step it depends on failed) it is skipped with the reason, never
// failed: the checker reports its own difficulties as such.
//
// Everything Run sends goes to the card URL and the card's interfaces; the
// only listener it opens is the optional webhook receiver.
//
// # Reading the package
//
// The checks come in families, each a table of steps (a check ID and the
// small function that runs it), a family to a file (streaming takes
// agent_stream*.go and agent_subscribe.go):
//
//   - card*.go: the agent card, fetched and graded before anything else;
//   - any_*.go: checks that work against any agent;
//   - agent_*.go: checks that need Parley's conformance agent, described
//     in agent_catalogue.go (detect.go recognises that agent, webhook.go
//     receives its push notifications);
//   - equivalence.go: the comparison across bindings.
//
// run.go runs the card checks and then every binding at once; binding.go
// runs the families of one binding, in report order. record.go and
// grade.go turn what came back into results; wire*.go and grpc*.go are
// the checker's own wire layer; describe.go and render.go write the
// report.
package check

// Verdict grades one check.
type Verdict string

// The verdicts, from worst to best.
const (
	Fail Verdict = "FAIL" // a MUST (or REQUIRED) was not met
	Warn Verdict = "WARN" // a SHOULD was not met
	Pass Verdict = "PASS" // the requirement was met
	NA   Verdict = "N/A"  // no requirement applies (spec silent, MAY, or not declared); the finding says what was observed
	Skip Verdict = "SKIP" // not run, with the reason
)

// Describe is the verdict in words.
func (v Verdict) Describe() string {
	switch v {
	case Fail:
		return "MUST failed"
	case Warn:
		return "SHOULD not met"
	case Pass:
		return "passed"
	case NA:
		return "not applicable"
	case Skip:
		return "skipped"
	}
	return string(v)
}

// Result is the outcome of one check on one binding.
type Result struct {
	// ID names the check, e.g. "errors.unknown-task.get"; stable across
	// runs and bindings.
	ID string `json:"id"`
	// Binding is the interface's protocolBinding; "" for card checks and
	// checks across bindings.
	Binding string `json:"binding,omitempty"`
	// Row is the decision (B1..B14, docs/decisions.md) the check is
	// about, "" if none.
	Row string `json:"row,omitempty"`
	// Operation is the A2A operation exercised ("" for card checks).
	Operation string `json:"operation,omitempty"`
	// Title says what is checked.
	Title string `json:"title"`
	// Level is the strength of the requirement: MUST, SHOULD, MAY, or
	// "SPEC SILENT".
	Level string `json:"level"`
	// Section is the § number(s) the report cites. They were taken from
	// the fact brief the checks were written from, which is not in this
	// repository; most, not all, are the specification's own sections.
	Section string `json:"section"`
	// Requires is what the spec requires, quoted or closely paraphrased.
	Requires string `json:"requires"`
	// Sent and Received are the request and the response, abridged.
	Sent     string `json:"sent,omitempty"`
	Received string `json:"received,omitempty"`
	// Verdict grades the server against the spec.
	Verdict Verdict `json:"verdict"`
	// Finding explains the verdict (or the reason for a skip).
	Finding string `json:"finding,omitempty"`
	// Parley says, for a B row, whether the server made Parley's choice:
	// "same" or "differs: ...". Not a requirement.
	Parley string `json:"parley,omitempty"`
}
