package client_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// rotating is a server whose only accepted bearer token can be replaced
// while it serves (an authorization server issuing a new access token,
// the old one expiring), and a token source that follows it.
type rotating struct {
	set  *a2ahttp.TokenSet
	cur  atomic.Pointer[string]
	mu   sync.Mutex
	asks int // how many times the source was asked
}

func (r *rotating) rotate(tok string) {
	r.set.Replace(map[string]string{tok: "alice"})
	r.cur.Store(&tok)
}

func (r *rotating) token(context.Context) (string, error) {
	r.mu.Lock()
	r.asks++
	r.mu.Unlock()
	return *r.cur.Load(), nil
}

func startRotating(t *testing.T) (*testkit.Server, *rotating) {
	t.Helper()
	r := &rotating{set: a2ahttp.NewTokenSet(nil)}
	r.rotate("first")
	s := testkit.StartServer(t, &testkit.Options{
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.RequireAuth = true },
		HTTP:   func(o *a2ahttp.Options) { o.Authenticators = append(o.Authenticators, r.set) },
	})
	return s, r
}

// TestBearerTokenFuncFollowsRotation: a client whose bearer token comes
// from Options.BearerTokenFunc keeps working, on every binding, when the
// server stops accepting the token it started with and the source gives
// its successor; a client with the first token as a fixed BearerToken is
// then refused (spec §7.1: UNAUTHENTICATED).
func TestBearerTokenFuncFollowsRotation(t *testing.T) {
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			s, r := startRotating(t)
			e := &env{t: t, url: s.URL, card: s.Card}
			c := e.client(b, &client.Options{BearerTokenFunc: r.token})
			fixed := e.client(b, &client.Options{BearerToken: "first"})
			ctx := testCtx(t)

			task := send(t, c, "hello", nil)
			if _, err := fixed.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); err != nil {
				t.Fatalf("GetTask with the first token before the rotation: %v", err)
			}
			r.rotate("second")
			if _, err := fixed.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); !isA2AError(err, a2a.CodeUnauthenticated) {
				t.Fatalf("GetTask with the first token after the rotation = %v, want UNAUTHENTICATED", err)
			}
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); err != nil {
				t.Fatalf("GetTask after the rotation: %v", err)
			}
			// A stream opened after the rotation carries the new token too.
			n := 0
			for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello again")}) {
				if err != nil {
					t.Fatalf("SendStreamingMessage after the rotation: %v", err)
				}
				n++
			}
			if n == 0 {
				t.Fatal("SendStreamingMessage after the rotation: no event")
			}
			r.rotate("third")
			if _, err := c.WaitForCompletion(ctx, task.GetId()); err != nil {
				t.Fatalf("WaitForCompletion after a second rotation: %v", err)
			}
			if r.asks < 4 {
				t.Errorf("the token source was asked %d times for 4 calls or more, want once a request", r.asks)
			}
		})
	}
}

// TestBearerTokenFuncFailure: when the token source fails, the call is
// not sent, not retried, and fails with an error wrapping the source's.
func TestBearerTokenFuncFailure(t *testing.T) {
	errNoToken := errors.New("refresh refused")
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			s, _ := startRotating(t)
			e := &env{t: t, url: s.URL, card: s.Card}
			var asks atomic.Int32
			c := e.client(b, &client.Options{BearerTokenFunc: func(context.Context) (string, error) {
				asks.Add(1)
				return "", errNoToken
			}})
			ctx := testCtx(t)
			_, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "any"})
			if !errors.Is(err, errNoToken) {
				t.Fatalf("GetTask = %v, want the token source's error", err)
			}
			var te *client.TransportError
			if errors.As(err, &te) {
				t.Errorf("GetTask = %v, a *TransportError: the call was not sent", err)
			}
			for _, err = range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}) {
			}
			if !errors.Is(err, errNoToken) {
				t.Fatalf("SendStreamingMessage = %v, want the token source's error", err)
			}
			if n := asks.Load(); n != 2 {
				t.Errorf("the source was asked %d times, want 2 (no retry)", n)
			}
		})
	}
}
