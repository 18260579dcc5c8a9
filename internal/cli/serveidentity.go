package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/authn"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/internal/jwks"
)

// identityFlags are the `parley serve` flags of who may call and how much:
// JWT bearer tokens, API keys, TLS client certificates, per-caller limits,
// and the key that signs the card.
type identityFlags struct {
	jwtIssuer, jwtJWKS, jwtAudience, jwtClaim string
	jwtRightsClaim                            string
	clientRights                              multiFlag
	jwksRefresh                               time.Duration
	apiKeys                                   string
	clientCA, clientAuth                      string
	rateLimit                                 string
	rateBurst, maxStreams, maxCalls           int
	answerBudget                              int64
	signKey, signKID, signJKU                 string
}

// addIdentityFlags registers the identity flags on fs.
func addIdentityFlags(fs *flag.FlagSet) *identityFlags {
	f := &identityFlags{}
	fs.StringVar(&f.jwtIssuer, "jwt-issuer", "", "accept JWT bearer tokens of this OpenID Connect issuer `URL` (its discovery document gives the keys; \"iss\" must match)")
	fs.StringVar(&f.jwtJWKS, "jwt-jwks-url", "", "accept JWT bearer tokens signed by the keys at this JWKS `URL` (instead of discovery)")
	fs.StringVar(&f.jwtAudience, "jwt-audience", "", "the `AUD` a JWT must name in \"aud\" (required with --jwt-issuer or --jwt-jwks-url)")
	fs.StringVar(&f.jwtClaim, "jwt-principal-claim", "sub", "the JWT `CLAIM` whose value is the caller's name")
	fs.StringVar(&f.jwtRightsClaim, "jwt-rights-claim", "", "read each JWT's rights from this `CLAIM` (\"scope\": values separated by spaces; \"scp\": a list): tasks:read, tasks:write, push, card:extended, *; other values are ignored, and a token without the claim may call nothing (default: none, every JWT has every right)")
	fs.Var(&f.clientRights, "tls-client-rights", "give the client certificates naming principal `NAME=RIGHTS` only those rights (comma-separated, as --auth-token's; repeatable; others have every right)")
	fs.DurationVar(&f.jwksRefresh, "jwks-refresh", jwks.DefaultRefreshInterval, "fetch the JWT issuer's key set again this often (at least 30s; a shorter Cache-Control max-age from the key set wins), so that keys it removed stop verifying")
	fs.StringVar(&f.apiKeys, "api-keys", "", "accept X-API-Key keys listed (as NAME sha256:HEX lines) in `FILE`; 'parley apikey new NAME' makes one; SIGHUP reloads")
	fs.StringVar(&f.clientCA, "tls-client-ca", "", "accept TLS client certificates issued by the CAs in this PEM `FILE` (needs --tls-cert); the caller is the certificate's SAN or CN")
	fs.StringVar(&f.clientAuth, "tls-client-auth", "optional", "with --tls-client-ca: `require` a certificate on every connection, or make it optional")
	fs.StringVar(&f.rateLimit, "rate-limit", "", "requests each caller may make, as `N/s` (or N/m, N/h); 429 beyond it (0 or empty: no limit)")
	fs.IntVar(&f.rateBurst, "rate-burst", 0, "burst of --rate-limit (0: the per-second rate rounded up)")
	fs.IntVar(&f.maxStreams, "max-streams", a2ahttp.DefaultMaxStreams, "streams each caller (a principal, or a client address without one) may have open at once, A2A 1.1 long-poll GetTasks while held included (0: no limit)")
	fs.IntVar(&f.maxCalls, "max-calls", a2ahttp.DefaultMaxCalls, "requests each caller may have in flight at once, streams included, until their answers are taken (0: no limit)")
	fs.Int64Var(&f.answerBudget, "answer-budget", a2ahttp.DefaultAnswerBudget, "bytes of answers (each of 64 KiB or more) each caller may have being written at once; past it the caller's calls get 429 (0: no limit)")
	fs.StringVar(&f.signKey, "sign-card-key", "", "sign the agent card (and the extended card) with the PEM private key in `FILE` (EC P-256, Ed25519 or RSA; 'parley key new' makes one)")
	fs.StringVar(&f.signKID, "sign-card-kid", "", "the signature's key id `KID` (default: the key's RFC 7638 thumbprint)")
	fs.StringVar(&f.signJKU, "sign-card-jku", "", "put this JWKS `URL` in the signature's header (where verifiers may find the key; 'parley key jwks' prints the JWKS)")
	return f
}

// identity is what the identity flags configure, loaded and checked.
type identity struct {
	jwt        *authn.JWT
	apiKeys    *authn.APIKeys
	clientCAs  *x509.CertPool
	clientAuth tls.ClientAuthType
	// clientRights are the rights of --tls-client-rights, by principal.
	clientRights map[string]a2a.Rights
	rate         float64
	burst        int
	signer       *cardsign.Signer
	flags        *identityFlags
}

