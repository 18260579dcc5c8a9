package client_test

// A client's calls carry its credentials; a redirect is refused on every
// binding, with an error naming its target, and nothing reaches the target.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/transport"
)

// redirectTarget counts the requests a redirect's target gets, and those
// that carry an Authorization header.
type redirectTarget struct {
	URL         string
	hits, authz atomic.Int32
}

func startRedirectTarget(t *testing.T) *redirectTarget {
	t.Helper()
	rt := &redirectTarget{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt.hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			rt.authz.Add(1)
		}
		http.Error(w, "not an agent", http.StatusTeapot)
	}))
	t.Cleanup(hs.Close)
	rt.URL = hs.URL
	return rt
}

// startRedirector answers every request with status, a redirect to the
// same path at target; it speaks HTTP/1.1 and cleartext HTTP/2 (gRPC).
func startRedirector(t *testing.T, status int, target string) *httptest.Server {
	t.Helper()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, status)
	}))
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	t.Cleanup(hs.Close)
	return hs
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	bindings := []struct {
		name string
		f    client.TransportFactory
		i    int // its interface in testkit.Interfaces
	}{{"JSONRPC", client.JSONRPC(), 0}, {"HTTP+JSON", client.REST(), 1}, {"GRPC", client.GRPC(), 2}}
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusFound} {
		for _, b := range bindings {
			t.Run(http.StatusText(status)+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				target := startRedirectTarget(t)
				hs := startRedirector(t, status, target.URL)
				card := &a2a.AgentCard{Name: "redirects", SupportedInterfaces: testkit.Interfaces(hs.URL)[b.i : b.i+1]}
				o := &client.Options{BearerToken: "secret", Transports: []client.TransportFactory{b.f}}
				if b.name == "GRPC" {
					o.HTTPClient = testkit.H2CClient()
				}
				c, err := client.New(card, o)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
				var re *transport.RedirectError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), "redirected to "+target.URL) {
					t.Fatalf("err = %v, want a refused redirect naming %s", err, target.URL)
				}
				if n := target.hits.Load(); n != 0 {
					t.Errorf("the redirect's target got %d requests (%d with Authorization), want none", n, target.authz.Load())
				}
			})
		}
	}
}

func TestResolveWithCredentialsRefusesRedirect(t *testing.T) {
	t.Parallel()
	target := startRedirectTarget(t)
	hs := startRedirector(t, http.StatusTemporaryRedirect, target.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Resolve(ctx, hs.URL, &client.ResolveOptions{Header: http.Header{"Authorization": {"Bearer secret"}}})
	if err == nil || !strings.Contains(err.Error(), "redirected to "+target.URL) {
		t.Fatalf("err = %v, want a refused redirect naming %s", err, target.URL)
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests, want none", n)
	}
}
