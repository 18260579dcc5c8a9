package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestStoredTokenStaysWithItsAgent: the token of parley auth login is
// kept for the agent at the URL of its card's first interface; a card
// that lists that agent first and another host after it (any card a
// command is pointed at: a URL, a file, a catalog entry) must not get the
// token sent to the other host. The interfaces elsewhere are left out,
// said on stderr; the signed-in host still gets the token.
func TestStoredTokenStaysWithItsAgent(t *testing.T) {
	t.Parallel()
	const secret = "stored-access-token"
	var mu sync.Mutex
	seen := map[string][]string{} // server → Authorization headers it got
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = append(seen[name], r.Header.Get("Authorization"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"task not found"}}`)
		}
	}
	good := httptest.NewServer(record("good"))
	defer good.Close()
	other := httptest.NewUnstartedServer(nil)
	card := `{"name":"two hosts","description":"d","version":"1","capabilities":{},"defaultInputModes":["text/plain"],
		"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
		"supportedInterfaces":[{"url":"` + good.URL + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
		{"url":"http://` + other.Listener.Addr().String() + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`
	other.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, card)
			return
		}
		record("other")(w, r)
	})
	other.Start()
	defer other.Close()

	home := t.TempDir()
	sum := sha256.Sum256([]byte(good.URL))
	file := filepath.Join(home, ".config", "a2a-cli", "tokens", hex.EncodeToString(sum[:12])+".json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	login := `{"agent":"` + good.URL + `","scheme":"s","flow":"device","tokenUrl":"http://127.0.0.1:1/token","clientId":"c",
		"token":{"access_token":"` + secret + `","token_type":"Bearer"}}`
	if err := os.WriteFile(file, []byte(login), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	// Only the other host's binding: the token must not go there.
	_, errs, code := parleyWithEnv(t, env, "task", "get", "-a", other.URL, "t1", "--binding", "rest")
	if code == 0 {
		t.Errorf("task get over the other host's binding succeeded:\n%s", errs)
	}
	contains(t, "stderr", errs, "is not sent to http://"+other.Listener.Addr().String())
	// Any binding: the call goes to the signed-in host, with the token.
	parleyWithEnv(t, env, "task", "get", "-a", other.URL, "t1")
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen["other"] {
		if strings.Contains(h, secret) {
			t.Errorf("the other host got the stored token: %q", h)
		}
	}
	if len(seen["good"]) == 0 || seen["good"][0] != "Bearer "+secret {
		t.Errorf("the signed-in host got %q, want its token", seen["good"])
	}
}
