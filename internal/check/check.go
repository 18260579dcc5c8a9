// Package check grades an A2A server against the specification (A2A
// v1.0.1, as summarised in the project's fact brief, whose § numbers the
// report cites) and against the behaviours where the official SDKs split
// (DESIGN B1–B14).
//
// Run fetches the agent card, checks it, and then runs the operation checks
// binding by binding, over every interface of the card (JSON-RPC,
// HTTP+JSON and gRPC; a gRPC dial target host:port is called over
// cleartext HTTP/2, or over TLS when the card was served over https).
// Checks that work against any agent always run: the card, errors for
// unknown tasks, version handling, pagination shape, content types,
// JSON-RPC envelope errors, gRPC statuses and details, capability gating,
// extended card access. Checks that need an agent that behaves in a known way run only
// when the target serves Parley's conformance agent (recognised by its
// card, or by a probe message "message" answered with "pong"), and are
// skipped with a reason otherwise.
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
package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Verdict grades one check.
type Verdict string

// The verdicts, from worst to best.
const (
	Fail  Verdict = "FAIL" // a MUST (or REQUIRED) was not met
	Warn  Verdict = "WARN" // a SHOULD was not met
	Pass  Verdict = "PASS"
	NA    Verdict = "N/A"  // no requirement applies (spec silent, MAY, or not declared); the finding says what was observed
	Skip  Verdict = "SKIP" // not run, with the reason
	unset Verdict = ""
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
	// Row is the DESIGN row (B1..B14) the check is about, "" if none.
	Row string `json:"row,omitempty"`
	// Operation is the A2A operation exercised ("" for card checks).
	Operation string `json:"operation,omitempty"`
	// Title says what is checked.
	Title string `json:"title"`
	// Level is the strength of the requirement: MUST, SHOULD, MAY, or
	// "SPEC SILENT".
	Level string `json:"level"`
	// Section is the brief's § number(s).
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

// Options configure Run.
type Options struct {
	// URL is the agent's base URL or card URL.
	URL string
	// Token is a bearer token for every request (the first principal).
	Token string
	// Token2 is a second principal's token, for the task scoping checks
	// (B12); without it they are skipped.
	Token2 string
	// Header holds extra headers for every request.
	Header http.Header
	// WebhookAddr, when set, is a local HOST:PORT where Run listens for
	// push notifications during the push delivery checks (B3).
	WebhookAddr string
	// Bindings restricts the bindings checked (protocolBinding names);
	// empty means every one the card declares.
	Bindings []string
	// HTTPClient performs the requests (default: a client without
	// redirects and a 20 s timeout per unary request).
	HTTPClient *http.Client
	// Progress, when set, receives one line per check as it completes.
	Progress func(r Result)
}

// Report is the outcome of a run.
type Report struct {
	Target      string      `json:"target"`
	CardURL     string      `json:"cardUrl"`
	Agent       string      `json:"agent,omitempty"`
	Conformance bool        `json:"conformanceAgent"`
	Detected    string      `json:"detected,omitempty"`
	Bindings    []Interface `json:"interfaces"`
	Results     []Result    `json:"results"`
	Counts      Counts      `json:"counts"`
	Started     time.Time   `json:"started"`
	Duration    string      `json:"duration"`
}

// Interface is one interface of the card and whether it was checked.
type Interface struct {
	Binding string `json:"protocolBinding"`
	URL     string `json:"url"`
	Version string `json:"protocolVersion"`
	Checked bool   `json:"checked"`
	Reason  string `json:"reason,omitempty"`
}

// Counts are the results by verdict.
type Counts struct {
	Fail int `json:"mustFailed"`
	Warn int `json:"shouldNotMet"`
	Pass int `json:"passed"`
	NA   int `json:"notApplicable"`
	Skip int `json:"skipped"`
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

// Run checks the agent. It returns an error only when nothing could be
// checked (the card cannot be fetched: *UnreachableError, or bad
// options); a card that fails its checks is reported in the Report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.URL == "" {
		return nil, errors.New("check: no URL")
	}
	cardURL, err := client.CardURL(opts.URL)
	if err != nil {
		return nil, err
	}
	hc, cardHC := opts.HTTPClient, opts.HTTPClient
	if hc == nil {
		// Operations are graded on the response itself, never on where a
		// redirect leads; the card may sit behind one (http to https).
		hc = &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		cardHC = http.DefaultClient
	}
	s := &session{opts: opts, hc: hc, cardHC: cardHC, cardURL: cardURL, started: time.Now()}
	grpcHC := grpcHTTPClient(opts.HTTPClient)
	s.rep = &Report{Target: opts.URL, CardURL: cardURL, Started: s.started}

	card, err := s.cardChecks(ctx)
	if err != nil {
		return nil, err
	}
	if card == nil {
		s.finish()
		return s.rep, nil
	}
	s.card = card
	s.rep.Agent = card.GetName()

	// The interfaces to check.
	var targets []*target
	seen := map[string]bool{}
	for _, in := range card.GetSupportedInterfaces() {
		it := Interface{Binding: in.GetProtocolBinding(), URL: in.GetUrl(), Version: in.GetProtocolVersion()}
		b := canonicalBinding(in.GetProtocolBinding())
		switch {
		case len(opts.Bindings) > 0 && !containsFold(opts.Bindings, in.GetProtocolBinding()):
			it.Reason = "not selected (--binding)"
		case b == "":
			it.Reason = "binding not supported by this checker"
		case !major1(in.GetProtocolVersion()):
			it.Reason = fmt.Sprintf("protocol version %q: this checker grades A2A 1.x", in.GetProtocolVersion())
		case seen[b+" "+in.GetUrl()+" "+in.GetTenant()]:
			it.Reason = "the same interface is listed twice"
		default:
			seen[b+" "+in.GetUrl()+" "+in.GetTenant()] = true
			h := http.Header{}
			for k, v := range opts.Header {
				h[http.CanonicalHeaderKey(k)] = v
			}
			t := &target{binding: b, url: in.GetUrl(), tenant: in.GetTenant(), hc: hc, header: h, token: opts.Token}
			if b == a2a.BindingGRPC {
				// A dial target says nothing about TLS: a card served over
				// https is taken to mean gRPC over TLS too.
				base, err := grpcBase(in.GetUrl(), strings.HasPrefix(strings.ToLower(cardURL), "https://"))
				if err != nil {
					it.Reason = err.Error()
					break
				}
				t.url, t.hc = base, grpcHC
			}
			it.Checked = true
			targets = append(targets, t)
		}
		s.rep.Bindings = append(s.rep.Bindings, it)
	}
	if len(targets) == 0 {
		s.finish()
		return s.rep, nil
	}

	s.detect(ctx, targets[0])

	var wh *webhook
	if opts.WebhookAddr != "" {
		wh, err = startWebhook(opts.WebhookAddr)
		if err != nil {
			return nil, fmt.Errorf("check: --webhook-addr %s: %w", opts.WebhookAddr, err)
		}
		defer wh.close()
	}

	var wg sync.WaitGroup
	runs := make([]*bindingRun, len(targets))
	for i, t := range targets {
		runs[i] = &bindingRun{s: s, t: t, hook: wh, probes: map[string]string{}}
		wg.Add(1)
		go func(b *bindingRun) {
			defer wg.Done()
			b.run(ctx)
		}(runs[i])
	}
	wg.Wait()
	for _, b := range runs {
		s.rep.Results = append(s.rep.Results, b.results...)
	}
	s.equivalence(runs)
	s.finish()
	return s.rep, nil
}

