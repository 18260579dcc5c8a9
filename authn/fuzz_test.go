package authn_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley.dev/parley/authn"
)

// FuzzJWT feeds arbitrary Authorization values to the JWT authenticator
// (keys from a test issuer): it must never panic, never accept a token the
// issuer did not sign, and never echo the token in its error.
func FuzzJWT(f *testing.F) {
	is := newIssuer(f)
	f.Add("Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhIn0.c2ln")
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.")
	f.Add("bearer a.b.c")
	f.Add("Bearer ...")
	f.Add("Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA")
	j, err := authn.NewJWT(authn.JWTOptions{Issuer: is.URL(), Audience: audience})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r, _ := http.NewRequestWithContext(context.Background(), "GET", "/", nil)
		r.Header["Authorization"] = []string{h}
		p, err := j.Authenticate(r)
		if p != "" {
			t.Fatalf("%q accepted as %q", h, p)
		}
		if tok, ok := authn.BearerToken(h); ok && err != nil && len(tok) > 8 && strings.Contains(err.Error(), tok) {
			t.Fatalf("the error echoes the token: %v", err)
		}
	})
}

// FuzzBearerToken: the Authorization parser never panics and returns a
// trimmed, non-empty token only for the Bearer scheme.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer x", "bearer  y ", "Basic z", "Bearer", "Bearer ", "", "Bearer a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := authn.BearerToken(h)
		if ok && (tok == "" || tok != strings.TrimSpace(tok) || !strings.EqualFold(h[:6], "bearer")) {
			t.Fatalf("BearerToken(%q) = %q", h, tok)
		}
		authn.LooksLikeJWT(tok)
	})
}

// FuzzAPIKeys: arbitrary key files and X-API-Key values never panic, and
// a key is accepted only when it is one the file names.
func FuzzAPIKeys(f *testing.F) {
	key, line, _ := authn.NewAPIKey("alice")
	f.Add(line+"\n", key)
	f.Add("# c\nbob sha256:"+strings.Repeat("0", 64)+"\n", "x")
	f.Add("alice sha256:zz\n", key)
	f.Add("a b c\n", "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file, presented string) {
		path := filepath.Join(dir, "keys")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		keys, err := authn.LoadAPIKeys(path)
		if err != nil {
			return
		}
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header[authn.APIKeyHeader] = []string{presented}
		p, err := keys.Authenticate(r)
		if p != "" && (err != nil || (presented != key && strings.TrimSpace(presented) != key)) {
			t.Fatalf("%q accepted as %q", presented, p)
		}
	})
}
