package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03"
)

// WellKnownCardPath is where an agent publishes its public card, relative
// to its base URL (spec §8.2).
const WellKnownCardPath = "/.well-known/agent-card.json"

// maxCardSize bounds an agent card response.
const maxCardSize = 4 << 20

// ResolveOptions configure Resolve. A nil *ResolveOptions means defaults.
type ResolveOptions struct {
	// HTTPClient performs the request (default http.DefaultClient).
	HTTPClient *http.Client
	// Header holds extra request headers (credentials for a protected
	// card, say). With any, a redirect is not followed (the error names
	// its target) unless HTTPClient decides on redirects itself.
	Header http.Header
	// Cache, when set, keeps cards by URL under HTTP caching rules; share
	// one among all the resolutions of a program.
	Cache *CardCache
	// Verifier, when set, must accept the card's signatures (spec §8.4)
	// before Resolve returns it, cached or not: it is given the card
	// document as received (see CardVerifier and cardsign.Verifier); a card
	// it refuses gives a *CardError.
	Verifier CardVerifier
	// Warn, when set, is told of each deviation Resolve tolerates in a
	// card it accepts (an empty skills list), in words for a user. It is
	// called from Resolve's goroutine before Resolve returns; a card
	// served from the Cache is not checked again.
	Warn func(msg string)
}

// ErrLegacyCard matches (with errors.Is) the *CardError for an A2A v0.3
// agent card, which this client cannot use.
var ErrLegacyCard = errors.New("a2a client: the agent card is an A2A v0.3 card")

// CardError reports a response that is not a usable A2A v1.0 agent card.
type CardError struct {
	// URL is the card URL.
	URL string
	// StatusCode is the HTTP status when it was not 200.
	StatusCode int
	// Legacy is set for a v0.3 card (a top-level url without
	// supportedInterfaces, or a top-level protocolVersion).
	Legacy bool
	// Violations lists the REQUIRED members the card lacks.
	Violations []a2a.FieldViolation
	// Err is the underlying decoding error, if any.
	Err error

	msg string
}

// Error implements the error interface.
func (e *CardError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "a2a client: agent card at %s: %s%s", e.URL, e.msg, a2a.JoinViolations(e.Violations))
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the decoding error, if any.
func (e *CardError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLegacyCard) true for a v0.3 card.
func (e *CardError) Is(target error) bool { return target == ErrLegacyCard && e.Legacy }

// CardURL returns the URL Resolve fetches for u: u itself when its path
// names a JSON document (ends in ".json"), otherwise the well-known card
// path below u (a base URL with a path keeps it:
// https://host/agents/a → https://host/agents/a/.well-known/agent-card.json).
func CardURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("a2a client: card URL %q: %w", u, err)
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("a2a client: card URL %q is not an absolute http or https URL", u)
	}
	if strings.HasSuffix(p.Path, ".json") {
		return p.String(), nil
	}
	p.Path = strings.TrimRight(p.Path, "/") + WellKnownCardPath
	p.RawPath = ""
	return p.String(), nil
}

// Resolve fetches the agent card from an agent's base URL (at
// /.well-known/agent-card.json below it) or from a card URL, and checks
// that it is an A2A v1.0 card with every REQUIRED member (an empty skills
// list is tolerated and reported to ResolveOptions.Warn). With a Cache it
// honours Cache-Control max-age (and no-store, no-cache, Age, Expires),
// and revalidates an expired card with If-None-Match / If-Modified-Since,
// reusing it on 304 Not Modified.
//
// A card that cannot be used gives a *CardError (errors.Is(err,
// ErrLegacyCard) for a v0.3 card); a failure to reach the server gives a
// *TransportError. The card returned belongs to the caller.
func Resolve(ctx context.Context, u string, opts *ResolveOptions) (*a2a.AgentCard, error) {
	var o ResolveOptions
	if opts != nil {
		o = *opts
	}
	card, body, err := resolve(ctx, u, o)
	if err != nil || o.Verifier == nil {
		return card, err
	}
	return verified(ctx, u, card, body, o.Verifier)
}