// session is the state of one Run.
type session struct {
	opts    Options
	hc      *http.Client
	cardHC  *http.Client
	cardURL string
	card    *a2a.AgentCard
	rep     *Report
	started time.Time
	mu      sync.Mutex
}

// add records a card-level or cross-binding result.
func (s *session) add(r *Result) {
	s.rep.Results = append(s.rep.Results, *r)
	if s.opts.Progress != nil {
		s.mu.Lock()
		s.opts.Progress(*r)
		s.mu.Unlock()
	}
}

func (s *session) finish() {
	var c Counts
	for _, r := range s.rep.Results {
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
	s.rep.Counts = c
	s.rep.Duration = time.Since(s.started).Round(time.Millisecond).String()
}

// bindingRun runs the checks of one interface.
type bindingRun struct {
	s       *session
	t       *target
	hook    *webhook
	results []Result
	// probes records outcomes of requests every binding makes, for the
	// functional equivalence check (§5.1).
	probes map[string]string

	unknownErr *result // GetTask of an unknown task
	listRes    *result // ListTasks with pageSize 1
}

// check starts a result of this binding.
func (b *bindingRun) check(c Result) *rec {
	c.Binding = b.t.binding
	return &rec{Result: c, done: func(r *Result) {
		b.results = append(b.results, *r)
		if b.s.opts.Progress != nil {
			b.s.mu.Lock()
			b.s.opts.Progress(*r)
			b.s.mu.Unlock()
		}
	}}
}

// rec is a result being filled in.
type rec struct {
	Result
	done func(*Result)
	sent bool
}

func (r *rec) finish(v Verdict, format string, args ...any) {
	if r.sent {
		return
	}
	r.sent = true
	r.Verdict = v
	r.Finding = fmt.Sprintf(format, args...)
	r.done(&r.Result)
}

func (r *rec) pass(format string, args ...any) { r.finish(Pass, format, args...) }
func (r *rec) fail(format string, args ...any) { r.finish(Fail, format, args...) }
func (r *rec) warn(format string, args ...any) { r.finish(Warn, format, args...) }
func (r *rec) na(format string, args ...any)   { r.finish(NA, format, args...) }
func (r *rec) skip(format string, args ...any) { r.finish(Skip, format, args...) }

// same and differs set the Parley comparison of a B row.
func (r *rec) same() *rec { r.Parley = "same"; return r }
func (r *rec) differs(format string, args ...any) *rec {
	r.Parley = "differs: " + fmt.Sprintf(format, args...)
	return r
}

// saw records the exchange of a result as what was sent and received.
func (r *rec) saw(res *result) *rec {
	if res == nil || res.ex == nil {
		return r
	}
	r.Sent = describeRequest(res.ex)
	r.Received = describeResponse(res)
	return r
}

// incomplete ends the check as skipped when res is a transport failure;
// it returns true when it did.
func (r *rec) incomplete(res *result) bool {
	if res.failed() {
		r.saw(res)
		r.skip("could not complete the request (%v): not graded", res.ex.Err)
		return true
	}
	return false
}

// ---------------------------------------------------------------------------
// Helpers

// canonicalBinding returns the standard binding name, or "" for one this
// checker does not speak.
func canonicalBinding(b string) string {
	switch strings.ToUpper(strings.TrimSpace(b)) {
	case a2a.BindingJSONRPC:
		return a2a.BindingJSONRPC
	case a2a.BindingHTTPJSON:
		return a2a.BindingHTTPJSON
	case a2a.BindingGRPC:
		return a2a.BindingGRPC
	}
	return ""
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) || (strings.EqualFold(x, "rest") && strings.EqualFold(s, a2a.BindingHTTPJSON)) {
			return true
		}
	}
	return false
}

