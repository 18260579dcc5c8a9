package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Options configure Run.
type Options struct {
	// URL is the agent's base URL or card URL.
	URL string
	// Token is a bearer token for every request (the first principal).
	Token string
	// Token2 is a second principal's token, for the task scoping checks
	// (B12); without it they are skipped.
	Token2 string
	// InsufficientToken is a token the agent accepts but that lacks the
	// rights to send a message and to read the extended card (spec
	// §3.3.2, §13.3): ACTS's runner-provided insufficientAuthToken.
	InsufficientToken string
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
	// Contract declares the behaviour contract the agent speaks:
	// ContractConformance, ContractACTS or ContractNone; empty detects it
	// (detect.go).
	Contract string
	// Vars are ACTS variables the runner provides (RunACTS only).
	Vars map[string]string
}

// Run checks the agent. It returns an error only when nothing could be
// checked (the card cannot be fetched: *UnreachableError, or bad
// options); a card that fails its checks is reported in the Report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.URL == "" {
		return nil, errors.New("check: no URL")
	}
	var known bool
	if opts.Contract, known = parseContract(opts.Contract); !known {
		return nil, fmt.Errorf("check: unknown contract %q (conformance, acts or none)", opts.Contract)
	}
	cardURL, err := client.CardURL(opts.URL)
	if err != nil {
		return nil, err
	}
	s := newSession(opts, cardURL)
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

	targets := s.targets(card)
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
	runs := s.runBindings(ctx, targets, wh)
	s.equivalence(runs)
	s.finish()
	return s.rep, nil
}

// session is the state of one Run.
type session struct {
	opts    Options
	hc      *http.Client // operations: redirects are not followed
	cardHC  *http.Client // the card: redirects are followed
	cardURL string
	card    *a2a.AgentCard
	rep     *Report
	started time.Time
	mu      sync.Mutex // serialises Progress calls
}

func newSession(opts Options, cardURL string) *session {
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
	s.rep = &Report{Target: opts.URL, CardURL: cardURL, Started: s.started}
	return s
}

// add records a card-level or cross-binding result.
func (s *session) add(r *Result) {
	s.rep.Results = append(s.rep.Results, *r)
	s.progress(r)
}

// progress reports a completed result to Options.Progress.
func (s *session) progress(r *Result) {
	if s.opts.Progress != nil {
		s.mu.Lock()
		s.opts.Progress(*r)
		s.mu.Unlock()
	}
}

// finish counts the verdicts and stamps the duration.
func (s *session) finish() {
	s.rep.Counts = countVerdicts(s.rep.Results)
	s.rep.Duration = time.Since(s.started).Round(time.Millisecond).String()
}

// targets lists the card's interfaces in the report and returns those to
// check.
func (s *session) targets(card *a2a.AgentCard) []*target {
	grpcHC := grpcHTTPClient(s.opts.HTTPClient)
	var targets []*target
	seen := map[string]bool{}
	for _, in := range card.GetSupportedInterfaces() {
		it := Interface{Binding: in.GetProtocolBinding(), URL: in.GetUrl(), Version: in.GetProtocolVersion()}
		b := canonicalBinding(in.GetProtocolBinding())
		key := b + " " + in.GetUrl() + " " + in.GetTenant()
		switch {
		case len(s.opts.Bindings) > 0 && !selected(s.opts.Bindings, in.GetProtocolBinding()):
			it.Reason = "not selected (--binding)"
		case b == "":
			it.Reason = "binding not supported by this checker"
		case !major1(in.GetProtocolVersion()):
			it.Reason = fmt.Sprintf("protocol version %q: this checker grades A2A 1.x", in.GetProtocolVersion())
		case seen[key] && strings.TrimSpace(in.GetProtocolVersion()) == previewVersion:
			it.Reason = "the A2A " + previewVersion + " preview at the URL of a 1.0 interface: graded there (the 1.1.* checks, with A2A-Version: " + previewVersion + ")"
		case seen[key]:
			it.Reason = "the same interface is listed twice"
		default:
			seen[key] = true
			t, err := s.newTarget(in, b, grpcHC)
			if err != nil {
				it.Reason = err.Error()
				break
			}
			it.Checked = true
			targets = append(targets, t)
		}
		s.rep.Bindings = append(s.rep.Bindings, it)
	}
	return targets
}

// newTarget prepares the calls to one interface of binding b.
func (s *session) newTarget(in *a2a.AgentInterface, b string, grpcHC *http.Client) (*target, error) {
	h := http.Header{}
	for k, v := range s.opts.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	activateRequired(s.card, h)
	t := &target{binding: b, url: in.GetUrl(), tenant: in.GetTenant(), iface: in, hc: s.hc, header: h, token: s.opts.Token}
	if b == a2a.BindingGRPC {
		// A dial target says nothing about TLS: a card served over https
		// is taken to mean gRPC over TLS too.
		base, err := grpcBase(in.GetUrl(), strings.HasPrefix(strings.ToLower(s.cardURL), "https://"))
		if err != nil {
			return nil, err
		}
		t.url, t.hc = base, grpcHC
	}
	return t, nil
}

// runBindings checks every target at once, one goroutine each, and adds
// their results to the report in the order of the targets.
func (s *session) runBindings(ctx context.Context, targets []*target, wh *webhook) []*bindingRun {
	var wg sync.WaitGroup
	runs := make([]*bindingRun, len(targets))
	for i, t := range targets {
		runs[i] = &bindingRun{s: s, t: t, hook: wh, probes: map[string]string{}}
		wg.Go(func() { runs[i].run(ctx) })
	}
	wg.Wait()
	for _, b := range runs {
		s.rep.Results = append(s.rep.Results, b.results...)
	}
	return runs
}

// canonicalBinding returns the standard binding name, or "" for one this
// checker does not speak.
func canonicalBinding(b string) string {
	switch b = strings.ToUpper(strings.TrimSpace(b)); b {
	case a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC:
		return b
	}
	return ""
}

// selected reports whether --binding chose the binding; "rest" names
// HTTP+JSON.
func selected(chosen []string, binding string) bool {
	return slices.ContainsFunc(chosen, func(x string) bool {
		return strings.EqualFold(x, binding) || (strings.EqualFold(x, "rest") && strings.EqualFold(binding, a2a.BindingHTTPJSON))
	})
}

// major1 reports whether a protocolVersion is 1.x (or unset).
func major1(v string) bool {
	v = strings.TrimSpace(v)
	maj, _, _ := strings.Cut(v, ".")
	return v == "" || maj == "1"
}
