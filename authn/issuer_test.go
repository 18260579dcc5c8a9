package authn_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is a test OpenID Connect issuer: a discovery document and a key
// set over HTTP, keys that can be rotated, and tokens it mints.
type issuer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      map[string]crypto.Signer // kid → key, the published set
	jwksHits  atomic.Int32
	discovery atomic.Int32
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is := &issuer{keys: map[string]crypto.Signer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.discovery.Add(1)
		json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		var set jose.JSONWebKeySet
		for kid, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	is.rotate(t, "k1")
	return is
}

// URL is the issuer URL ("iss").
func (is *issuer) URL() string { return is.srv.URL }

// rotate publishes a new EC key under kid (keeping the others).
func (is *issuer) rotate(t testing.TB, kid string) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.keys[kid] = k
	is.mu.Unlock()
	return k
}

// retire removes kid from the published set.
func (is *issuer) retire(kid string) {
	is.mu.Lock()
	delete(is.keys, kid)
	is.mu.Unlock()
}

func (is *issuer) key(kid string) crypto.Signer {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.keys[kid]
}

// claims are the usual claims of a token for sub and aud, valid now.
func (is *issuer) claims(sub, aud string) jwt.Claims {
	now := time.Now()
	return jwt.Claims{Issuer: is.URL(), Subject: sub, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))}
}

// token signs claims with the key kid holds (ES256).
func (is *issuer) token(t *testing.T, kid string, claims any) string {
	t.Helper()
	return sign(t, jose.ES256, is.key(kid), kid, claims)
}

// sign makes a compact JWT.
func sign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rsaKey makes a 2048-bit RSA key.
func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
