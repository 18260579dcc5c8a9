package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// cardFamily is what the card checks share: the response to the card
// request, and the card as far as it could be read.
type cardFamily struct {
	s    *session
	res  *result
	body []byte                     // the response body, trimmed
	top  map[string]json.RawMessage // its members
	card *a2a.AgentCard
}

// A cardStep is one check of the agent card. It returns false when the
// checks after it cannot run (nothing usable was served).
type cardStep struct {
	desc Result
	run  func(f *cardFamily, ctx context.Context, r *rec) bool
}

// cardSteps are the checks of the public agent card, in order.
var cardSteps = []cardStep{
	{Result{ID: "card.served", Title: "the agent card is served at the URL",
		Level: "MUST", Section: "§8.1, §8.2, §14.3",
		Requires: "A2A Servers MUST make an Agent Card available; the resource at /.well-known/agent-card.json MUST return an AgentCard object"},
		(*cardFamily).served},
	// A v0.3 card cannot be graded against 1.0.
	{Result{ID: "card.v1", Title: "the card is an A2A v1.0 card (supportedInterfaces, no top-level url)",
		Level: "MUST", Section: "§2.5, §8.3, §A",
		Requires: "supportedInterfaces is REQUIRED; the v0.3 members url, protocolVersion, preferredTransport and additionalInterfaces were removed in v1.0"},
		(*cardFamily).v1},
	{Result{ID: "card.decode", Title: "the card is valid ProtoJSON of AgentCard (camelCase members, proto enum names)",
		Level: "MUST", Section: "§5.5, §2.5",
		Requires: "All JSON serializations of the A2A protocol data model MUST use camelCase naming; enum values MUST be their proto names"},
		(*cardFamily).decode},
	{Result{ID: "card.required", Title: "every REQUIRED member is present and set",
		Level: "MUST", Section: "§5.7, §2.5",
		Requires: "Fields marked REQUIRED MUST be present and set; REQUIRED arrays MUST contain at least one element (name, description, supportedInterfaces, version, capabilities, defaultInputModes, defaultOutputModes, skills, and the REQUIRED members of nested objects)"},
		(*cardFamily).required},
	{Result{ID: "card.interfaces", Title: "each interface declares a usable URL, its binding and a Major.Minor protocol version",
		Level: "MUST", Section: "§8.3.1, §2.5, §3.6",
		Requires: "Each interface MUST accurately declare its transport protocol and URL (an absolute HTTPS URL in production); protocolVersion is Major.Minor: patch numbers SHOULD NOT be used in Agent Cards"},
		(*cardFamily).interfaces},
	{Result{ID: "card.caching-headers", Title: "the card response carries HTTP caching headers",
		Level: "SHOULD", Section: "§8.6, §8.6.1",
		Requires: "Servers SHOULD use standard HTTP caching: Cache-Control with max-age, an ETag, optionally Last-Modified"},
		(*cardFamily).cachingHeaders},
	{Result{ID: "card.conditional", Title: "a conditional request for an unchanged card gets 304 Not Modified",
		Level: "SHOULD", Section: "§8.6, §8.6.2",
		Requires: "clients revalidate with If-None-Match (the stored ETag) or If-Modified-Since; servers SHOULD honour standard HTTP caching"},
		(*cardFamily).conditional},
	{Result{ID: "card.content-type", Title: "media type of the card response",
		Level: "SPEC SILENT", Section: "§8.2, §9.4",
		Requires: "the spec defines no media type for the public card"},
		(*cardFamily).contentType},
	{Result{ID: "card.version", Title: "an interface speaks A2A 1.x", Level: "MUST", Section: "§9.2, §8.3",
		Requires: "each AgentInterface declares the protocolVersion it exposes"},
		(*cardFamily).version},
}

// cardChecks fetches and grades the public agent card. It returns the card
// when the operation checks can go on, nil when they cannot (the report
// says why), and an *UnreachableError when the card URL cannot be reached.
func (s *session) cardChecks(ctx context.Context) (*a2a.AgentCard, error) {
	res := s.fetchCard(ctx, nil)
	if res.failed() {
		return nil, &UnreachableError{Err: fmt.Errorf("GET %s: %w", s.cardURL, res.ex.Err)}
	}
	f := &cardFamily{s: s, res: res, body: bytes.TrimSpace(res.ex.Body)}
	for _, st := range cardSteps {
		if !st.run(f, ctx, s.cardCheck(st.desc)) {
			return nil, nil
		}
	}
	return f.card, nil
}

