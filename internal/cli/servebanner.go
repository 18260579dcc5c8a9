package cli

import (
	"crypto/tls"
	"strings"

	"parley.dev/parley/authn"
)

// The shell variables the banner's curl example reads its credentials
// from: the banner never prints a secret, only where to find one.
const (
	bannerTokenVar  = "PARLEY_TOKEN"
	bannerAPIKeyVar = "PARLEY_API_KEY"
)

// curlCredentials is what the banner's curl example needs to be let in
// with the authentication configured: the curl arguments (a header with a
// shell variable, or a client certificate) and a note saying what to put
// there. Both are empty when anonymous callers are let in.
func (cfg *serveConfig) curlCredentials() (args, note string) {
	if !cfg.authConfigured() || cfg.guard.allowAnonymous {
		return "", ""
	}
	id := cfg.id
	certRequired := id.clientCAs != nil && id.clientAuth == tls.RequireAndVerifyClientCert
	switch {
	case certRequired || (id.clientCAs != nil && !cfg.staticTokens() && id.jwt == nil && id.apiKeys == nil):
		return "--cert client.pem --key client-key.pem",
			"(client.pem and client-key.pem: a client certificate issued by a CA of --tls-client-ca " + id.flags.clientCA + ", and its key)"
	case cfg.staticTokens() || id.jwt != nil:
		return `-H "Authorization: Bearer $` + bannerTokenVar + `"`,
			"(set " + bannerTokenVar + " first: " + cfg.bearerSource() + "; the banner never shows one)"
	default: // API keys
		return `-H "` + authn.APIKeyHeader + `: $` + bannerAPIKeyVar + `"`,
			"(set " + bannerAPIKeyVar + " first: a key that 'parley apikey new NAME' printed, whose line is in --api-keys " + id.flags.apiKeys + "; the banner never shows one)"
	}
}

// bearerSource says where the bearer tokens the server accepts come
// from, for the banner.
func (cfg *serveConfig) bearerSource() string {
	var from []string
	if len(cfg.secrets.argv) > 0 {
		from = append(from, "--auth-token")
	}
	for _, f := range cfg.secrets.tokenFiles {
		from = append(from, "--auth-token-file "+f)
	}
	if cfg.secrets.getenv(authTokensEnv) != "" {
		from = append(from, "$"+authTokensEnv)
	}
	var kinds []string
	if len(from) > 0 {
		kinds = append(kinds, "the TOKEN of a NAME=TOKEN principal of "+strings.Join(from, ", "))
	}
	if id := cfg.id; id.jwt != nil {
		issuer := "the issuer " + id.flags.jwtIssuer
		if id.flags.jwtIssuer == "" {
			issuer = "the keys of --jwt-jwks-url " + id.flags.jwtJWKS
		}
		kinds = append(kinds, "a JWT signed by "+issuer+" for audience "+id.flags.jwtAudience)
	}
	return strings.Join(kinds, ", or ")
}
