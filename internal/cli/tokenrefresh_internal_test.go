package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// TestStoredLoginRefreshedMidSession: a command's client outlives the
// access token of `parley auth login`. The agent accepts only the latest
// token the authorization server issued; the client refreshes the stored
// login when its token expires during the session, stores the new one
// (0600), and its next call is accepted. A token another command stored
// meanwhile is taken from the file without a refresh.
func TestStoredLoginRefreshedMidSession(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	set := a2ahttp.NewTokenSet(map[string]string{"a1": "alice"})
	s := testkit.StartServer(t, &testkit.Options{
		Quiet:  true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.RequireAuth = true },
		HTTP:   func(o *a2ahttp.Options) { o.Authenticators = append(o.Authenticators, set) },
	})
	// The access tokens live a little over oauth2's 10 s margin: each is
	// valid for its first call and expired a second later.
	const life = 11 * time.Second
	var issued atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := issued.Add(1) + 1
		tok := "a" + string(rune('0'+n))
		set.Replace(map[string]string{tok: "alice"}) // the previous token stops working
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "refresh_token": "r", "expires_in": int(life.Seconds())})
	}))
	defer as.Close()

	agent := agentKey(s.Card)
	if _, err := saveLogin(&storedLogin{Agent: agent, Flow: flowDevice, ClientID: "c", TokenURL: as.URL,
		Token: &oauth2.Token{AccessToken: "a1", RefreshToken: "r", Expiry: time.Now().Add(life)}}); err != nil {
		t.Fatal(err)
	}
	c := &common{warn: func(msg string) { t.Errorf("warning: %s", msg) }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := c.connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	get := func(step string) {
		t.Helper()
		if _, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	get("the first call")
	if n := issued.Load(); n != 0 {
		t.Fatalf("%d refreshes before the token expired, want none", n)
	}
	time.Sleep(1100 * time.Millisecond)
	get("a call after the token expired")
	if n := issued.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	path, _ := loginPath(agent)
	st, _, err := loadLogin(agent)
	if err != nil || st == nil || st.Token.AccessToken != "a2" {
		t.Fatalf("stored login after the refresh: %+v, %v; want token a2", st, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", fi, err)
	}

	// Another command refreshed the login: this one takes its token.
	time.Sleep(1100 * time.Millisecond)
	set.Replace(map[string]string{"other": "alice"})
	st.Token = &oauth2.Token{AccessToken: "other", RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}
	if _, err := saveLogin(st); err != nil {
		t.Fatal(err)
	}
	get("a call after another command renewed the token")
	if n := issued.Load(); n != 1 {
		t.Fatalf("%d refreshes, want the other command's token taken from the file", n)
	}
}