// cardCheck starts a card-level result.
func (s *session) cardCheck(c Result) *rec {
	return &rec{Result: c, done: s.add}
}

// fetchCard performs one GET of the card URL with extra headers.
func (s *session) fetchCard(ctx context.Context, extra http.Header) *result {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cardURL, nil)
	if err != nil {
		return &result{ex: &exchange{Method: "GET", URL: s.cardURL, Err: err}}
	}
	for k, v := range s.opts.Header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range extra {
		req.Header[k] = v
	}
	ex := &exchange{Method: "GET", URL: s.cardURL, ReqHeader: req.Header.Clone()}
	start := time.Now()
	resp, err := s.cardHC.Do(req)
	if err != nil {
		ex.Err = err
		return &result{ex: ex}
	}
	defer resp.Body.Close()
	ex.Status, ex.Header = resp.StatusCode, resp.Header
	ex.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	ex.Elapsed = time.Since(start)
	if err != nil {
		ex.Err = err
	}
	return &result{ex: ex, raw: ex.Body}
}

func (f *cardFamily) served(_ context.Context, r *rec) bool {
	r.saw(f.res)
	switch {
	case f.res.ex.Status != http.StatusOK:
		r.fail("HTTP %d instead of 200 with the card", f.res.ex.Status)
		return false
	case len(f.body) == 0 || f.body[0] != '{' || json.Unmarshal(f.body, &f.top) != nil:
		r.fail("the response is not a JSON object (Content-Type %q): this URL does not serve an A2A agent card", f.res.ex.contentType())
		return false
	}
	r.pass("HTTP 200 with a JSON object")
	return true
}

func (f *cardFamily) v1(_ context.Context, r *rec) bool {
	r.saw(f.res)
	_, hasIfaces := f.top["supportedInterfaces"]
	if _, ok := f.top["supported_interfaces"]; ok {
		hasIfaces = true
	}
	_, topURL := f.top["url"]
	_, topVersion := f.top["protocolVersion"]
	switch {
	case !hasIfaces && (topURL || topVersion):
		r.fail("this is a v0.3-only agent: its card is an A2A v0.3 card (top-level url/protocolVersion, no supportedInterfaces), so it does not speak v1.0 and nothing else can be graded (parley check grades v1.0; parley send and parley card work with v0.3 agents)")
		return false
	case !hasIfaces:
		r.fail("the card has no supportedInterfaces: no interface to check")
		return false
	case topURL || topVersion:
		// One document for both generations (docs/versions.md): v1.0
		// clients ignore the v0.3 members.
		r.pass("supportedInterfaces present, with the v0.3 members beside them for v0.3 clients (the agent serves both versions)")
	default:
		r.pass("supportedInterfaces present, no v0.3 members")
	}
	return true
}

func (f *cardFamily) decode(_ context.Context, r *rec) bool {
	r.saw(f.res)
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(f.body, card); err != nil {
		r.fail("cannot decode the card: %v", err)
		return false
	}
	f.card = card
	r.pass("decoded")
	return true
}

func (f *cardFamily) required(_ context.Context, r *rec) bool {
	r.saw(f.res)
	v := a2a.CheckRequired(f.card)
	var parts []string
	for _, fv := range v {
		parts = append(parts, fv.Field+": "+fv.Description)
	}
	switch {
	case len(v) == 1 && v[0].Field == "skills" && len(f.card.GetSkills()) == 0:
		// An empty skills list breaks §5.7's rule for REQUIRED arrays, but
		// the spec's own example card has one (§8.4.1) and clients read
		// such a card (Parley's with a warning): a warning, not a failure.
		r.warn("skills is empty: REQUIRED arrays should have at least one element (spec §5.7), though the spec's own example card (§8.4.1) has none")
	case len(v) > 0:
		r.fail("%s", strings.Join(parts, "; "))
	default:
		r.pass("all REQUIRED members present")
	}
	return true
}

func (f *cardFamily) contentType(_ context.Context, r *rec) bool {
	r.saw(f.res)
	r.na("served as %q", f.res.ex.Header.Get("Content-Type"))
	return true
}

// version is reported only when it fails: when no interface speaks 1.x,
// nothing after the card can be checked.
func (f *cardFamily) version(_ context.Context, r *rec) bool {
	for _, in := range f.card.GetSupportedInterfaces() {
		if major1(in.GetProtocolVersion()) {
			return true
		}
	}
	r.skip("no interface declares protocol version 1.x: the operations cannot be checked against v1.0")
	return false
}
