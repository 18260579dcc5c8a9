package authn_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/authn"
)

// An API key is made once; the server keeps only its hash, and the key
// names its caller.
func ExampleAPIKeys() {
	key, line, _ := authn.NewAPIKey("ci-bot")
	dir, _ := os.MkdirTemp("", "keys")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "api-keys")
	os.WriteFile(file, []byte(line+"\n"), 0o600)
	keys, _ := authn.LoadAPIKeys(file)

	r := httptest.NewRequest("GET", "/tasks", nil)
	r.Header.Set(authn.APIKeyHeader, key)
	who, err := keys.Authenticate(r)
	fmt.Println(who, err, strings.Contains(line, key))
	// Output: ci-bot <nil> false
}

// The authenticators go into a2ahttp.Options; a request is authenticated
// by the first that accepts it.
func ExampleNewJWT() {
	jwt, err := authn.NewJWT(authn.JWTOptions{
		Issuer:   "https://login.example.com/realms/agents", // discovery gives the keys
		Audience: "https://agent.example.com",
	})
	if err != nil {
		panic(err)
	}
	opts := &a2ahttp.Options{Authenticators: []a2ahttp.Authenticator{jwt, authn.ClientCert{}}}
	fmt.Println(len(opts.Authenticators))
	// Output: 2
}
