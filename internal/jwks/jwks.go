// Package jwks fetches and caches a JSON Web Key Set (RFC 7517) from a URL
// the caller trusts, or from an OpenID Connect issuer's discovery document.
// It is shared by the JWT authenticator (package authn) and the agent card
// verifier (package cardsign).
//
// A Cache fetches its key set on first use, again once the set is due for
// refresh (every RefreshInterval, or sooner when the response's
// Cache-Control max-age says so, RFC 9111 §5.2.2.1), and again when a key
// id is asked for that the set does not hold (an issuer that rotated its
// keys). No two fetches start less than MinRefresh apart, so tokens naming
// made-up key ids cannot make the server hammer the issuer.
//
// Fetches are detached from the callers that cause them: a fetch runs under
// its own context and FetchTimeout, one fetch serves every caller waiting
// for it, and a caller whose context ends stops waiting without cancelling
// the fetch. No lock is held while fetching: keys already held keep
// verifying while a fetch is under way, a set that is due for refresh is
// used while its refresh runs, and when the refresh fails the last good set
// keeps verifying for MaxStale past the time it was due; after that, Keys
// answers "key set unavailable" until a fetch succeeds.
package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Defaults of Cache.
const (
	// DefaultRefreshInterval is how long a fetched key set is used before
	// it is fetched again (unless the response's max-age is shorter).
	DefaultRefreshInterval = 5 * time.Minute
	// DefaultMinRefresh is the shortest time between the starts of two
	// fetches, whatever causes them (unknown key ids, max-age, retries).
	DefaultMinRefresh = 30 * time.Second
	// DefaultFetchTimeout bounds one fetch (discovery and key set).
	DefaultFetchTimeout = 10 * time.Second
	// DefaultMaxStale is how long the last good set keeps verifying past
	// the time it was due for refresh, while refreshes fail.
	DefaultMaxStale = time.Hour
)

// maxDocument bounds a key set or discovery document.
const maxDocument = 1 << 20

// ErrUnknownKey is Cache.Keys' answer for a key id that the key set does not
// hold, even after a refresh.
var ErrUnknownKey = errors.New("no key with this key id")

// Cache holds the keys of one key set. Set URL, or Issuer for OpenID Connect
// discovery; the zero value of the other fields means defaults. Its methods
// may be called concurrently; its fields must not change after first use.
type Cache struct {
	// URL is the key set's URL. When empty, it is found in the discovery
	// document of Issuer (its jwks_uri).
	URL string
	// Issuer is an OpenID Connect issuer URL: its discovery document is
	// fetched from Issuer + "/.well-known/openid-configuration", and its
	// "issuer" member must equal Issuer.
	Issuer string
	// HTTPClient fetches the documents (default: http.Client with no
	// timeout of its own; FetchTimeout bounds each fetch).
	HTTPClient *http.Client
	// RefreshInterval is how long a fetched set is used before it is
	// fetched again (default DefaultRefreshInterval). A shorter
	// "Cache-Control: max-age" on the key set response wins; no-cache,
	// no-store and max-age=0 mean MinRefresh.
	RefreshInterval time.Duration
	// MinRefresh is the shortest time between the starts of two fetches
	// (default DefaultMinRefresh). It rate-limits the refreshes that
	// unknown key ids cause, retries after a failed fetch, and short
	// max-age values.
	MinRefresh time.Duration
	// FetchTimeout bounds one fetch (default DefaultFetchTimeout). It is
	// the fetch's own deadline: callers' contexts do not shorten it.
	FetchTimeout time.Duration
	// MaxStale is how long the last good set keeps verifying past the
	// time it was due for refresh while the key set cannot be fetched
	// (default DefaultMaxStale).
	MaxStale time.Duration
	// Now returns the time (default time.Now); tests replace it. It is
	// called only by the goroutines calling Keys.
	Now func() time.Time

	mu       sync.Mutex
	set      *jose.JSONWebKeySet // the last good set, nil before the first
	goodAt   time.Time           // when the fetch that got set started
	ttl      time.Duration       // how long set is fresh after goodAt
	tried    time.Time           // when the last fetch started
	lastErr  error               // the last fetch's error, nil after a success
	inflight *call               // the fetch under way, if any

	url string // the key set URL in use; touched only by the one running fetch
}

