package jwks_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/internal/jwks"
)

// patience bounds every wait of these tests on something that should
// happen at once; it is generous so that a loaded machine does not make
// them fail. No test asserts that anything is fast, only what happens
// before what.
const patience = 20 * time.Second

// keyServer serves a JWKS over HTTP whose keys, status, Cache-Control and
// stalling the test changes while it runs.
type keyServer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      map[string]*ecdsa.PrivateKey
	status    int           // 0 or 200: serve the set; else this error status
	header    http.Header   // added to each answer
	stall     chan struct{} // when set, requests wait until it is closed
	entered   chan struct{} // one value per request that starts stalling
	quit      chan struct{} // closed when the test ends: nothing stalls any more
	hits      atomic.Int32  // requests received
	cancelled atomic.Int32  // requests whose context ended while stalled
}

func newKeyServer(t *testing.T, kids ...string) *keyServer {
	t.Helper()
	ks := &keyServer{keys: map[string]*ecdsa.PrivateKey{}, header: http.Header{},
		entered: make(chan struct{}, 1000), quit: make(chan struct{})}
	for _, kid := range kids {
		ks.keys[kid] = ecKey(t)
	}
	ks.srv = httptest.NewServer(http.HandlerFunc(ks.serve))
	t.Cleanup(ks.srv.Close) // runs after quit is closed (cleanups run last first)
	t.Cleanup(func() { close(ks.quit) })
	return ks
}

func (ks *keyServer) serve(w http.ResponseWriter, r *http.Request) {
	ks.hits.Add(1)
	ks.mu.Lock()
	stall := ks.stall
	ks.mu.Unlock()
	if stall != nil {
		ks.entered <- struct{}{}
		select {
		case <-stall:
		case <-ks.quit:
			return
		case <-r.Context().Done():
			ks.cancelled.Add(1)
			return
		}
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.status != 0 && ks.status != http.StatusOK {
		http.Error(w, "unavailable", ks.status)
		return
	}
	var set jose.JSONWebKeySet
	for kid, k := range ks.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Use: "sig"})
	}
	for name, vs := range ks.header {
		w.Header()[name] = vs
	}
	json.NewEncoder(w).Encode(set)
}

// stallNext makes the following requests wait; the returned function
// releases them.
func (ks *keyServer) stallNext() (release func()) {
	ch := make(chan struct{})
	ks.mu.Lock()
	ks.stall = ch
	ks.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ks.mu.Lock()
			ks.stall = nil
			ks.mu.Unlock()
			close(ch)
		})
	}
}

func (ks *keyServer) set(f func(ks *keyServer)) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	f(ks)
}

// waitEntered waits until a request has started stalling.
func (ks *keyServer) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-ks.entered:
	case <-time.After(patience):
		t.Fatal("no request reached the key server")
	}
}

// clock is a test clock that the cache reads while the test moves it.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration)     { c.ns.Add(int64(d)) }
func bounded() (context.Context, func()) { return context.WithTimeout(context.Background(), patience) }

type result struct {
	keys []jose.JSONWebKey
	err  error
}

// keysAsync calls Keys in a goroutine.
func keysAsync(c *jwks.Cache, ctx context.Context, kid string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		ks, err := c.Keys(ctx, kid)
		ch <- result{ks, err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(patience):
		t.Fatal("Keys did not return")
		return result{}
	}
}

