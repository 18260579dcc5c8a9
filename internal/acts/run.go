package acts

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure Run.
type Options struct {
	// Drivers are the bindings to run the tests on, one report each.
	Drivers []Driver
	// SDK describes the implementation under test, for the reports.
	SDK SDKInfo
	// Vars are the runner-provided variables (webhookUrl,
	// insufficientAuthToken, otherUserTaskId, …). They take precedence
	// over a document's variables of the same name, which only hold
	// placeholders for them.
	Vars map[string]string
	// Credentials reports that the runner sends credentials (the
	// auth_credentials runner requirement, the authentication
	// precondition).
	Credentials bool
	// Progress, when set, is told of each test as it ends.
	Progress func(binding string, r *TestResult)
}

// Run runs every test of the document on every driver (at once, one
// goroutine per binding) and returns one report per binding, in the order
// of the drivers.
func Run(ctx context.Context, doc *Document, opts Options) []*Report {
	reps := make([]*Report, len(opts.Drivers))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, d := range opts.Drivers {
		wg.Go(func() {
			b := &bindingRun{doc: doc, opts: opts, d: d}
			b.progress = func(r *TestResult) {
				if opts.Progress != nil {
					mu.Lock()
					opts.Progress(d.Binding(), r)
					mu.Unlock()
				}
			}
			reps[i] = b.run(ctx)
		})
	}
	wg.Wait()
	return reps
}

// bindingRun runs the document on one binding.
type bindingRun struct {
	doc     *Document
	opts    Options
	d       Driver
	card    any    // the public card, in the JSON model (nil: none)
	cardErr string // why there is none
	// anonymousRaw: the current test's raw steps go without credentials.
	anonymousRaw bool
	progress     func(*TestResult)
}

func (b *bindingRun) run(ctx context.Context) *Report {
	start := time.Now()
	rep := newReport(b.doc, b.opts.SDK, b.d.Binding())
	if o := b.d.Card(ctx); o.Failure != "" || o.Err != nil || o.Body == nil {
		b.cardErr = "the agent card could not be read"
		if o.Failure != "" {
			b.cardErr += ": " + o.Failure
		}
	} else {
		b.card = o.Body
	}
	for _, s := range b.doc.Suites {
		sr := SuiteResult{ID: s.ID, Name: s.Name}
		for _, t := range s.Tests {
			r := b.runTest(ctx, s, t)
			sr.Tests = append(sr.Tests, r)
			b.progress(r)
		}
		rep.Suites = append(rep.Suites, sr)
	}
	rep.finish(time.Since(start))
	return rep
}

// runTest runs one test in a fresh scope (tests share no state, §4).
func (b *bindingRun) runTest(ctx context.Context, s *Suite, t *Test) *TestResult {
	start := time.Now()
	r := &TestResult{ID: t.ID, Name: t.Name, Level: t.Level}
	defer func() { r.DurationMS = time.Since(start).Milliseconds() }()
	if reason := b.skipReason(t); reason != "" {
		r.Result, r.SkipReason = Skip, reason
		return r
	}
	sc := &scope{captures: map[string]any{}, runner: b.opts.Vars, docVars: s.vars}
	// A test of authentication (its precondition, or its tag auth) sends
	// its raw requests as written, without the run's credentials; the
	// others carry them, as their operations do.
	b.anonymousRaw = slices.Contains(t.Tags, "auth") || (t.Preconditions != nil && t.Preconditions.Capabilities["authentication"] != nil)
	r.Result = Pass
	for i, st := range t.Steps {
		sr := b.runStep(ctx, sc, st)
		r.Steps = append(r.Steps, sr)
		for _, n := range sr.Notes {
			if !slices.Contains(r.Notes, n) {
				r.Notes = append(r.Notes, n)
			}
		}
		if sr.Result != Pass {
			r.Result, r.Failure = sr.Result, sr.Failure
			for _, rest := range t.Steps[i+1:] {
				r.Steps = append(r.Steps, StepResult{ID: rest.ID, Result: Skip, Failure: &Failure{Message: "an earlier step did not pass"}})
			}
			return r
		}
	}
	if res, f := b.assertAll(sc, t.Assertions); f != nil {
		f.StepID = "assertions"
		r.Result, r.Failure = res, f
	}
	return r
}

// skipReason says why a test does not apply to this binding or agent
// (ACTS §3.2, §3.3, §12.3, §12.5), "" when it does.
func (b *bindingRun) skipReason(t *Test) string {
	binding := b.d.Binding()
	if len(t.Transport) > 0 && !slices.Contains(t.Transport, binding) {
		return "transport filter: " + strings.Join(t.Transport, ", ")
	}
	for _, req := range t.RunnerRequirements {
		switch req {
		case "webhook_endpoint":
			if b.opts.Vars["webhookUrl"] == "" {
				return "runner requirement webhook_endpoint: no webhook endpoint configured"
			}
		case "auth_credentials":
			if !b.opts.Credentials {
				return "runner requirement auth_credentials: no credentials given"
			}
		case "concurrent_streams", "stream_disconnect", "header_inspection":
		default:
			return "runner requirement " + req + ": not supported by this runner"
		}
	}
	p := t.Preconditions
	if p == nil {
		return ""
	}
	if len(p.Transport) > 0 && !slices.Contains(p.Transport, binding) {
		return "precondition transport: " + strings.Join(p.Transport, ", ")
	}
	if len(p.Capabilities) > 0 || len(p.Skills) > 0 || len(p.Extensions) > 0 {
		if b.card == nil {
			return "preconditions: " + b.cardErr
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Capabilities)) {
		want := norm(p.Capabilities[k])
		if k == "authentication" {
			// Not a member of AgentCapabilities: the draft's suite uses it
			// for "the agent authenticates callers". It holds when the card
			// declares security requirements and the runner has credentials.
			has := b.authenticates()
			if truth(want) && !has {
				return "precondition authentication: the card declares no security requirement, or no credentials were given"
			}
			if !truth(want) && has {
				return "precondition authentication: false, but the agent authenticates callers"
			}
			continue
		}
		got, ok := lookupOne(b.card, "capabilities."+k)
		if !ok {
			got, ok = false, true // an absent capability is false (proto3 default)
		}
		if match("capabilities."+k, want, got, ok) != nil {
			return fmt.Sprintf("precondition capabilities.%s: %s, the card says %s", k, scalarText(want), scalarText(got))
		}
	}
	for _, sk := range p.Skills {
		ids, _ := lookup(b.card, "skills[*].id")
		if !slices.Contains(ids, any(sk["id"])) {
			return "precondition skill " + sk["id"] + ": not in the card"
		}
	}
	for _, ext := range p.Extensions {
		uris, _ := lookup(b.card, "capabilities.extensions[*].uri")
		if !slices.Contains(uris, any(ext)) {
			return "precondition extension " + ext + ": not in the card"
		}
	}
	return ""
}

// authenticates reports whether the card asks for credentials and the
// runner has some.
func (b *bindingRun) authenticates() bool {
	reqs, _ := lookup(b.card, "securityRequirements[*]")
	schemes, _ := lookupOne(b.card, "securitySchemes")
	m, _ := schemes.(map[string]any)
	return b.opts.Credentials && (len(reqs) > 0 || len(m) > 0)
}
