// Package conformance grades an A2A agent against the A2A v1.0
// specification from Go code: the checks `parley check` runs, as a report
// (Run) or as subtests of a Go test (Test).
//
//	func TestMyAgent(t *testing.T) {
//		srv := parleytest.NewServer(t, myAgent)
//		conformance.Test(t, srv.URL)
//	}
//
// The agent card is fetched and graded first (spec §8), then every
// interface it declares is checked, binding by binding (JSON-RPC, gRPC
// and HTTP+JSON: spec §9, §10, §11), and last the bindings are
// compared with each other: an agent serving several MUST behave the same
// on all of them (spec §5.1). Each check is one requirement of the
// specification and gets a Status: FAIL when a MUST was not met, WARN when
// a SHOULD was not met, PASS, N/A when no requirement applies (the
// behaviour seen is reported), SKIP when the check could not run (with the
// reason).
//
// Checks that need an agent behaving in a known way (tasks that wait for
// input, streams of a known shape, cancelable work, push notifications)
// drive it through a behaviour contract: the words of Parley's
// conformance agent (`parley serve --agent conformance`), or the tck-*
// message prefixes of ACTS (§11.2 of the A2A Conformance Test
// Specification), which the test agents of other SDKs, Parley's
// `parley serve --agent acts` and any agent a library user writes to it
// speak. The contract is detected by probe messages (WithContract declares
// it); with ACTS's
// every behaviour check runs but B11.append-unknown, which its contract
// cannot ask for. Against an agent speaking neither, the behaviour checks
// (65 per binding) are skipped, each saying so, and these 49 run, on the
// bindings they concern: the card (card.*: served, v1, decode, required,
// interfaces, caching-headers, conditional, content-type), authentication
// (auth.anonymous, auth.challenge, and auth.permission with
// WithInsufficientToken), errors on unknown tasks and configs
// (errors.*), versions (B7.*), required extensions
// (extensions.required), capabilities not declared (capabilities.*),
// media types (B8.success-type, B8.error-type, B8.request-json), the
// JSON-RPC envelope (envelope.*), the extended card (B13.*), the
// ListTasks shape and bounds (B5.list-shape, B5.artifacts-omitted,
// B5.sorted, B5.page-size-zero, B5.page-size-over, B5.bad-token), the
// HTTP+JSON subscribe verbs (B1.subscribe-verbs), gRPC's own
// (grpc.protocol, grpc.unknown-method, grpc.invalid-params) and the
// comparison of the bindings (equivalence.bindings). Task scoping
// between principals (spec §13.1) needs two bearer tokens: WithToken and
// WithSecondToken.
//
// RunACTS runs ACTS files instead (the A2A Conformance Test
// Specification's declarative tests), one report per binding.
//
// Every request goes to the card URL and to the interfaces the card
// declares; the only listener opened is the optional webhook receiver of
// WithWebhookAddr.
package conformance

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"parley.dev/parley/client"
	"parley.dev/parley/internal/check"
)

// An Option adjusts a run of Run or Test.
type Option interface {
	apply(*check.Options)
}

type optionFunc func(*check.Options)

func (f optionFunc) apply(o *check.Options) { f(o) }

// WithToken sends token as a bearer token (spec §7) with every operation:
// the first principal. The public agent card is fetched without it.
func WithToken(token string) Option {
	return optionFunc(func(o *check.Options) { o.Token = token })
}

// WithSecondToken gives a second principal's bearer token. With it, the
// checks that one principal cannot see or act on another's tasks
// (spec §13.1) run; without it they are skipped.
func WithSecondToken(token string) Option {
	return optionFunc(func(o *check.Options) { o.Token2 = token })
}

// WithInsufficientToken gives a bearer token the agent accepts but that
// lacks the rights to send a message and to read the extended card (spec
// §3.3.2: the agent must answer an authorization error; §13.3). RunACTS
// provides it as ACTS's insufficientAuthToken.
func WithInsufficientToken(token string) Option {
	return optionFunc(func(o *check.Options) { o.InsufficientToken = token })
}