// resolve is Resolve without the signature check; it also returns the
// card document as received.
func resolve(ctx context.Context, u string, o ResolveOptions) (*a2a.AgentCard, []byte, error) {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if len(o.Header) > 0 {
		// The extra headers may be credentials: they follow no redirect.
		o.HTTPClient = transport.NoRedirects(o.HTTPClient)
	}
	cardURL, err := CardURL(u)
	if err != nil {
		return nil, nil, err
	}
	var cached *cardEntry
	if o.Cache != nil {
		if e, fresh := o.Cache.lookup(cardURL); fresh {
			return proto.Clone(e.card).(*a2a.AgentCard), e.body, nil
		} else {
			cached = e
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("a2a client: Resolve: %w", err)
	}
	for k, v := range o.Header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	req.Header.Set("Accept", httpx.ContentTypeJSON)
	// A server serving several protocol versions picks the card by it.
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	if cached != nil {
		if cached.etag != "" {
			req.Header.Set("If-None-Match", cached.etag)
		}
		if cached.lastModified != "" {
			req.Header.Set("If-Modified-Since", cached.lastModified)
		}
	}
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, transport.RequestFailure(ctx, "Resolve", cardURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && cached != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxCardSize))
		e := o.Cache.revalidated(cardURL, cached, resp.Header)
		return proto.Clone(e.card).(*a2a.AgentCard), e.body, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCardSize+1))
	if err != nil {
		return nil, nil, transport.ReadFailure(ctx, "Resolve", cardURL, transport.PhaseResponse, err)
	}
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable ||
			resp.StatusCode == http.StatusGatewayTimeout {
			return nil, nil, &TransportError{Op: "Resolve", URL: cardURL, Phase: PhaseResponse, StatusCode: resp.StatusCode, Err: httpx.BodySnippet(body)}
		}
		return nil, nil, &CardError{URL: cardURL, StatusCode: resp.StatusCode, msg: fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)), Err: httpx.BodySnippet(body)}
	}
	if len(body) > maxCardSize {
		return nil, nil, &CardError{URL: cardURL, msg: fmt.Sprintf("larger than %d bytes", maxCardSize)}
	}
	card, err := parseCard(cardURL, resp.Header.Get("Content-Type"), body, o.Warn)
	if err != nil {
		return nil, nil, err
	}
	if o.Cache != nil {
		o.Cache.store(cardURL, card, body, resp.Header)
	}
	return proto.Clone(card).(*a2a.AgentCard), body, nil
}

// ParseCard decodes and checks an agent card document read from name (a
// file, say) with the checks Resolve makes: a *CardError when it cannot
// be used. warn (may be nil) hears of the deviations it tolerates.
func ParseCard(name string, body []byte, warn func(string)) (*a2a.AgentCard, error) {
	return parseCard(name, "", body, warn)
}

// parseCard decodes and checks a card body. warn (may be nil) hears of the
// deviations it tolerates.
func parseCard(cardURL, contentType string, body []byte, warn func(string)) (*a2a.AgentCard, error) {
	body = bytes.TrimSpace(body)
	var top map[string]json.RawMessage
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &top) != nil {
		mt, _, _ := mime.ParseMediaType(contentType)
		msg := "the response is not a JSON object"
		if mt != "" {
			msg += " (Content-Type " + mt + ")"
		}
		return nil, &CardError{URL: cardURL, msg: msg, Err: httpx.BodySnippet(body)}
	}
	_, ifaces := top["supportedInterfaces"]
	if _, snake := top["supported_interfaces"]; snake {
		ifaces = true
	}
	_, topURL := top["url"]
	pv, topVersion := top["protocolVersion"]
	// A card that also carries the v0.3 members beside supportedInterfaces
	// (one document for both generations, as Parley serves) is a v1.0 card.
	if !ifaces && (topURL || topVersion) {
		// A v0.3 card: read as a v1.0 card whose interfaces are at 0.3.
		if card, err := v03.CardToV1(body); err == nil {
			return card, nil
		}
		v := httpx.JSONString(pv)
		if v == "" {
			v = "0.3"
		}
		return nil, &CardError{URL: cardURL, Legacy: true,
			msg: fmt.Sprintf("this is an A2A %s card (top-level url or protocolVersion instead of supportedInterfaces) that could not be read", v)}
	}
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(body, card); err != nil {
		return nil, &CardError{URL: cardURL, msg: "not an agent card", Err: err}
	}
	v := a2a.CheckRequired(card)
	if len(card.GetSkills()) == 0 {
		v = slices.DeleteFunc(v, func(fv a2a.FieldViolation) bool { return fv.Field == "skills" })
		if warn != nil {
			warn(emptySkillsWarning)
		}
	}
	if len(v) > 0 {
		return nil, &CardError{URL: cardURL, msg: "REQUIRED members are missing or empty", Violations: v}
	}
	return card, nil
}