// waitFor polls cond until it holds (or patience runs out).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKnownKeysVerifyWhileFetchStalls: while a fetch for an unknown kid
// hangs at the key server, keys already held answer at once, and the
// caller who wanted the new key gets it when the server answers.
func TestKnownKeysVerifyWhileFetchStalls(t *testing.T) {
	ks := newKeyServer(t, "k1")
	clk := newClock()
	c := &jwks.Cache{URL: ks.srv.URL, MinRefresh: 10 * time.Second, FetchTimeout: time.Hour, Now: clk.Now}
	ctx, cancel := bounded()
	defer cancel()
	if _, err := c.Keys(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	clk.add(11 * time.Second)
	ks.set(func(ks *keyServer) { ks.keys["k2"] = ecKey(t) })
	release := ks.stallNext()
	defer release()
	pending := keysAsync(c, context.Background(), "k2")
	ks.waitEntered(t)

	for i := range 200 {
		kid := []string{"k1", ""}[i%2]
		if got, err := c.Keys(ctx, kid); err != nil || len(got) != 1 || got[0].KeyID != "k1" {
			t.Fatalf("known key %q while a fetch stalls: %v %v", kid, got, err)
		}
	}
	select {
	case r := <-pending:
		t.Fatalf("the caller for k2 returned while its fetch was still stalled: %v", r.err)
	default:
	}
	if n := jwks.Waiters(c); n != 1 {
		t.Errorf("%d callers wait for the fetch; want 1", n)
	}
	release()
	if r := await(t, pending); r.err != nil || len(r.keys) != 1 || r.keys[0].KeyID != "k2" {
		t.Fatalf("k2 after the stall: %v %v", r.keys, r.err)
	}
	if n := ks.hits.Load(); n != 2 {
		t.Errorf("%d fetches; want 2", n)
	}
}

// TestStalledFetchTimesOut: a fetch has its own deadline, FetchTimeout:
// the request is abandoned, the caller (whose context has no deadline) is
// answered, and the keys held keep verifying.
func TestStalledFetchTimesOut(t *testing.T) {
	ks := newKeyServer(t, "k1")
	clk := newClock()
	c := &jwks.Cache{URL: ks.srv.URL, MinRefresh: 10 * time.Second, FetchTimeout: 100 * time.Millisecond, Now: clk.Now}
	ctx, cancel := bounded()
	defer cancel()
	if _, err := c.Keys(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	clk.add(11 * time.Second)
	release := ks.stallNext()
	defer release()
	r := await(t, keysAsync(c, context.Background(), "k2"))
	if !errors.Is(r.err, jwks.ErrUnknownKey) {
		t.Fatalf("unknown kid whose fetch timed out: %v; want ErrUnknownKey (the old set is kept)", r.err)
	}
	waitFor(t, "the key server to see its request cancelled", func() bool { return ks.cancelled.Load() == 1 })
	if _, err := c.Keys(ctx, "k1"); err != nil {
		t.Fatalf("k1 after a timed-out fetch: %v", err)
	}

	// With nothing fetched yet, a timed-out fetch leaves the key set
	// unavailable.
	cold := &jwks.Cache{URL: ks.srv.URL, FetchTimeout: 100 * time.Millisecond, Now: clk.Now}
	r = await(t, keysAsync(cold, context.Background(), "k1"))
	if r.err == nil || errors.Is(r.err, jwks.ErrUnknownKey) || !strings.Contains(r.err.Error(), "key set unavailable") {
		t.Fatalf("first fetch timed out: %v; want key set unavailable", r.err)
	}
}

// TestCancelledCallerDoesNotPoisonOthers: the caller that started a fetch
// goes away mid-fetch; it is answered with its context's error at once,
// the fetch goes on, and the next caller is served by that same fetch.
func TestCancelledCallerDoesNotPoisonOthers(t *testing.T) {
	ks := newKeyServer(t, "k1")
	clk := newClock()
	c := &jwks.Cache{URL: ks.srv.URL, FetchTimeout: time.Hour, Now: clk.Now}
	release := ks.stallNext()
	defer release()

	first, cancelFirst := context.WithCancel(context.Background())
	gone := keysAsync(c, first, "k1")
	ks.waitEntered(t)
	cancelFirst()
	if r := await(t, gone); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled caller: %v; want context.Canceled", r.err)
	}

	// The fetch is still under way: a new caller waits for it rather than
	// being told the key set is unavailable.
	ctx, cancel := bounded()
	defer cancel()
	next := keysAsync(c, ctx, "k1")
	waitFor(t, "the second caller to wait for the fetch", func() bool { return jwks.Waiters(c) == 1 })
	release()
	if r := await(t, next); r.err != nil || len(r.keys) != 1 {
		t.Fatalf("caller after the cancelled one: %v %v", r.keys, r.err)
	}
	if _, err := c.Keys(ctx, "k1"); err != nil {
		t.Fatalf("k1 afterwards: %v", err)
	}
	if n, x := ks.hits.Load(), ks.cancelled.Load(); n != 1 || x != 0 {
		t.Errorf("%d fetches, %d cancelled; want 1 fetch, not cancelled", n, x)
	}
}

// TestUnreachableKeepsLastGoodSetThenExpires: when the key server fails,
// the last good set keeps verifying for MaxStale past the time it was due
// for refresh; retries are at most one per MinRefresh; past MaxStale the
// key set is unavailable until a fetch succeeds.
func TestUnreachableKeepsLastGoodSetThenExpires(t *testing.T) {
	ks := newKeyServer(t, "k1")
	clk := newClock()
	c := &jwks.Cache{URL: ks.srv.URL, RefreshInterval: time.Minute, MinRefresh: 10 * time.Second,
		MaxStale: 10 * time.Minute, Now: clk.Now}
	ctx, cancel := bounded()
	defer cancel()
	check := func(step string, wantHits int32) {
		t.Helper()
		if _, err := c.Keys(ctx, "k1"); err != nil {
			t.Fatalf("%s: %v; want the last good key", step, err)
		}
		jwks.Idle(c)
		if n := ks.hits.Load(); n != wantHits {
			t.Fatalf("%s: %d fetches; want %d", step, n, wantHits)
		}
	}
	check("first fetch", 1)
	ks.set(func(ks *keyServer) { ks.status = http.StatusServiceUnavailable })
	clk.add(time.Minute + time.Second)
	check("due: refreshed in the background, which fails", 2)
	clk.add(5 * time.Second)
	check("within MinRefresh of the failed refresh", 2)
	clk.add(5 * time.Second)
	check("retry after MinRefresh", 3)
	clk.add(10*time.Minute - 12*time.Second) // 1 s short of 1m + MaxStale
	check("just inside the stale period", 4)

	clk.add(2 * time.Second)
	_, err := c.Keys(ctx, "k1")
	if err == nil || errors.Is(err, jwks.ErrUnknownKey) || !strings.Contains(err.Error(), "key set unavailable") {
		t.Fatalf("past the stale period: %v; want key set unavailable", err)
	}
	if !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("the error does not say why: %v", err)
	}

	ks.set(func(ks *keyServer) { ks.status = 0 })
	clk.add(11 * time.Second)
	check("the key server is back", 5)
}

