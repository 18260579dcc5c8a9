package authn_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"parley.dev/parley/authn"
	"parley.dev/parley/internal/testkit"
)

const audience = "https://agent.example"

func newJWT(t *testing.T, is *issuer, mod func(*authn.JWTOptions)) *authn.JWT {
	t.Helper()
	o := authn.JWTOptions{Issuer: is.URL(), Audience: audience, MinRefresh: time.Nanosecond}
	if mod != nil {
		mod(&o)
	}
	j, err := authn.NewJWT(o)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// bearer is a request carrying tok.
func bearer(tok string) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "http://agent.example/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

func TestJWTValidTokenAndRotation(t *testing.T) {
	is := newIssuer(t)
	j := newJWT(t, is, nil)
	p, err := j.Authenticate(bearer(is.token(t, "k1", is.claims("alice", audience))))
	if err != nil || p != "alice" {
		t.Fatalf("valid token: %q, %v", p, err)
	}
	if is.discovery.Load() != 1 || is.jwksHits.Load() != 1 {
		t.Errorf("discovery fetched %d times, keys %d; want 1 and 1", is.discovery.Load(), is.jwksHits.Load())
	}
	// Cached: a second token costs no fetch.
	j.Authenticate(bearer(is.token(t, "k1", is.claims("bob", audience))))
	if is.jwksHits.Load() != 1 {
		t.Errorf("keys fetched %d times for a known kid", is.jwksHits.Load())
	}
	// The issuer rotates: a token under the new kid makes one refresh.
	is.rotate(t, "k2")
	is.retire("k1")
	p, err = j.Authenticate(bearer(is.token(t, "k2", is.claims("carol", audience))))
	if err != nil || p != "carol" {
		t.Fatalf("after rotation: %q, %v", p, err)
	}
	if is.jwksHits.Load() != 2 {
		t.Errorf("keys fetched %d times; want 2", is.jwksHits.Load())
	}
}

func TestJWTPrincipalClaimAndJWKSURL(t *testing.T) {
	is := newIssuer(t)
	j := newJWT(t, is, func(o *authn.JWTOptions) { o.Issuer, o.JWKSURL, o.PrincipalClaim = "", is.URL()+"/keys", "email" })
	c := map[string]any{"iss": "anyone", "aud": audience, "exp": time.Now().Add(time.Minute).Unix(), "email": "dave@example.com"}
	if p, err := j.Authenticate(bearer(is.token(t, "k1", c))); err != nil || p != "dave@example.com" {
		t.Fatalf("principal claim email: %q, %v", p, err)
	}
	if is.discovery.Load() != 0 {
		t.Error("discovery used although a key set URL was given")
	}
	delete(c, "email")
	if _, err := j.Authenticate(bearer(is.token(t, "k1", c))); err == nil || !strings.Contains(err.Error(), `"email"`) {
		t.Errorf("token without the principal claim: %v", err)
	}
}

// TestJWTRefusals: every way a token can be wrong is refused, with a reason
// that never holds the token.
func TestJWTRefusals(t *testing.T) {
	is := newIssuer(t)
	j := newJWT(t, is, func(o *authn.JWTOptions) { o.MinRefresh = time.Hour })
	base := is.claims("mallory", audience)
	with := func(mod func(*jwt.Claims)) jwt.Claims { c := base; mod(&c); return c }
	ecPub := is.key("k1").Public().(*ecdsa.PublicKey)
	pubDER, _ := x509.MarshalPKIXPublicKey(ecPub)
	valid := is.token(t, "k1", base)
	parts := strings.Split(valid, ".")
	forged := base
	forged.Subject = "alice"
	forgedPayload, _ := json.Marshal(forged)
	otherKey := rsaKey(t)

	cases := map[string]struct{ tok, why string }{
		"expired":      {is.token(t, "k1", with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-2 * time.Minute)) })), "expired"},
		"not yet":      {is.token(t, "k1", with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(time.Now().Add(5 * time.Minute)) })), "not valid yet"},
		"no exp":       {is.token(t, "k1", with(func(c *jwt.Claims) { c.Expiry = nil })), `"exp"`},
		"wrong iss":    {is.token(t, "k1", with(func(c *jwt.Claims) { c.Issuer = "https://evil.example" })), "wrong issuer"},
		"wrong aud":    {is.token(t, "k1", with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"https://other.example"} })), "wrong audience"},
		"alg none":     {unsigned(t, base), "accepted algorithm"},
		"HS256 pubkey": {hmacToken(t, pubDER, "k1", base), "accepted algorithm"},
		"unknown kid":  {sign(t, jose.RS256, otherKey, "k9", base), "unknown key"},
		"other key":    {sign(t, jose.ES256, mustEC(t), "k1", base), "does not verify"},
		"tampered":     {parts[0] + "." + base64.RawURLEncoding.EncodeToString(forgedPayload) + "." + parts[2], "does not verify"},
		"too large":    {is.token(t, "k1", map[string]any{"sub": strings.Repeat("x", 9000), "aud": audience, "iss": is.URL()}), "larger than"},
	}
	hits := is.jwksHits.Load()
	for name, c := range cases {
		p, err := j.Authenticate(bearer(c.tok))
		if err == nil {
			t.Errorf("%s: accepted as %q", name, p)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want it to say %q", name, err, c.why)
		}
		if strings.Contains(err.Error(), c.tok[:20]) {
			t.Errorf("%s: the error echoes the token", name)
		}
	}
	// The unknown kid made one refresh at most (MinRefresh is an hour),
	// however many tokens named it.
	for range 5 {
		j.Authenticate(bearer(sign(t, jose.RS256, otherKey, "k9", base)))
	}
	if got := is.jwksHits.Load() - hits; got > 1 {
		t.Errorf("unknown kids made %d key set fetches; want at most 1", got)
	}
}

