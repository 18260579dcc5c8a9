package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"parley.dev/parley/a2a"
)

// TestStoredTokenRefreshRace: two commands find the stored token expired
// and refresh it at once; the authorization server rotates refresh
// tokens, so the second refresh is refused (invalid_grant) after the first
// command stored its new token. The second command uses that token
// instead of failing the sign-in.
func TestStoredTokenRefreshRace(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const agent = "http://agent.example/a2a"
	card := &a2a.AgentCard{SupportedInterfaces: []*a2a.AgentInterface{{Url: agent}}}
	expired := &storedLogin{Agent: agent, Flow: flowDevice, ClientID: "c",
		Token: &oauth2.Token{AccessToken: "old", RefreshToken: "r1", Expiry: time.Now().Add(-time.Hour)}}
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The other command won: it stored its new token, and r1 is spent.
		won := *expired
		won.Token = &oauth2.Token{AccessToken: "renewed-by-the-other", RefreshToken: "r2", Expiry: time.Now().Add(time.Hour)}
		if _, err := saveLogin(&won); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"refresh token already used"}`)
	}))
	defer as.Close()
	expired.TokenURL = as.URL
	if _, err := saveLogin(expired); err != nil {
		t.Fatal(err)
	}
	c := &common{}
	got, err := c.useStoredToken(context.Background(), card)
	if err != nil || got != agent || c.token != "renewed-by-the-other" {
		t.Fatalf("useStoredToken = %q, %v, token %q; want the token the other command stored", got, err, c.token)
	}
	// No other command renewed it: the refusal stands.
	expired.Token.RefreshToken = "r2"
	as.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant"}`)
	})
	if _, err := saveLogin(expired); err != nil {
		t.Fatal(err)
	}
	c = &common{}
	if _, err := c.useStoredToken(context.Background(), card); err == nil {
		t.Fatalf("a refused refresh with nothing renewed: token %q, want an error", c.token)
	}
}

// FuzzLoginFile: a token file is untrusted input: reading it never
// panics, a file read has a token, and the client's use of it (its
// validity, its header) and config show's (its expiry) do not panic
// either.
func FuzzLoginFile(f *testing.F) {
	f.Add([]byte(`{"agent":"http://a","flow":"device","tokenUrl":"http://a/t","clientId":"c","token":{"access_token":"x","token_type":"Bearer","expiry":"2026-12-07T00:00:00Z"}}`))
	f.Add([]byte(`{"token":null}`))
	f.Add([]byte(`{"token":{}}`))
	f.Add([]byte(`{"token":{"expiry":"not a time"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseLogin(b)
		if err != nil {
			return
		}
		if st.Token == nil {
			t.Fatal("a login without a token")
		}
		_ = st.Token.Valid()
		_ = st.Token.Type()
		_ = st.Token.Expiry.UTC().Format(time.RFC3339)
		_ = st.config()
		_ = st.clientCredentials()
	})
}