// TestKeyRotationAndMaxAge: a key removed from the set stops verifying
// once the set has been refreshed, which happens every RefreshInterval or
// after the response's max-age when that is shorter (never sooner than
// MinRefresh).
func TestKeyRotationAndMaxAge(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		due    time.Duration // when the set is refreshed
	}{
		{"no Cache-Control: RefreshInterval", nil, 5 * time.Minute},
		{"max-age shorter", http.Header{"Cache-Control": {"public, max-age=60"}}, time.Minute},
		{"max-age longer: RefreshInterval", http.Header{"Cache-Control": {"max-age=3600"}}, 5 * time.Minute},
		{"max-age less Age", http.Header{"Cache-Control": {"max-age=120"}, "Age": {"100"}}, 20 * time.Second},
		{"no-store: MinRefresh", http.Header{"Cache-Control": {"no-store"}}, 10 * time.Second},
		{"max-age=0: MinRefresh", http.Header{"Cache-Control": {"max-age=0"}}, 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ks := newKeyServer(t, "old", "new")
			ks.set(func(ks *keyServer) {
				for k, v := range tc.header {
					ks.header[k] = v
				}
			})
			clk := newClock()
			c := &jwks.Cache{URL: ks.srv.URL, RefreshInterval: 5 * time.Minute, MinRefresh: 10 * time.Second, Now: clk.Now}
			ctx, cancel := bounded()
			defer cancel()
			if _, err := c.Keys(ctx, "old"); err != nil {
				t.Fatal(err)
			}
			ks.set(func(ks *keyServer) { delete(ks.keys, "old") })

			clk.add(tc.due - time.Second)
			if _, err := c.Keys(ctx, "old"); err != nil {
				t.Fatalf("removed key before the set is due: %v; want it still cached", err)
			}
			jwks.Idle(c)
			if n := ks.hits.Load(); n != 1 {
				t.Fatalf("%d fetches before the set is due; want 1", n)
			}

			clk.add(2 * time.Second)
			// The set is due: this call is answered from it while the
			// refresh runs.
			c.Keys(ctx, "old")
			jwks.Idle(c)
			if n := ks.hits.Load(); n != 2 {
				t.Fatalf("%d fetches once the set is due; want 2", n)
			}
			if _, err := c.Keys(ctx, "old"); !errors.Is(err, jwks.ErrUnknownKey) {
				t.Fatalf("removed key after the refresh: %v; want ErrUnknownKey", err)
			}
			if _, err := c.Keys(ctx, "new"); err != nil {
				t.Fatalf("remaining key after the refresh: %v", err)
			}
			if n := ks.hits.Load(); n != 2 {
				t.Errorf("%d fetches; want 2 (the removed kid is within MinRefresh)", n)
			}
		})
	}
}