// WithHeader adds a header to every request. It may be given more than
// once, for several headers or several values of one.
func WithHeader(key, value string) Option {
	return optionFunc(func(o *check.Options) {
		if o.Header == nil {
			o.Header = http.Header{}
		}
		o.Header.Add(key, value)
	})
}

// WithBindings checks only the interfaces of these bindings: the
// protocolBinding names of the card (a2a.BindingJSONRPC,
// a2a.BindingHTTPJSON, a2a.BindingGRPC; "rest" names HTTP+JSON). Without
// it, every interface of the card is checked.
func WithBindings(bindings ...string) Option {
	return optionFunc(func(o *check.Options) { o.Bindings = append(o.Bindings, bindings...) })
}

// WithHTTPClient makes the requests with hc (its transport carries TLS
// settings, a client certificate, a proxy). The checks grade each
// operation on its own response, so hc should not follow redirects but
// for the agent card, which may sit behind one. Nil keeps the default: a
// client that follows redirects for the card only.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(o *check.Options) { o.HTTPClient = hc })
}

// The behaviour contracts an agent may speak (WithContract).
const (
	// ContractConformance: the words of Parley's conformance agent
	// ("input-required", "stream 3", …).
	ContractConformance = check.ContractConformance
	// ContractACTS: the tck-* message prefixes of ACTS's behaviour
	// contract (the A2A Conformance Test Specification, §11.2), which the
	// test agents of other SDKs speak.
	ContractACTS = check.ContractACTS
	// ContractNone: neither; the behaviour checks are skipped.
	ContractNone = check.ContractNone
)

// WithContract declares the behaviour contract the agent speaks, which the
// checks needing a known behaviour (tasks that wait for input, streams of
// a known shape, cancelable work, push notifications) drive it through.
// Without it the contract is detected: by the card, then by a probe
// message of each contract.
func WithContract(contract string) Option {
	return optionFunc(func(o *check.Options) { o.Contract = contract })
}

// WithWebhookAddr listens on addr (HOST:PORT, reachable from the agent)
// for push notifications, so that the checks of their delivery
// (spec §4.3.3) can run; without it they are skipped.
func WithWebhookAddr(addr string) Option {
	return optionFunc(func(o *check.Options) { o.WebhookAddr = addr })
}

// WithProgress calls f with each result as its check completes, from the
// goroutine running it; calls are never concurrent.
func WithProgress(f func(Result)) Option {
	return optionFunc(func(o *check.Options) {
		if f == nil {
			o.Progress = nil
			return
		}
		o.Progress = func(r check.Result) { f(newResult(r)) }
	})
}

// UnreachableError is the error of Run when the agent card cannot be
// fetched at all, so that nothing could be graded. A card that is
// fetched but wrong is graded, in the Report.
type UnreachableError struct {
	// URL is the card URL tried.
	URL string
	// Err is the cause: a refused connection, a name not found, a timeout.
	Err error
}

// Error implements the error interface.
func (e *UnreachableError) Error() string { return "cannot reach the agent: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Run grades the agent at url: the agent's base URL, or its card's URL.
// It returns an error only when nothing could be graded: an
// *UnreachableError when the card cannot be fetched, or an error for a URL
// it cannot use, a webhook address it cannot listen on, or ctx ending
// before the card came. Whatever the agent gets wrong is in the Report.
func Run(ctx context.Context, url string, opts ...Option) (*Report, error) {
	o := check.Options{URL: url}
	for _, opt := range opts {
		opt.apply(&o)
	}
	rep, err := check.Run(ctx, o)
	if err != nil {
		if ue, ok := errors.AsType[*check.UnreachableError](err); ok {
			u, _ := client.CardURL(url) // check.Run has accepted it
			return nil, &UnreachableError{URL: u, Err: ue.Err}
		}
		return nil, err
	}
	return &Report{rep: rep, results: newResults(rep.Results)}, nil
}

// newResults converts the checker's results.
func newResults(in []check.Result) []Result {
	out := make([]Result, len(in))
	for i, r := range in {
		out[i] = newResult(r)
	}
	return slices.Clip(out)
}
