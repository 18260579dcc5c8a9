package authn_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/authn"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// identityServer serves the conformance agent on every binding with a JWT
// authenticator (of is) and API keys, authentication required.
func identityServer(t *testing.T, is *issuer, keys *authn.APIKeys) *testkit.Server {
	t.Helper()
	j := newJWT(t, is, nil)
	return testkit.StartServer(t, &testkit.Options{
		Quiet:  true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.RequireAuth = true },
		HTTP: func(o *a2ahttp.Options) {
			o.Authenticators = []a2ahttp.Authenticator{j, keys}
		},
	})
}

// clientOn is a client of s that speaks one binding with the credentials.
func clientOn(t *testing.T, s *testkit.Server, binding string, bearer string, header http.Header) *client.Client {
	t.Helper()
	f := map[string]client.TransportFactory{"JSONRPC": client.JSONRPC(), "HTTP+JSON": client.REST(), "GRPC": client.GRPC()}[binding]
	c, err := client.New(s.Card, &client.Options{Transports: []client.TransportFactory{f}, BearerToken: bearer, Header: header, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPrincipalsScopeTasksOnEveryBinding: the principal of a valid JWT,
// and the name of an API key, scope tasks exactly as static tokens do, on
// JSON-RPC, HTTP+JSON and gRPC: a task is seen by its owner only.
func TestPrincipalsScopeTasksOnEveryBinding(t *testing.T) {
	is := newIssuer(t)
	key, line, _ := authn.NewAPIKey("bob")
	file := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(file, []byte(line+"\n"), 0o600)
	keys, err := authn.LoadAPIKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	s := identityServer(t, is, keys)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, binding := range []string{"JSONRPC", "HTTP+JSON", "GRPC"} {
		alice := clientOn(t, s, binding, is.token(t, "k1", is.claims("alice", audience)), nil)
		bob := clientOn(t, s, binding, "", http.Header{authn.APIKeyHeader: {key}})
		nobody := clientOn(t, s, binding, "", nil)
		forger := clientOn(t, s, binding, is.token(t, "k1", is.claims("alice", "https://other.example")), nil)

		task := testkit.SendTask(t, ctx, alice, "hello", nil)
		if _, err := alice.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); err != nil {
			t.Errorf("%s: alice (JWT) reading her task: %v", binding, err)
		}
		if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%s: bob (API key) reading alice's task: %v; want TaskNotFound", binding, err)
		}
		bobs := testkit.SendTask(t, ctx, bob, "mine", nil)
		if _, err := alice.GetTask(ctx, &a2a.GetTaskRequest{Id: bobs.GetId()}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%s: alice reading bob's task: %v; want TaskNotFound", binding, err)
		}
		for who, c := range map[string]*client.Client{"no credentials": nobody, "a token for another audience": forger} {
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()}); !errors.Is(err, a2a.ErrUnauthenticated) {
				t.Errorf("%s: %s: %v; want Unauthenticated", binding, who, err)
			}
		}
	}
}