// TestConcurrentCallersShareOneFetch: many callers at once, for a set not
// yet fetched and then for a key id the set lacks, cause one fetch each
// time, and all get the key.
func TestConcurrentCallersShareOneFetch(t *testing.T) {
	const n = 32
	ks := newKeyServer(t, "k1")
	clk := newClock()
	c := &jwks.Cache{URL: ks.srv.URL, MinRefresh: 10 * time.Second, FetchTimeout: time.Hour, Now: clk.Now}
	ctx, cancel := bounded()
	defer cancel()
	round := func(kid string, wantHits int32) {
		t.Helper()
		release := ks.stallNext()
		defer release()
		var pending []<-chan result
		for range n {
			pending = append(pending, keysAsync(c, ctx, kid))
		}
		ks.waitEntered(t)
		waitFor(t, "every caller to wait for the one fetch", func() bool { return jwks.Waiters(c) == n })
		release()
		for i, p := range pending {
			if r := await(t, p); r.err != nil || len(r.keys) != 1 || r.keys[0].KeyID != kid {
				t.Fatalf("caller %d for %s: %v %v", i, kid, r.keys, r.err)
			}
		}
		if got := ks.hits.Load(); got != wantHits {
			t.Fatalf("%d callers for %s made %d fetches in all; want %d", n, kid, got, wantHits)
		}
	}
	round("k1", 1)
	clk.add(11 * time.Second)
	ks.set(func(ks *keyServer) { ks.keys["k2"] = ecKey(t) })
	round("k2", 2)
}

// TestMaxAge: the freshness a key set response's Cache-Control gives.
func TestMaxAge(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, -1},
		{http.Header{"Cache-Control": {"public"}}, -1},
		{http.Header{"Cache-Control": {"public, max-age=300, must-revalidate"}}, 300 * time.Second},
		{http.Header{"Cache-Control": {`MAX-AGE="90"`}}, 90 * time.Second},
		{http.Header{"Cache-Control": {"max-age=300", "max-age=60"}}, 60 * time.Second},
		{http.Header{"Cache-Control": {"max-age=300"}, "Age": {"100"}}, 200 * time.Second},
		{http.Header{"Cache-Control": {"max-age=300"}, "Age": {"900"}}, 0},
		{http.Header{"Cache-Control": {"max-age=soon"}}, 0},
		{http.Header{"Cache-Control": {"max-age=-5"}}, 0},
		{http.Header{"Cache-Control": {"max-age=600, no-cache"}}, 0},
		{http.Header{"Cache-Control": {"no-store"}}, 0},
		{http.Header{"Cache-Control": {"max-age=99999999999999999999999"}}, (1 << 31) * time.Second},
	} {
		if got := jwks.MaxAge(tc.h); got != tc.want {
			t.Errorf("%v: %v; want %v", tc.h, got, tc.want)
		}
	}
}