// call is one fetch under way. done is closed when it has ended and the
// cache holds its outcome.
type call struct {
	done    chan struct{}
	waiters int // callers waiting for it (for tests)
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cache) minRefresh() time.Duration { return orDefault(c.MinRefresh, DefaultMinRefresh) }
func (c *Cache) refreshInterval() time.Duration {
	return orDefault(c.RefreshInterval, DefaultRefreshInterval)
}
func (c *Cache) fetchTimeout() time.Duration { return orDefault(c.FetchTimeout, DefaultFetchTimeout) }
func (c *Cache) maxStale() time.Duration     { return orDefault(c.MaxStale, DefaultMaxStale) }

// orDefault is d when it is set (positive), else def.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Keys returns the keys whose "kid" is kid (every key when kid is ""). It
// returns ErrUnknownKey when the set holds no such key, even after the
// refresh that an unknown key id causes (when MinRefresh allows one), and
// an error saying "key set unavailable" when no set has been fetched or the
// last good one is past MaxStale.
//
// Keys waits for a fetch only when it needs one to answer: no usable set,
// or an unknown key id. A set due for refresh answers at once while its
// refresh runs in the background. A caller whose ctx ends while waiting
// gets ctx's error; the fetch goes on for the others.
func (c *Cache) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	c.mu.Lock()
	now := c.now()
	usable := c.usable(now)
	if usable {
		if ks := match(c.set, kid); len(ks) > 0 {
			if !now.Before(c.goodAt.Add(c.ttl)) {
				c.start(ctx, now) // due: refresh in the background
			}
			c.mu.Unlock()
			return ks, nil
		}
	}
	cl := c.start(ctx, now)
	if cl == nil {
		// MinRefresh has not passed since the last fetch started.
		defer c.mu.Unlock()
		return nil, c.miss(usable)
	}
	cl.waiters++
	c.mu.Unlock()

	select {
	case <-cl.done:
	case <-ctx.Done():
		c.mu.Lock()
		cl.waiters--
		c.mu.Unlock()
		return nil, fmt.Errorf("waiting for the key set: %w", context.Cause(ctx))
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	usable = c.usable(c.now())
	if usable {
		if ks := match(c.set, kid); len(ks) > 0 {
			return ks, nil
		}
	}
	return nil, c.miss(usable)
}

// usable reports whether the cache holds a set that may still be used at
// now: fresh, or stale by no more than MaxStale. c.mu is held.
func (c *Cache) usable(now time.Time) bool {
	return c.set != nil && now.Before(c.goodAt.Add(c.ttl).Add(c.maxStale()))
}

// miss is the error for a key id not found, given whether a usable set was
// searched. c.mu is held.
func (c *Cache) miss(usable bool) error {
	if usable {
		return ErrUnknownKey
	}
	if c.lastErr != nil {
		return fmt.Errorf("key set unavailable: %w", c.lastErr)
	}
	if c.set != nil {
		return errors.New("key set unavailable: the last key set fetched is past its stale period")
	}
	return errors.New("key set unavailable: not fetched yet")
}

// start returns the fetch under way, or starts one when MinRefresh has
// passed since the last one started; it returns nil when neither. The
// fetch runs under a context of its own (ctx's values, not its
// cancellation) bounded by FetchTimeout. c.mu is held.
func (c *Cache) start(ctx context.Context, now time.Time) *call {
	if c.inflight != nil {
		return c.inflight
	}
	if !c.tried.IsZero() && now.Sub(c.tried) < c.minRefresh() {
		return nil
	}
	cl := &call{done: make(chan struct{})}
	c.inflight, c.tried = cl, now
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.fetchTimeout())
	go func() {
		defer cancel()
		set, maxAge, err := c.fetch(fctx)
		c.mu.Lock()
		if err != nil {
			c.lastErr = err
		} else {
			c.set, c.goodAt, c.ttl, c.lastErr = set, now, c.freshFor(maxAge), nil
		}
		c.inflight = nil
		c.mu.Unlock()
		close(cl.done)
	}()
	return cl
}

// freshFor is how long a set fetched with the given max-age (negative when
// the response gave none) is used: RefreshInterval, or max-age when
// shorter, and never less than MinRefresh.
func (c *Cache) freshFor(maxAge time.Duration) time.Duration {
	d := c.refreshInterval()
	if maxAge >= 0 && maxAge < d {
		d = maxAge
	}
	return max(d, c.minRefresh())
}

