package authn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jwks"
)

// Defaults of JWTOptions.
const (
	DefaultLeeway        = time.Minute
	DefaultMaxTokenBytes = 8 << 10
)

// JWTAlgorithms are the token algorithms accepted by default: asymmetric
// ones only. HS256 and its kin are never accepted, so a token signed with
// a public key used as an HMAC secret (algorithm confusion) and "alg":
// "none" are refused before any key is looked at.
var JWTAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// JWTOptions configure a JWT authenticator.
type JWTOptions struct {
	// Issuer is the expected "iss". Without JWKSURL, its OpenID Connect
	// discovery document gives the key set's URL.
	Issuer string
	// JWKSURL is the key set's URL (instead of discovery).
	JWKSURL string
	// Audience must be among the token's "aud" (required).
	Audience string
	// PrincipalClaim names the string claim that becomes the principal
	// (default "sub").
	PrincipalClaim string
	// RightsClaim names the claim whose values are the token's rights
	// (a2a.Right names; others, such as "openid", are ignored): a string
	// of values separated by spaces (OAuth 2.0 "scope", RFC 8693 §4.2) or
	// an array of strings ("scp"). Empty (the default): tokens declare no
	// rights and hold every right. Set, it makes rights part of every
	// token: one without the claim, or whose values name no right, may
	// call nothing (spec §3.3.2).
	RightsClaim string
	// Algorithms are the accepted "alg" values (default JWTAlgorithms);
	// only asymmetric algorithms are allowed.
	Algorithms []jose.SignatureAlgorithm
	// Leeway is the clock skew allowed on "exp", "nbf" and "iat" (default
	// DefaultLeeway).
	Leeway time.Duration
	// MaxTokenBytes bounds a token (default DefaultMaxTokenBytes).
	MaxTokenBytes int
	// HTTPClient fetches the discovery document and key set.
	HTTPClient *http.Client
	// MinRefresh is the shortest time between two key set fetches
	// (default 30 s): it rate-limits the refreshes
	// that tokens with unknown key ids cause.
	MinRefresh time.Duration
	// JWKSRefresh is how often the key set is fetched again (default
	// 5 minutes; a shorter Cache-Control max-age on the
	// key set wins), so that a key the issuer removed stops verifying.
	// NewJWT refuses a value below MinRefresh, which no fetch could
	// honour.
	JWKSRefresh time.Duration
	// Now returns the time (default time.Now).
	Now func() time.Time
}

// JWT authenticates "Authorization: Bearer <JWT>". A bearer token that is
// not shaped as a JWT (three dot-separated parts) is left to the next
// authenticator (static tokens, say).
type JWT struct {
	opts JWTOptions
	keys *jwks.Cache
}