func TestJWTLeavesOtherTokensAlone(t *testing.T) {
	is := newIssuer(t)
	j := newJWT(t, is, nil)
	for _, h := range []string{"", "Bearer static-token", "Basic dXNlcjpwdw==", "Bearer a.b", "Bearer a.b.c.d"} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		if p, err := j.Authenticate(r); p != "" || err != nil {
			t.Errorf("%q: %q, %v; want no opinion", h, p, err)
		}
	}
	if is.jwksHits.Load() != 0 {
		t.Error("non-JWT credentials fetched keys")
	}
}

func TestJWTOptionsChecked(t *testing.T) {
	for _, o := range []authn.JWTOptions{
		{Issuer: "https://i.example"},
		{Audience: "a"},
		{Issuer: "https://i.example", Audience: "a", Algorithms: []jose.SignatureAlgorithm{jose.HS256}},
		{Issuer: "https://i.example", Audience: "a", JWKSRefresh: 2 * time.Second},                          // below the default MinRefresh, 30 s
		{Issuer: "https://i.example", Audience: "a", JWKSRefresh: time.Minute, MinRefresh: 2 * time.Minute}, // below its own
	} {
		if _, err := authn.NewJWT(o); err == nil {
			t.Errorf("NewJWT(%+v) accepted", o)
		}
	}
}

func TestJWTIssuerDown(t *testing.T) {
	j, err := authn.NewJWT(authn.JWTOptions{Issuer: "http://" + testkit.FreeAddr(t), Audience: audience}) // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := j.Verify(ctx, "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln"); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("issuer down: %v", err)
	}
}

// unsigned is a token with "alg": "none".
func unsigned(t *testing.T, c jwt.Claims) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`))
	p, _ := json.Marshal(c)
	return h + "." + base64.RawURLEncoding.EncodeToString(p) + "."
}

// hmacToken signs with HS256 using secret (the issuer's public key, in the
// algorithm confusion attack).
func hmacToken(t *testing.T, secret []byte, kid string, c jwt.Claims) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"` + kid + `"}`))
	p, _ := json.Marshal(c)
	in := h + "." + base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func mustEC(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestJWTUnknownKidAfterOneRefresh: a token naming a key id the issuer
// does not publish is refused after exactly one refresh of the key set;
// more such tokens within MinRefresh cause no more fetches.
func TestJWTUnknownKidAfterOneRefresh(t *testing.T) {
	is := newIssuer(t)
	now := time.Now()
	j := newJWT(t, is, func(o *authn.JWTOptions) { o.MinRefresh = time.Minute; o.Now = func() time.Time { return now } })
	if _, err := j.Authenticate(bearer(is.token(t, "k1", is.claims("alice", audience)))); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	stranger := rsaKey(t)
	for i := range 5 {
		_, err := j.Authenticate(bearer(sign(t, jose.RS256, stranger, "k9", is.claims("mallory", audience))))
		if err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Fatalf("token %d under an unknown kid: %v", i, err)
		}
	}
	if got := is.jwksHits.Load(); got != 2 {
		t.Errorf("key set fetched %d times; want 2 (the first use, one refresh)", got)
	}
}

// TestJWTRetiredKeyStopsAfterJWKSRefresh: a key the issuer removes from
// its key set stops verifying once JWKSRefresh has passed and the set has
// been fetched again, without any token naming an unknown key id.
func TestJWTRetiredKeyStopsAfterJWKSRefresh(t *testing.T) {
	is := newIssuer(t)
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	j := newJWT(t, is, func(o *authn.JWTOptions) {
		o.JWKSRefresh, o.MinRefresh, o.Now = 2*time.Minute, time.Minute, now
	})
	old := is.token(t, "k1", is.claims("alice", audience))
	if _, err := j.Authenticate(bearer(old)); err != nil {
		t.Fatal(err)
	}
	is.rotate(t, "k2")
	is.retire("k1")
	clock.Add(int64(time.Minute))
	if _, err := j.Authenticate(bearer(old)); err != nil {
		t.Fatalf("before JWKSRefresh has passed: %v; want the cached key to verify", err)
	}
	if n := is.jwksHits.Load(); n != 1 {
		t.Fatalf("%d key set fetches before JWKSRefresh; want 1", n)
	}
	clock.Add(int64(2 * time.Minute))
	// The first token after the interval starts the refresh (and may be
	// checked against the keys held until it ends); once it has ended the
	// retired key is refused.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := j.Authenticate(bearer(old))
		if err != nil {
			if !strings.Contains(err.Error(), "unknown key") {
				t.Fatalf("retired key: %v; want it refused as unknown", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retired key still verifies")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p, err := j.Authenticate(bearer(is.token(t, "k2", is.claims("bob", audience)))); err != nil || p != "bob" {
		t.Fatalf("new key: %q %v", p, err)
	}
	if n := is.jwksHits.Load(); n != 2 {
		t.Errorf("%d key set fetches; want 2 (the first, one scheduled refresh)", n)
	}
}