// emptySkillsWarning is what Resolve says of a card with no skills. The
// spec makes skills REQUIRED and its REQUIRED arrays non-empty (§5.7), yet
// its own canonicalization example card has "skills": [] (§8.4.1), and
// some SDKs publish such cards; the rest of the card is usable, so the
// client reads it and says so.
const emptySkillsWarning = "the agent card lists no skills (skills is REQUIRED and should not be empty, spec §5.7); using it anyway"

// CardCache keeps agent cards by URL for Resolve, following HTTP caching
// (spec §8.6). The zero value is ready to use, and one CardCache may be
// shared by any number of goroutines. It holds public cards: requests that
// differ only in their headers share an entry.
type CardCache struct {
	// Now returns the current time (default time.Now); tests replace it.
	// Set it before the first use.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*cardEntry
}

// cardEntry is one cached card. Its fields are immutable; a revalidation
// replaces the entry.
type cardEntry struct {
	card         *a2a.AgentCard
	body         []byte // the card document as received, for a CardVerifier
	etag         string
	lastModified string
	expires      time.Time
}

func (c *CardCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// lookup returns the entry for a URL and whether it is still fresh.
func (c *CardCache) lookup(u string) (*cardEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[u]
	if e == nil {
		return nil, false
	}
	return e, c.now().Before(e.expires)
}

// store caches a card fetched with a 200 response, when the headers allow.
func (c *CardCache) store(u string, card *a2a.AgentCard, body []byte, h http.Header) {
	ttl, ok := freshness(h)
	etag, lm := h.Get("ETag"), h.Get("Last-Modified")
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok || (ttl <= 0 && etag == "" && lm == "") {
		delete(c.entries, u) // nothing to reuse it by
		return
	}
	if c.entries == nil {
		c.entries = map[string]*cardEntry{}
	}
	c.entries[u] = &cardEntry{card: card, body: body, etag: etag, lastModified: lm, expires: c.now().Add(ttl)}
}

// revalidated refreshes an entry after a 304 and returns it.
func (c *CardCache) revalidated(u string, old *cardEntry, h http.Header) *cardEntry {
	ttl, ok := freshness(h)
	e := *old
	if v := h.Get("ETag"); v != "" {
		e.etag = v
	}
	if v := h.Get("Last-Modified"); v != "" {
		e.lastModified = v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		delete(c.entries, u)
		return &e
	}
	e.expires = c.now().Add(ttl)
	if c.entries == nil {
		c.entries = map[string]*cardEntry{}
	}
	c.entries[u] = &e
	return &e
}

// freshness reads how long a response stays fresh (RFC 9111 for a private
// cache): Cache-Control max-age less Age, else Expires less Date; no-cache
// means 0 (store, revalidate every time); no-store means do not store.
func freshness(h http.Header) (time.Duration, bool) {
	maxAge := -1
	for _, line := range h.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store":
				return 0, false
			case "no-cache":
				maxAge = 0
			case "max-age":
				if n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`)); err == nil && maxAge != 0 {
					maxAge = n
				}
			}
		}
	}
	if maxAge >= 0 {
		age, _ := strconv.Atoi(strings.TrimSpace(h.Get("Age")))
		return time.Duration(max(maxAge-age, 0)) * time.Second, true
	}
	if exp := h.Get("Expires"); exp != "" {
		t, err := http.ParseTime(exp)
		if err != nil {
			return 0, true // an invalid Expires means already expired
		}
		date, err := http.ParseTime(h.Get("Date"))
		if err != nil {
			date = time.Now()
		}
		return max(t.Sub(date), 0), true
	}
	return 0, true
}