// match returns the public keys of set with the key id kid (all when "").
func match(set *jose.JSONWebKeySet, kid string) []jose.JSONWebKey {
	if kid == "" {
		return set.Keys
	}
	return set.Key(kid)
}

// defaultClient is the HTTP client used when Cache.HTTPClient is nil; each
// fetch's context carries its deadline.
var defaultClient = &http.Client{}

// fetch reads the key set, discovering its URL first when needed. It
// returns the response's max-age (negative when none). Only one fetch of a
// cache runs at a time.
func (c *Cache) fetch(ctx context.Context) (*jose.JSONWebKeySet, time.Duration, error) {
	client := c.HTTPClient
	if client == nil {
		client = defaultClient
	}
	if c.url == "" {
		c.url = c.URL
	}
	if c.url == "" {
		u, err := Discover(ctx, client, c.Issuer)
		if err != nil {
			return nil, 0, err
		}
		c.url = u
	}
	body, h, err := get(ctx, client, c.url)
	if err != nil {
		return nil, 0, err
	}
	set, err := parseSet(c.url, body)
	if err != nil {
		return nil, 0, err
	}
	return set, maxAge(h), nil
}

// maxAge returns the freshness lifetime a response's Cache-Control gives
// (max-age less Age, RFC 9111 §4.2.1 and §4.2.3), 0 for no-cache and
// no-store, and -1 when it gives none. Of several max-age values the least
// counts, and one that is not a number makes the response stale (both as
// §4.2.1 advises); values past 2^31 seconds are capped there (§1.2.2).
func maxAge(h http.Header) time.Duration {
	const infinity = 1 << 31
	age := int64(-1)
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-cache", "no-store":
				return 0
			case "max-age":
				n, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(val), `"`), 10, 63)
				switch {
				case errors.Is(err, strconv.ErrRange):
					n = infinity
				case err != nil:
					return 0
				}
				n = min(n, infinity)
				if age < 0 || int64(n) < age {
					age = int64(n)
				}
			}
		}
	}
	if age < 0 {
		return -1
	}
	if a, err := strconv.ParseUint(strings.TrimSpace(h.Get("Age")), 10, 63); err == nil {
		age = max(age-int64(min(a, infinity)), 0)
	}
	return time.Duration(age) * time.Second
}

// Fetch reads the key set at u. Private keys in it are refused (a key set
// served by an issuer must hold public keys only), as are symmetric keys.
func Fetch(ctx context.Context, client *http.Client, u string) (*jose.JSONWebKeySet, error) {
	body, _, err := get(ctx, client, u)
	if err != nil {
		return nil, err
	}
	return parseSet(u, body)
}

// parseSet reads the key set body fetched from u, public asymmetric keys
// only.
func parseSet(u string, body []byte) (*jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("key set %s: %w", u, err)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() || !k.Valid() {
			return nil, fmt.Errorf("key set %s: key %q is not a public asymmetric key", u, k.KeyID)
		}
	}
	return &set, nil
}

// Discover reads the OpenID Connect discovery document of issuer and
// returns its jwks_uri. The document's issuer must equal issuer (OpenID
// Connect Discovery 1.0 §4.3).
func Discover(ctx context.Context, client *http.Client, issuer string) (string, error) {
	if issuer == "" {
		return "", errors.New("no key set URL and no issuer to discover it from")
	}
	u := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	body, _, err := get(ctx, client, u)
	if err != nil {
		return "", err
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("discovery document %s: %w", u, err)
	}
	if doc.Issuer != issuer {
		return "", fmt.Errorf("discovery document %s names issuer %q, not %q", u, doc.Issuer, issuer)
	}
	if doc.JWKSURI == "" {
		return "", fmt.Errorf("discovery document %s has no jwks_uri", u)
	}
	return doc.JWKSURI, nil
}

// get fetches a JSON document of at most maxDocument bytes, and returns
// it with the response's header.
func get(ctx context.Context, client *http.Client, u string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocument {
		return nil, nil, fmt.Errorf("GET %s: larger than %d bytes", u, maxDocument)
	}
	return body, resp.Header, nil
}
