// Package jwks fetches and caches a JSON Web Key Set (RFC 7517) from a URL
// the caller trusts, or from an OpenID Connect issuer's discovery document.
// It is shared by the JWT authenticator (package authn) and the agent card
// verifier (package cardsign).
//
// Keys are fetched on first use and again when a key id is asked for that
// the cached set does not hold (an issuer that rotated its keys), at most
// once per MinRefresh, so that tokens naming made-up key ids cannot make
// the server hammer the issuer.
package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// DefaultMinRefresh is the shortest time between two fetches of a key set.
const DefaultMinRefresh = 30 * time.Second

// maxDocument bounds a key set or discovery document.
const maxDocument = 1 << 20

// ErrUnknownKey is Cache.Keys' answer for a key id that the key set does not
// hold, even after a refresh.
var ErrUnknownKey = errors.New("no key with this key id")

// Cache holds the keys of one key set. Set URL, or Issuer for OpenID Connect
// discovery; the zero value of the other fields means defaults. Its methods
// may be called concurrently.
type Cache struct {
	// URL is the key set's URL. When empty, it is found in the discovery
	// document of Issuer (its jwks_uri).
	URL string
	// Issuer is an OpenID Connect issuer URL: its discovery document is
	// fetched from Issuer + "/.well-known/openid-configuration", and its
	// "issuer" member must equal Issuer.
	Issuer string
	// HTTPClient fetches the documents (default: a client with a 10 s
	// timeout).
	HTTPClient *http.Client
	// MinRefresh is the shortest time between two fetches (default
	// DefaultMinRefresh).
	MinRefresh time.Duration
	// Now returns the time (default time.Now); tests replace it.
	Now func() time.Time

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	url     string // the key set URL in use (URL, or the discovered one)
	fetched time.Time
	lastErr error
}

// defaultClient is the HTTP client used when Cache.HTTPClient is nil.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Keys returns the keys whose "kid" is kid (every key when kid is ""),
// fetching the set when it has not been fetched yet or does not hold kid
// (at most once per MinRefresh). It returns ErrUnknownKey when none
// matches.
func (c *Cache) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys != nil {
		if ks := match(c.keys, kid); len(ks) > 0 {
			return ks, nil
		}
	}
	minRefresh := c.MinRefresh
	if minRefresh <= 0 {
		minRefresh = DefaultMinRefresh
	}
	if !c.fetched.IsZero() && c.now().Sub(c.fetched) < minRefresh {
		if c.keys == nil {
			return nil, fmt.Errorf("key set unavailable: %w", c.lastErr)
		}
		return nil, ErrUnknownKey
	}
	// The lock is held while fetching: concurrent callers wait for this
	// fetch instead of starting their own.
	c.fetched = c.now()
	set, err := c.fetch(ctx)
	if err != nil {
		c.lastErr = err
		if c.keys == nil {
			return nil, fmt.Errorf("key set unavailable: %w", err)
		}
		// Keep the keys we had: an unreachable issuer must not log
		// everyone out.
		return nil, ErrUnknownKey
	}
	c.keys = set
	if ks := match(set, kid); len(ks) > 0 {
		return ks, nil
	}
	return nil, ErrUnknownKey
}

// match returns the public keys of set with the key id kid (all when "").
func match(set *jose.JSONWebKeySet, kid string) []jose.JSONWebKey {
	if kid == "" {
		return set.Keys
	}
	return set.Key(kid)
}

// fetch reads the key set, discovering its URL first when needed.
func (c *Cache) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
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
			return nil, err
		}
		c.url = u
	}
	return Fetch(ctx, client, c.url)
}

// Fetch reads the key set at u. Private keys in it are refused (a key set
// served by an issuer must hold public keys only), as are symmetric keys.
func Fetch(ctx context.Context, client *http.Client, u string) (*jose.JSONWebKeySet, error) {
	body, err := get(ctx, client, u)
	if err != nil {
		return nil, err
	}
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
	body, err := get(ctx, client, u)
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

// get fetches a JSON document of at most maxDocument bytes.
func get(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocument {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", u, maxDocument)
	}
	return body, nil
}