// load checks the flags and reads their files. tlsCert tells whether the
// server serves TLS. Errors are usage errors.
func (f *identityFlags) load(tlsCert bool) (*identity, error) {
	id := &identity{flags: f, burst: f.rateBurst}
	var err error
	if f.jwtIssuer != "" || f.jwtJWKS != "" || f.jwtAudience != "" {
		if f.jwksRefresh < jwks.DefaultMinRefresh {
			return nil, usageError{fmt.Errorf("--jwks-refresh %v: must be at least %v (key sets are fetched at most once per %v)", f.jwksRefresh, jwks.DefaultMinRefresh, jwks.DefaultMinRefresh)}
		}
		if id.jwt, err = authn.NewJWT(authn.JWTOptions{Issuer: f.jwtIssuer, JWKSURL: f.jwtJWKS, Audience: f.jwtAudience, PrincipalClaim: f.jwtClaim,
			RightsClaim: f.jwtRightsClaim, JWKSRefresh: f.jwksRefresh}); err != nil {
			return nil, usageError{fmt.Errorf("--jwt-issuer/--jwt-jwks-url/--jwt-audience: %v", strings.TrimPrefix(err.Error(), "authn: "))}
		}
	}
	if f.apiKeys != "" {
		if id.apiKeys, err = authn.LoadAPIKeys(f.apiKeys); err != nil {
			return nil, usageError{fmt.Errorf("--api-keys: %w", err)}
		}
	}
	if f.clientCA != "" {
		if !tlsCert {
			return nil, usageError{errors.New("--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for in the TLS handshake")}
		}
		if id.clientCAs, err = authn.ClientCAs(f.clientCA); err != nil {
			return nil, usageError{fmt.Errorf("--tls-client-ca: %w", err)}
		}
		if id.clientAuth, err = authn.ClientAuthMode(f.clientAuth); err != nil {
			return nil, usageError{fmt.Errorf("--tls-client-auth: %v", err)}
		}
	}
	if id.clientRights, err = parsePrincipalRights(f.clientRights); err != nil {
		return nil, usageError{fmt.Errorf("--tls-client-rights: %v", err)}
	}
	if len(id.clientRights) > 0 && f.clientCA == "" {
		return nil, usageError{errors.New("--tls-client-rights needs --tls-client-ca")}
	}
	if f.jwtRightsClaim != "" && id.jwt == nil {
		return nil, usageError{errors.New("--jwt-rights-claim needs --jwt-issuer or --jwt-jwks-url")}
	}
	if id.rate, err = parseRate(f.rateLimit); err != nil {
		return nil, usageError{fmt.Errorf("--rate-limit %q: %v", f.rateLimit, err)}
	}
	if f.signKey != "" {
		if id.signer, err = loadSigner(f.signKey, f.signKID, f.signJKU); err != nil {
			return nil, usageError{fmt.Errorf("--sign-card-key %s: %v", f.signKey, err)}
		}
	}
	return id, nil
}

// loadSigner reads a PEM private key and makes a card signer of it.
func loadSigner(file, kid, jku string) (*cardsign.Signer, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key, alg, err := cardsign.ParsePrivateKey(b)
	if err != nil {
		return nil, err
	}
	return cardsign.NewSigner(key, alg, &cardsign.SignerOptions{KeyID: kid, JKU: jku})
}

// parsePrincipalRights reads NAME=RIGHTS entries (a2a.ParseRights).
func parsePrincipalRights(entries []string) (map[string]a2a.Rights, error) {
	out := map[string]a2a.Rights{}
	for _, v := range entries {
		name, spec, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want NAME=RIGHTS", v)
		}
		r, err := a2a.ParseRights(spec)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", v, err)
		}
		out[name] = r
	}
	return out, nil
}