// NewJWT checks opts and returns the authenticator. Keys are fetched on
// first use, so the issuer need not be reachable yet.
func NewJWT(opts JWTOptions) (*JWT, error) {
	if opts.Audience == "" {
		return nil, errors.New("authn: a JWT audience is required (the value your issuer puts in \"aud\" for this agent)")
	}
	if opts.Issuer == "" && opts.JWKSURL == "" {
		return nil, errors.New("authn: a JWT issuer or key set URL is required")
	}
	if least := cmp.Or(opts.MinRefresh, jwks.DefaultMinRefresh); opts.JWKSRefresh != 0 && opts.JWKSRefresh < least {
		return nil, fmt.Errorf("authn: JWKSRefresh %v is below MinRefresh %v: key sets are fetched at most once per MinRefresh", opts.JWKSRefresh, least)
	}
	if opts.PrincipalClaim == "" {
		opts.PrincipalClaim = "sub"
	}
	if len(opts.Algorithms) == 0 {
		opts.Algorithms = JWTAlgorithms
	}
	for _, a := range opts.Algorithms {
		if !slices.Contains(JWTAlgorithms, a) {
			return nil, fmt.Errorf("authn: JWT algorithm %q is not allowed (asymmetric algorithms only)", a)
		}
	}
	if opts.Leeway == 0 {
		opts.Leeway = DefaultLeeway
	}
	if opts.MaxTokenBytes <= 0 {
		opts.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &JWT{opts: opts, keys: &jwks.Cache{URL: opts.JWKSURL, Issuer: opts.Issuer,
		HTTPClient: opts.HTTPClient, MinRefresh: opts.MinRefresh, RefreshInterval: opts.JWKSRefresh,
		Now: opts.Now}}, nil
}

// Authenticate implements a2ahttp.Authenticator.
func (j *JWT) Authenticate(r *http.Request) (string, error) {
	p, _, err := j.AuthenticateRights(r)
	return p, err
}

// AuthenticateRights implements a2ahttp.RightsAuthenticator: the
// principal, and the rights of JWTOptions.RightsClaim.
func (j *JWT) AuthenticateRights(r *http.Request) (string, a2a.Rights, error) {
	tok, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok || !LooksLikeJWT(tok) {
		return "", nil, nil
	}
	return j.VerifyRights(r.Context(), tok)
}

// Verify checks a token and returns its principal. Its errors are meant
// for the client: they never hold the token.
func (j *JWT) Verify(ctx context.Context, tok string) (string, error) {
	p, _, err := j.VerifyRights(ctx, tok)
	return p, err
}

// VerifyRights is Verify, with the token's rights (see
// JWTOptions.RightsClaim; nil when it is not set).
func (j *JWT) VerifyRights(ctx context.Context, tok string) (string, a2a.Rights, error) {
	if len(tok) > j.opts.MaxTokenBytes {
		return "", nil, fmt.Errorf("the bearer token is larger than %d bytes", j.opts.MaxTokenBytes)
	}
	t, err := jwt.ParseSigned(tok, j.opts.Algorithms)
	if err != nil {
		return "", nil, refused("not a JWT signed with an accepted algorithm")
	}
	if len(t.Headers) != 1 {
		return "", nil, refused("not a JWT with one signature")
	}
	h := t.Headers[0]
	keys, err := j.keys.Keys(ctx, h.KeyID)
	if err != nil {
		if errors.Is(err, jwks.ErrUnknownKey) {
			return "", nil, refused("signed by an unknown key")
		}
		return "", nil, refused("the issuer's keys are unavailable")
	}
	var claims jwt.Claims
	extra := map[string]any{}
	verified := false
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if t.Claims(k.Key, &claims, &extra) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return "", nil, refused("the signature does not verify")
	}
	p, err := j.principal(&claims, extra)
	if err != nil {
		return "", nil, err
	}
	return p, j.rights(extra), nil
}

// rights reads the rights of a verified token's claims (see
// JWTOptions.RightsClaim): nil without a RightsClaim; otherwise the known
// rights among the claim's values, never nil.
func (j *JWT) rights(extra map[string]any) a2a.Rights {
	if j.opts.RightsClaim == "" {
		return nil
	}
	var scopes []string
	switch v := extra[j.opts.RightsClaim].(type) {
	case string:
		scopes = strings.Fields(v)
	case []any:
		for _, s := range v {
			if s, ok := s.(string); ok {
				scopes = append(scopes, strings.Fields(s)...)
			}
		}
	}
	return a2a.RightsOf(scopes)
}

// principal checks the verified claims and returns the principal.
func (j *JWT) principal(claims *jwt.Claims, extra map[string]any) (string, error) {
	if claims.Expiry == nil {
		return "", refused(`it has no "exp"`)
	}
	exp := jwt.Expected{Issuer: j.opts.Issuer, AnyAudience: jwt.Audience{j.opts.Audience}, Time: j.opts.Now()}
	switch err := claims.ValidateWithLeeway(exp, j.opts.Leeway); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return "", refused("it has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return "", refused("it is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "", refused("it was issued in the future")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "", refused("wrong issuer")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "", refused("wrong audience")
	default:
		return "", refused("invalid claims")
	}
	p, _ := extra[j.opts.PrincipalClaim].(string)
	if p == "" {
		return "", refused(fmt.Sprintf("it has no string claim %q", j.opts.PrincipalClaim))
	}
	return p, nil
}

// refused is a JWT refusal, worded for the client.
func refused(why string) error { return errors.New("the bearer token (JWT) was refused: " + why) }

// BearerToken returns the token of an "Authorization: Bearer TOKEN" value.
func BearerToken(authorization string) (string, bool) {
	scheme, tok, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// LooksLikeJWT reports whether tok has the shape of a JWS compact
// serialization: three base64url parts joined by dots, the header not
// empty (an unsigned "alg": "none" token has an empty third part, and is
// refused by JWT rather than passed on).
func LooksLikeJWT(tok string) bool {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" {
		return false
	}
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
