package cli

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"parley.dev/parley/authn"
)

// TestCurlCredentials: what the banner's curl example carries for each
// way of authenticating, and the note on where the credential comes from.
// The cases that need a running server (bearer tokens, API keys, required
// client certificates) are run with the real curl by
// TestServeBannerCurlWithAuth.
func TestCurlCredentials(t *testing.T) {
	env := map[string]string{}
	newCfg := func() *serveConfig {
		return &serveConfig{
			guard:   &guardFlags{},
			secrets: &secretFlags{getenv: func(k string) string { return env[k] }},
			id:      &identity{flags: &identityFlags{}},
		}
	}
	for _, tc := range []struct {
		name     string
		setup    func(cfg *serveConfig)
		args     string
		noteHas  []string
		noteLack []string
	}{
		{"none", func(*serveConfig) {}, "", nil, nil},
		{"tokens from the environment", func(cfg *serveConfig) {
			env[authTokensEnv] = "alice=secret-1"
			cfg.principals = map[string]string{"secret-1": "alice"}
		}, `-H "Authorization: Bearer $PARLEY_TOKEN"`, []string{"$" + authTokensEnv}, []string{"secret-1"}},
		{"OIDC issuer", func(cfg *serveConfig) {
			cfg.id.jwt = &authn.JWT{}
			cfg.id.flags.jwtIssuer, cfg.id.flags.jwtAudience = "https://idp.example", "parley"
		}, `-H "Authorization: Bearer $PARLEY_TOKEN"`, []string{"a JWT signed by the issuer https://idp.example for audience parley"}, []string{"NAME=TOKEN"}},
		{"JWKS and tokens", func(cfg *serveConfig) {
			cfg.id.jwt = &authn.JWT{}
			cfg.id.flags.jwtJWKS, cfg.id.flags.jwtAudience = "https://idp.example/jwks", "parley"
			cfg.secrets.tokenFiles = multiFlag{"/etc/parley/tokens"}
		}, `-H "Authorization: Bearer $PARLEY_TOKEN"`, []string{"--auth-token-file /etc/parley/tokens", ", or a JWT signed by the keys of --jwt-jwks-url https://idp.example/jwks"}, nil},
		{"API keys and an optional certificate", func(cfg *serveConfig) {
			cfg.id.apiKeys = &authn.APIKeys{}
			cfg.id.flags.apiKeys = "keys.txt"
			cfg.id.clientCAs, cfg.id.clientAuth = x509.NewCertPool(), tls.VerifyClientCertIfGiven
		}, `-H "X-API-Key: $PARLEY_API_KEY"`, []string{"--api-keys keys.txt"}, nil},
		{"an optional certificate alone", func(cfg *serveConfig) {
			cfg.id.clientCAs, cfg.id.clientAuth = x509.NewCertPool(), tls.VerifyClientCertIfGiven
			cfg.id.flags.clientCA = "ca.pem"
		}, "--cert client.pem --key client-key.pem", []string{"--tls-client-ca ca.pem"}, nil},
		{"anonymous callers allowed", func(cfg *serveConfig) {
			cfg.principals = map[string]string{"t": "alice"}
			cfg.guard.allowAnonymous = true
		}, "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(env)
			cfg := newCfg()
			tc.setup(cfg)
			args, note := cfg.curlCredentials()
			if args != tc.args {
				t.Errorf("args %q, want %q", args, tc.args)
			}
			if (note == "") != (tc.args == "") {
				t.Errorf("note %q with args %q", note, args)
			}
			for _, s := range tc.noteHas {
				if !strings.Contains(note, s) {
					t.Errorf("note %q lacks %q", note, s)
				}
			}
			for _, s := range tc.noteLack {
				if strings.Contains(note, s) {
					t.Errorf("note %q has %q", note, s)
				}
			}
		})
	}
}