// parseRate reads "N/s", "N/m", "N/h" or "N" (per second).
func parseRate(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	num, unit, _ := strings.Cut(s, "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n < 0 {
		return 0, errors.New("want N/s, N/m or N/h with N a number ≥ 0")
	}
	switch unit {
	case "", "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, errors.New("want N/s, N/m or N/h")
}

// authenticates reports whether some credential besides static tokens is
// configured.
func (id *identity) authenticates() bool {
	return id.jwt != nil || id.apiKeys != nil || id.clientCAs != nil
}

// apply puts the authenticators and limits into the handler's options. A
// JWT authenticator is asked before the static tokens (which refuse any
// bearer token they do not know); a token shaped as a JWT goes to it.
func (id *identity) apply(o *a2ahttp.Options) {
	if id.jwt != nil {
		o.Authenticators = append(o.Authenticators, id.jwt)
		if len(o.Tokens) > 0 {
			o.Authenticators = append(o.Authenticators, a2ahttp.BearerTokens(o.Tokens))
			o.Tokens = nil
		}
	}
	if id.apiKeys != nil {
		o.Authenticators = append(o.Authenticators, id.apiKeys)
	}
	if id.clientCAs != nil {
		o.Authenticators = append(o.Authenticators, authn.ClientCert{Rights: id.clientRights})
	}
	o.RateLimit, o.RateBurst = id.rate, id.burst
	// The flags' 0 is no limit; the options' is the default.
	o.MaxStreams, o.MaxCalls, o.AnswerBudget = noLimit(id.flags.maxStreams), noLimit(id.flags.maxCalls), noLimit(id.flags.answerBudget)
	if id.signer != nil {
		o.CardSigner = id.signer.SignJSON
	}
}

// tlsClientAuth makes the server's TLS config ask for client certificates.
func (id *identity) tlsClientAuth(c *tls.Config) {
	if id.clientCAs != nil {
		c.ClientCAs, c.ClientAuth = id.clientCAs, id.clientAuth
	}
}

// declare writes the card's securitySchemes and securityRequirements from
// what is configured: each method is one scheme, and any one of them is
// enough (one requirement per scheme, OpenAPI's "or"); with
// --tls-client-auth require the certificate is what every caller has. With
// anonymous callers allowed, an empty requirement says so.
func (id *identity) declare(card *a2a.AgentCard, staticTokens, allowAnonymous bool) {
	schemes := map[string]*a2a.SecurityScheme{}
	var order []string
	add := func(name string, s *a2a.SecurityScheme) { schemes[name] = s; order = append(order, name) }
	if staticTokens {
		// The scheme a2ahttp declares for its bearer tokens, under its name:
		// the card declaring schemes, a2ahttp adds none of its own.
		add(a2ahttp.BearerSchemeName, a2ahttp.BearerScheme())
	}
	if id.jwt != nil {
		if f := id.flags; f.jwtIssuer != "" {
			add("oidc", &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_OpenIdConnectSecurityScheme{OpenIdConnectSecurityScheme: &a2a.OpenIdConnectSecurityScheme{
				OpenIdConnectUrl: strings.TrimSuffix(f.jwtIssuer, "/") + "/.well-known/openid-configuration",
				Description:      "an ID or access token of this issuer for audience " + f.jwtAudience + ", sent as Authorization: Bearer"}}})
		} else {
			add("jwt", &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{
				Scheme: "Bearer", BearerFormat: "JWT", Description: "a JWT for audience " + id.flags.jwtAudience}}})
		}
	}
	if id.apiKeys != nil {
		add("apiKey", &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &a2a.APIKeySecurityScheme{
			Location: "header", Name: authn.APIKeyHeader, Description: "a key given by the server's operator"}}})
	}
	if id.clientCAs != nil {
		add("mtls", &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_MtlsSecurityScheme{MtlsSecurityScheme: &a2a.MutualTlsSecurityScheme{
			Description: "a TLS client certificate from the operator's CA; the caller is its subject alternative name, else its common name"}}})
	}
	if len(order) == 0 {
		return
	}
	card.SecuritySchemes = schemes
	card.SecurityRequirements = nil
	if id.clientCAs != nil && id.clientAuth == tls.RequireAndVerifyClientCert {
		order = []string{"mtls"}
	}
	for _, name := range order {
		card.SecurityRequirements = append(card.SecurityRequirements, &a2a.SecurityRequirement{Schemes: map[string]*a2a.StringList{name: {}}})
	}
	if allowAnonymous {
		card.SecurityRequirements = append(card.SecurityRequirements, &a2a.SecurityRequirement{})
	}
}

// signExtended signs the extended card, when there is one: it is served
// as the card model encodes it (GetExtendedAgentCard's result), so its
// model is signed. The public card is signed by a2ahttp once its document
// is whole (apply sets CardSigner).
func (id *identity) signExtended(extended *a2a.AgentCard) error {
	if id.signer == nil || extended == nil {
		return nil
	}
	return id.signer.Sign(extended)
}

// reloadOnSIGHUP reloads the API key file each time the process gets
// SIGHUP (revoking keys whose lines were removed), until the returned
// function is called.
func (id *identity) reloadOnSIGHUP(log *slog.Logger) (stop func()) {
	if id.apiKeys == nil {
		return func() {}
	}
	return onSIGHUP(func() {
		if err := id.apiKeys.Reload(); err != nil {
			log.Error("API keys not reloaded; the previous ones stay in use", "err", err)
		} else {
			log.Info("API keys reloaded", "keys", id.apiKeys.Len())
		}
	})
}

// announce logs what the identity flags turned on.
func (id *identity) announce(log *slog.Logger) {
	if id.jwt != nil {
		log.Info("JWT bearer tokens accepted", "issuer", id.flags.jwtIssuer, "jwks", id.flags.jwtJWKS, "audience", id.flags.jwtAudience, "principalClaim", id.flags.jwtClaim, "jwksRefresh", id.flags.jwksRefresh)
		if id.flags.jwtIssuer == "" {
			log.Warn("--jwt-jwks-url without --jwt-issuer: tokens of any issuer signed by those keys are accepted (\"iss\" is not checked)")
		}
	}
	if id.apiKeys != nil {
		log.Info("API keys accepted", "file", id.flags.apiKeys, "keys", id.apiKeys.Len())
	}
	if id.clientCAs != nil {
		log.Info("TLS client certificates accepted", "ca", id.flags.clientCA, "mode", id.flags.clientAuth)
	}
	if id.signer != nil {
		log.Info("agent card signed", "kid", id.signer.KeyID())
	}
}

// noLimit maps a limit flag's 0 (no limit) to the options' negative.
func noLimit[T int | int64 | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
