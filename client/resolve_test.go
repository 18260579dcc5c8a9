package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/client"
)

// countingCard counts card requests and 304 answers in front of h.
type countingCard struct {
	h         http.Handler
	gets, nms atomic.Int64
	inm       atomic.Value // last If-None-Match
}

func (c *countingCard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/.well-known/agent-card.json" {
		c.h.ServeHTTP(w, r)
		return
	}
	c.gets.Add(1)
	c.inm.Store(r.Header.Get("If-None-Match"))
	sw := &statusWriter{ResponseWriter: w, status: 200}
	c.h.ServeHTTP(sw, r)
	if sw.status == http.StatusNotModified {
		c.nms.Add(1)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

// TestResolveCache: a fresh card is not fetched again; an expired one is
// revalidated and reused on 304.
func TestResolveCache(t *testing.T) {
	t.Parallel()
	cc := &countingCard{}
	e := start(t, config{wrap: func(h http.Handler) http.Handler { cc.h = h; return cc }})
	ctx := testCtx(t)
	var mu sync.Mutex
	now := time.Now()
	cache := &client.CardCache{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
	opts := &client.ResolveOptions{Cache: cache}

	card, err := client.Resolve(ctx, e.url, opts)
	if err != nil || !proto.Equal(card, e.card) {
		t.Fatalf("Resolve = %v, %v; want the served card", card, err)
	}
	card.Name = "changed by the caller" // must not reach the cache
	for _, u := range []string{e.url, e.url + "/", e.url + "/.well-known/agent-card.json"} {
		card, err = client.Resolve(ctx, u, opts)
		if err != nil || card.Name != e.card.Name {
			t.Fatalf("Resolve(%s) = %v, %v", u, card, err)
		}
	}
	if n := cc.gets.Load(); n != 1 {
		t.Fatalf("%d card requests within max-age, want 1", n)
	}

	mu.Lock()
	now = now.Add(301 * time.Second) // Parley's max-age is 300
	mu.Unlock()
	card, err = client.Resolve(ctx, e.url, opts)
	if err != nil || !proto.Equal(card, e.card) {
		t.Fatalf("Resolve after expiry = %v, %v", card, err)
	}
	if g, n := cc.gets.Load(), cc.nms.Load(); g != 2 || n != 1 || cc.inm.Load() == "" {
		t.Fatalf("after expiry: %d requests, %d answered 304 (If-None-Match %q); want 2 and 1", g, n, cc.inm.Load())
	}
	if _, err := client.Resolve(ctx, e.url, opts); err != nil || cc.gets.Load() != 2 {
		t.Fatalf("Resolve after revalidation: %v, %d requests; want the refreshed entry used", err, cc.gets.Load())
	}
	// Without a cache every call fetches.
	client.Resolve(ctx, e.url, nil)
	if cc.gets.Load() != 3 {
		t.Fatalf("Resolve without a cache did not fetch")
	}
}

// cardCase is an answer to a card request, and what Resolve must say of it.
type cardCase struct {
	name        string
	ctype, body string
	status      int
	legacy      bool
	violations  string
	message     string
}

// TestResolveErrors: what Resolve says about things that are not v1.0
// cards.
func TestResolveErrors(t *testing.T) {
	t.Parallel()
	v1, _ := json.Marshal(map[string]any{
		"name": "x", "description": "d", "version": "1", "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills":              []any{map[string]any{"id": "s", "name": "s", "description": "s", "tags": []string{"t"}}},
		"supportedInterfaces": []any{map[string]any{"url": "http://127.0.0.1:1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
	})
	cases := []cardCase{
		// v0.3 cards are read, their interfaces at protocol version 0.3;
		// one that cannot be (no url) is a legacy card error.
		{name: "valid v0.3 card", body: `{"name":"x","url":"http://h/a2a","protocolVersion":"0.3.0","preferredTransport":"JSONRPC","skills":[]}`},
		{name: "valid v0.3 url only", body: `{"name":"x","url":"http://h/a2a"}`},
		{name: "v0.3 card without url", body: `{"name":"old","protocolVersion":"0.3.0"}`, legacy: true, message: "0.3.0"},
		// One document for both generations: the v0.3 members beside
		// supportedInterfaces make no legacy card.
		{name: "valid with v0.3 members", body: strings.Replace(string(v1), `{`, `{"protocolVersion":"0.3.0","url":"http://h/a2a",`, 1)},
		{name: "HTML", ctype: "text/html", body: "<html>hi</html>", message: "text/html"},
		{name: "not an object", body: `[1,2]`, message: "not a JSON object"},
		{name: "missing members", body: `{"name":"x","supportedInterfaces":[]}`, violations: "description"},
		{name: "wrong types", body: `{"name":5}`, message: "not an agent card"},
		{name: "404", status: 404, body: "no", message: "404"},
		{name: "valid", body: string(v1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, tc)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		_, err := client.Resolve(testCtx(t), closedURL(t), nil)
		var te *client.TransportError
		if !errors.As(err, &te) || te.Phase != client.PhaseConnect {
			t.Fatalf("Resolve = %v, want a connect TransportError", err)
		}
	})
	t.Run("CardURL", func(t *testing.T) {
		t.Parallel()
		checkCardURL(t)
	})
}

// checkResolve serves tc's answer as a card and checks what Resolve makes
// of it.
func checkResolve(t *testing.T, tc cardCase) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("A2A-Version") != "1.0" {
			t.Errorf("card request without A2A-Version: 1.0")
		}
		ct := tc.ctype
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if tc.status != 0 {
			w.WriteHeader(tc.status)
		}
		io.WriteString(w, tc.body)
	}))
	defer hs.Close()
	card, err := client.Resolve(testCtx(t), hs.URL+"/agent.json", nil)
	if strings.HasPrefix(tc.name, "valid") {
		if err != nil || card.Name != "x" {
			t.Fatalf("Resolve = %v, %v", card, err)
		}
		return
	}
	var ce *client.CardError
	if !errors.As(err, &ce) {
		t.Fatalf("Resolve = %v (%T), want a *CardError", err, err)
	}
	if errors.Is(err, client.ErrLegacyCard) != tc.legacy {
		t.Errorf("errors.Is(%v, ErrLegacyCard) = %v, want %v", err, !tc.legacy, tc.legacy)
	}
	if tc.violations != "" && !strings.Contains(err.Error(), tc.violations) {
		t.Errorf("error %q does not name %q", err, tc.violations)
	}
	if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
		t.Errorf("error %q does not mention %q", err, tc.message)
	}
}

// checkCardURL: where CardURL looks for the card of an agent URL.
func checkCardURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":                        "https://a.example/.well-known/agent-card.json",
		"https://a.example/":                       "https://a.example/.well-known/agent-card.json",
		"https://a.example/agents/x":               "https://a.example/agents/x/.well-known/agent-card.json",
		"https://a.example/cards/x.json":           "https://a.example/cards/x.json",
		"https://a.example/.well-known/agent.json": "https://a.example/.well-known/agent.json",
	} {
		if got, err := client.CardURL(in); err != nil || got != want {
			t.Errorf("CardURL(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := client.CardURL("ftp://x"); err == nil {
		t.Errorf("CardURL(ftp://x) succeeded")
	}
}
