package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

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

// cardCheck starts a card-level result.
func (s *session) cardCheck(c Result) *rec {
	return &rec{Result: c, done: func(r *Result) { s.add(r) }}
}

// cardChecks fetches and grades the public agent card. It returns the card
// when the operation checks can go on, nil when they cannot (the report
// says why), and an *UnreachableError when the card URL cannot be reached.
func (s *session) cardChecks(ctx context.Context) (*a2a.AgentCard, error) {
	res := s.fetchCard(ctx, nil)
	if res.failed() {
		return nil, &UnreachableError{Err: fmt.Errorf("GET %s: %w", s.cardURL, res.ex.Err)}
	}
	r := s.cardCheck(Result{ID: "card.served", Operation: "", Title: "the agent card is served at the URL",
		Level: "MUST", Section: "§8.1, §8.2, §14.3",
		Requires: "A2A Servers MUST make an Agent Card available; the resource at /.well-known/agent-card.json MUST return an AgentCard object"}).saw(res)
	body := bytes.TrimSpace(res.ex.Body)
	var top map[string]json.RawMessage
	switch {
	case res.ex.Status != http.StatusOK:
		r.fail("HTTP %d instead of 200 with the card", res.ex.Status)
		return nil, nil
	case len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &top) != nil:
		r.fail("the response is not a JSON object (Content-Type %q): this URL does not serve an A2A agent card", res.ex.contentType())
		return nil, nil
	}
	r.pass("HTTP 200 with a JSON object")

	// A v0.3 card cannot be graded against 1.0.
	r = s.cardCheck(Result{ID: "card.v1", Title: "the card is an A2A v1.0 card (supportedInterfaces, no top-level url)",
		Level: "MUST", Section: "§2.5, §8.3, §A",
		Requires: "supportedInterfaces is REQUIRED; the v0.3 members url, protocolVersion, preferredTransport and additionalInterfaces were removed in v1.0"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	_, hasIfaces := top["supportedInterfaces"]
	if _, ok := top["supported_interfaces"]; ok {
		hasIfaces = true
	}
	_, topURL := top["url"]
	_, topVersion := top["protocolVersion"]
	if !hasIfaces {
		if topURL || topVersion {
			r.fail("this is an A2A v0.3 card (top-level url/protocolVersion, no supportedInterfaces): the server does not speak v1.0 here, nothing else can be graded")
		} else {
			r.fail("the card has no supportedInterfaces: no interface to check")
		}
		return nil, nil
	}
	if topURL || topVersion {
		r.warn("the card carries v0.3 members (top-level url or protocolVersion) next to supportedInterfaces; v1.0 clients ignore them")
	} else {
		r.pass("supportedInterfaces present, no v0.3 members")
	}

	card := &a2a.AgentCard{}
	r = s.cardCheck(Result{ID: "card.decode", Title: "the card is valid ProtoJSON of AgentCard (camelCase members, proto enum names)",
		Level: "MUST", Section: "§5.5, §2.5",
		Requires: "All JSON serializations of the A2A protocol data model MUST use camelCase naming; enum values MUST be their proto names"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	if err := a2a.Unmarshal(body, card); err != nil {
		r.fail("cannot decode the card: %v", err)
		return nil, nil
	}
	r.pass("decoded")

	r = s.cardCheck(Result{ID: "card.required", Title: "every REQUIRED member is present and set",
		Level: "MUST", Section: "§5.7, §2.5",
		Requires: "Fields marked REQUIRED MUST be present and set; REQUIRED arrays MUST contain at least one element (name, description, supportedInterfaces, version, capabilities, defaultInputModes, defaultOutputModes, skills, and the REQUIRED members of nested objects)"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	if v := a2a.CheckRequired(card); len(v) > 0 {
		var parts []string
		for _, f := range v {
			parts = append(parts, f.Field+": "+f.Description)
		}
		r.fail("%s", strings.Join(parts, "; "))
	} else {
		r.pass("all REQUIRED members present")
	}

	s.interfaceChecks(card, res)
	s.cachingChecks(ctx, res)

	r = s.cardCheck(Result{ID: "card.content-type", Title: "media type of the card response",
		Level: "SPEC SILENT", Section: "§8.2, §9.4",
		Requires: "the spec defines no media type for the public card"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	r.na("served as %q", res.ex.Header.Get("Content-Type"))

	usable := false
	for _, in := range card.GetSupportedInterfaces() {
		if major1(in.GetProtocolVersion()) {
			usable = true
		}
	}
	if !usable {
		r = s.cardCheck(Result{ID: "card.version", Title: "an interface speaks A2A 1.x", Level: "MUST", Section: "§9.2, §8.3",
			Requires: "each AgentInterface declares the protocolVersion it exposes"})
		r.skip("no interface declares protocol version 1.x: the operations cannot be checked against v1.0")
		return nil, nil
	}
	return card, nil
}

// interfaceChecks grades supportedInterfaces.
func (s *session) interfaceChecks(card *a2a.AgentCard, res *result) {
	r := s.cardCheck(Result{ID: "card.interfaces", Title: "each interface declares a usable URL, its binding and a Major.Minor protocol version",
		Level: "MUST", Section: "§8.3.1, §2.5, §3.6",
		Requires: "Each interface MUST accurately declare its transport protocol and URL (an absolute HTTPS URL in production); protocolVersion is Major.Minor: patch numbers SHOULD NOT be used in Agent Cards"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	var fails, warns, notes []string
	for i, in := range card.GetSupportedInterfaces() {
		name := fmt.Sprintf("supportedInterfaces[%d] (%s)", i, in.GetProtocolBinding())
		b := canonicalBinding(in.GetProtocolBinding())
		switch b {
		case a2a.BindingJSONRPC, a2a.BindingHTTPJSON:
			u, err := url.Parse(in.GetUrl())
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				fails = append(fails, fmt.Sprintf("%s: url %q is not an absolute http(s) URL", name, in.GetUrl()))
			} else if u.Scheme == "http" {
				notes = append(notes, fmt.Sprintf("%s uses http (fine for development; production MUST use HTTPS, §7.1)", name))
			}
		case a2a.BindingGRPC:
			// brief D34: a URL at the tag, host:port on main; both accepted.
		default:
			notes = append(notes, fmt.Sprintf("%s: custom binding (SHOULD be a URI, §5.8)", name))
		}
		v := in.GetProtocolVersion()
		if parts := strings.Split(v, "."); len(parts) > 2 {
			warns = append(warns, fmt.Sprintf("%s: protocolVersion %q carries a patch number", name, v))
		}
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	switch {
	case len(fails) > 0:
		r.fail("%s%s", strings.Join(fails, "; "), note)
	case len(warns) > 0:
		r.warn("%s%s", strings.Join(warns, "; "), note)
	default:
		r.pass("%d interfaces%s", len(card.GetSupportedInterfaces()), note)
	}
}

// cachingChecks grades the card's HTTP caching (§8.6).
func (s *session) cachingChecks(ctx context.Context, res *result) {
	h := res.ex.Header
	r := s.cardCheck(Result{ID: "card.caching-headers", Title: "the card response carries HTTP caching headers",
		Level: "SHOULD", Section: "§8.6, §8.6.1",
		Requires: "Servers SHOULD use standard HTTP caching: Cache-Control with max-age, an ETag, optionally Last-Modified"})
	r.Sent, r.Received = describeRequest(res.ex), describeResponse(res)
	cc, etag, lm := h.Get("Cache-Control"), h.Get("ETag"), h.Get("Last-Modified")
	var missing []string
	if !strings.Contains(strings.ToLower(cc), "max-age") {
		missing = append(missing, "Cache-Control max-age")
	}
	if etag == "" {
		missing = append(missing, "ETag")
	}
	if len(missing) > 0 {
		r.warn("missing: %s (Cache-Control %q, Last-Modified %q)", strings.Join(missing, ", "), cc, lm)
	} else {
		r.pass("Cache-Control %q, ETag %s, Last-Modified %q", cc, etag, lm)
	}

	r = s.cardCheck(Result{ID: "card.conditional", Title: "a conditional request for an unchanged card gets 304 Not Modified",
		Level: "SHOULD", Section: "§8.6, §8.6.2",
		Requires: "clients revalidate with If-None-Match (the stored ETag) or If-Modified-Since; servers SHOULD honour standard HTTP caching"})
	extra := http.Header{}
	switch {
	case etag != "":
		extra.Set("If-None-Match", etag)
	case lm != "":
		extra.Set("If-Modified-Since", lm)
	default:
		r.na("no ETag or Last-Modified to revalidate with")
		return
	}
	cres := s.fetchCard(ctx, extra)
	r.saw(cres)
	if r.incomplete(cres) {
		return
	}
	if cres.ex.Status == http.StatusNotModified {
		r.pass("304 Not Modified")
	} else {
		r.warn("HTTP %d: the server does not revalidate", cres.ex.Status)
	}
}

// detect decides whether the target serves Parley's conformance agent: by
// its card (name or skill examples), else by a probe message "message",
// which the conformance agent answers with a Message "pong".
func (s *session) detect(ctx context.Context, t *target) {
	card := s.card
	if strings.Contains(strings.ToLower(card.GetName()), "conformance") {
		s.rep.Conformance, s.rep.Detected = true, "card name"
		return
	}
	for _, sk := range card.GetSkills() {
		for _, ex := range sk.GetExamples() {
			if strings.HasPrefix(ex, "input-required") || strings.HasPrefix(ex, "stream ") {
				s.rep.Conformance, s.rep.Detected = true, "skill examples"
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res := t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")}, callOpts{})
	resp := &a2a.SendMessageResponse{}
	if res.ok() && res.decode(resp) == nil && a2a.FirstText(resp.GetMessage()) == "pong" {
		s.rep.Conformance, s.rep.Detected = true, "probe message answered with pong"
		return
	}
	s.rep.Detected = "not detected (card name, skill examples, probe message \"message\" not answered with \"pong\"): checks needing the conformance agent are skipped"
}
