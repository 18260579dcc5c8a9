package a2ahttp_test

import (
	"errors"
	"net/http/httptest"
	"sync"
	"testing"

	"parley.dev/parley/a2ahttp"
)

// TestTokenSetReplace: a replaced set answers with the new tokens only,
// and replacing it while requests are checked is safe (run with -race).
func TestTokenSetReplace(t *testing.T) {
	src := map[string]string{"tok-a": "alice"}
	s := a2ahttp.NewTokenSet(src)
	src["tok-x"] = "mallory" // the set holds a copy
	ask := func(tok string) (string, error) {
		r := httptest.NewRequest("GET", "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return s.Authenticate(r)
	}
	if p, err := ask("tok-a"); p != "alice" || err != nil {
		t.Fatalf("tok-a: %q %v", p, err)
	}
	if _, err := ask("tok-x"); !errors.Is(err, a2ahttp.ErrTokenRefused) {
		t.Fatalf("a token added to the caller's map after NewTokenSet: %v, want refused", err)
	}
	if p, err := ask(""); p != "" || err != nil {
		t.Fatalf("no token: %q %v, want nobody", p, err)
	}

	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				p, err := ask("tok-a")
				if err == nil && p != "alice" {
					t.Errorf("tok-a named %q", p)
				}
			}
		}()
	}
	for j := 0; j < 200; j++ {
		s.Replace(map[string]string{"tok-a": "alice", "tok-b": "bob"})
		s.Replace(map[string]string{"tok-b": "bob"})
	}
	wg.Wait()
	if _, err := ask("tok-a"); !errors.Is(err, a2ahttp.ErrTokenRefused) {
		t.Errorf("tok-a after it was removed: %v, want refused", err)
	}
	if p, err := ask("tok-b"); p != "bob" || err != nil || s.Len() != 1 {
		t.Errorf("tok-b: %q %v (len %d)", p, err, s.Len())
	}
}
