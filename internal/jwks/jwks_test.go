package jwks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/internal/jwks"
)

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCacheRefreshAndOutage: an unknown kid refreshes once per
// MinRefresh; a failing refresh keeps the keys already fetched.
func TestCacheRefreshAndOutage(t *testing.T) {
	k1, k2 := ecKey(t), ecKey(t)
	var hits atomic.Int32
	var down atomic.Bool
	set := []jose.JSONWebKey{{Key: &k1.PublicKey, KeyID: "k1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if down.Load() {
			http.Error(w, "down", 503)
			return
		}
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: set})
	}))
	defer srv.Close()
	now := time.Unix(1000, 0)
	c := &jwks.Cache{URL: srv.URL, MinRefresh: time.Minute, Now: func() time.Time { return now }}
	ctx := context.Background()
	if ks, err := c.Keys(ctx, "k1"); err != nil || len(ks) != 1 {
		t.Fatalf("k1: %v %v", ks, err)
	}
	set = append(set, jose.JSONWebKey{Key: &k2.PublicKey, KeyID: "k2"})
	if _, err := c.Keys(ctx, "k2"); !errors.Is(err, jwks.ErrUnknownKey) {
		t.Fatalf("k2 within MinRefresh: %v; want ErrUnknownKey without a fetch", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("%d fetches; want 1", hits.Load())
	}
	now = now.Add(2 * time.Minute)
	if _, err := c.Keys(ctx, "k2"); err != nil {
		t.Fatalf("k2 after MinRefresh: %v", err)
	}
	down.Store(true)
	now = now.Add(2 * time.Minute)
	if _, err := c.Keys(ctx, "k3"); !errors.Is(err, jwks.ErrUnknownKey) {
		t.Fatalf("k3 while the issuer is down: %v", err)
	}
	if _, err := c.Keys(ctx, "k1"); err != nil {
		t.Fatalf("k1 while the issuer is down: %v; want the cached key", err)
	}
}

func TestDiscoveryAndRefusedSets(t *testing.T) {
	k := ecKey(t)
	var srv *httptest.Server
	docIssuer := ""
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]string{"issuer": docIssuer, "jwks_uri": srv.URL + "/keys"})
		case "/keys":
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k"}}})
		case "/private":
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k, KeyID: "k"}}})
		case "/hmac":
			w.Write([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"k"}]}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	docIssuer = srv.URL
	if u, err := jwks.Discover(ctx, srv.Client(), srv.URL); err != nil || u != srv.URL+"/keys" {
		t.Fatalf("Discover: %q %v", u, err)
	}
	docIssuer = "https://someone-else.example"
	if _, err := jwks.Discover(ctx, srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("a discovery document naming another issuer: %v", err)
	}
	for _, p := range []string{"/private", "/hmac"} {
		if _, err := jwks.Fetch(ctx, srv.Client(), srv.URL+p); err == nil {
			t.Errorf("key set %s accepted", p)
		}
	}
}