func major1(v string) bool {
	v = strings.TrimSpace(v)
	maj, _, _ := strings.Cut(v, ".")
	return v == "" || maj == "1"
}

func protoValueOfString(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }

// stateName is a task state without its TASK_STATE_ prefix.
func stateName(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// abridge shortens s to about n characters on one line.
func abridge(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// describeRequest renders a request on one line.
func describeRequest(x *exchange) string {
	var b strings.Builder
	b.WriteString(x.Method + " " + x.URL)
	if v := x.ReqHeader.Get("A2A-Version"); v != "" {
		b.WriteString("  A2A-Version: " + v)
	} else if x.ReqHeader != nil {
		b.WriteString("  (no A2A-Version)")
	}
	if a := x.ReqHeader.Get("Authorization"); a != "" {
		scheme, _, _ := strings.Cut(a, " ")
		b.WriteString("  Authorization: " + scheme + " …")
	}
	for _, h := range []string{"If-None-Match", "If-Modified-Since"} {
		if v := x.ReqHeader.Get(h); v != "" {
			b.WriteString("  " + h + ": " + v)
		}
	}
	if ct := x.ReqHeader.Get("Content-Type"); ct != "" && ct != "application/json" && ct != "application/a2a+json" {
		b.WriteString("  Content-Type: " + ct)
	}
	if len(x.ReqBody) > 0 {
		if x.IsGRPC {
			b.WriteString("  (protobuf)")
		}
		b.WriteString("  " + abridge(string(x.ReqBody), 220))
	}
	return b.String()
}

// describeResponse renders a response on one line.
func describeResponse(r *result) string {
	x := r.ex
	if x.Status == 0 {
		if x.Err != nil {
			return "no response: " + x.Err.Error()
		}
		return ""
	}
	if x.IsGRPC {
		return describeGRPC(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d %s", x.Status, x.contentType())
	if x.Header.Get("WWW-Authenticate") != "" {
		b.WriteString("  WWW-Authenticate: " + x.Header.Get("WWW-Authenticate"))
	}
	if x.contentType() == "text/event-stream" {
		fmt.Fprintf(&b, "  %d events:", len(x.Events))
		for i, ev := range x.Events {
			if i == 8 && len(x.Events) > 10 {
				fmt.Fprintf(&b, " … (%d more)", len(x.Events)-9)
				ev = x.Events[len(x.Events)-1]
				b.WriteString(" " + ev.kind())
				break
			}
			b.WriteString(" " + ev.kind())
		}
		switch {
		case x.Closed:
			b.WriteString("; then the server closed the stream")
		case x.Err != nil:
			b.WriteString("; then " + x.Err.Error())
		default:
			b.WriteString("; stream still open when the checker stopped reading")
		}
		return b.String()
	}
	if len(x.Body) > 0 {
		b.WriteString("  " + abridge(string(x.Body), 260))
	}
	return b.String()
}
