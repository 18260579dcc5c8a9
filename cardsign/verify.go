package cardsign

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"google.golang.org/protobuf/encoding/protojson"

	"parley.dev/parley/a2a"
	"parley.dev/parley/jwks"
)

// ErrUnsigned is Verify's error for a card without signatures.
var ErrUnsigned = errors.New("cardsign: the card has no signatures")

// Verifier checks card signatures against the keys its user trusts.
type Verifier struct {
	// Keys are trusted public keys, found by their key id.
	Keys []jose.JSONWebKey
	// JWKS, when set, is a trusted key set (fetched from a URL the caller
	// chose, refreshed when a signature names a key id it does not hold).
	JWKS *jwks.Cache
	// Algorithms are the accepted "alg" values (default Algorithms).
	Algorithms []jose.SignatureAlgorithm
	// AcceptSDKForm also accepts a signature over SDKCanonical, the form
	// the official SDKs sign, which does not cover empty values (see
	// there). Off by default.
	AcceptSDKForm bool
}

// Error lists why each signature of a card did not verify.
type Error struct {
	// Reasons has one entry per signature, in order.
	Reasons []string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return "cardsign: no signature verifies: " + strings.Join(e.Reasons, "; ")
}

// header is the part of a protected JWS header Verify reads.
type header struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ"`
	JKU  string   `json:"jku"`
	Crit []string `json:"crit"`
}

// VerifyCard implements client.CardVerifier: it returns nil when at least
// one signature of card verifies (§8.4.3).
func (v *Verifier) VerifyCard(ctx context.Context, card *a2a.AgentCard) error {
	_, err := v.Verify(ctx, card)
	return err
}

// Verify checks the signatures of card in order and returns the key id of
// the first that verifies. A signature verifies when its algorithm is
// accepted, its "kid" names a trusted key (a "jku" in the header is not
// followed: only Keys and JWKS are trusted) and the signature is valid
// over the card's canonical form. The error is ErrUnsigned or an *Error.
func (v *Verifier) Verify(ctx context.Context, card *a2a.AgentCard) (string, error) {
	sigs := card.GetSignatures()
	if len(sigs) == 0 {
		return "", ErrUnsigned
	}
	canon, err := Canonical(card)
	if err != nil {
		return "", err
	}
	sdk, err := SDKCanonical(card)
	if err != nil {
		return "", err
	}
	e := &Error{}
	for i, s := range sigs {
		kid, err := v.verifyOne(ctx, s, canon, sdk)
		if err == nil {
			return kid, nil
		}
		e.Reasons = append(e.Reasons, fmt.Sprintf("signature %d: %v", i+1, err))
	}
	return "", e
}

// verifyOne checks one signature against the payloads.
func (v *Verifier) verifyOne(ctx context.Context, s *a2a.AgentCardSignature, canon, sdk []byte) (string, error) {
	h, err := parseHeader(s.GetProtected())
	if err != nil {
		return "", err
	}
	algs := v.Algorithms
	if len(algs) == 0 {
		algs = Algorithms
	}
	if !slices.Contains(algs, jose.SignatureAlgorithm(h.Alg)) {
		return "", fmt.Errorf("algorithm %q is not accepted", h.Alg)
	}
	if h.Kid == "" {
		return "", errors.New(`the protected header has no "kid" (§8.4.2)`)
	}
	keys, err := v.keys(ctx, h)
	if err != nil {
		return "", err
	}
	unprotected := ""
	if s.GetHeader() != nil {
		b, err := protojson.Marshal(s.GetHeader())
		if err != nil {
			return "", err
		}
		unprotected = string(b)
	}
	if check(s, unprotected, canon, keys, algs) == nil {
		return h.Kid, nil
	}
	sdkOK := check(s, unprotected, sdk, keys, algs) == nil
	switch {
	case sdkOK && v.AcceptSDKForm:
		return h.Kid, nil
	case sdkOK:
		return "", errors.New("the signature does not match the card's canonical form (§8.4.1), only the card with its empty values removed " +
			"(the form the official SDKs sign, which does not protect empty values): the card was signed by such an SDK, or an empty value " +
			"was added or removed after signing (accept that form with AcceptSDKForm / --accept-sdk-form)")
	}
	return "", fmt.Errorf("the signature with key %q does not match the card (changed after signing, or signed by another key)", h.Kid)
}

// check verifies a detached JWS over payload with any of keys.
func check(s *a2a.AgentCardSignature, unprotected string, payload []byte, keys []jose.JSONWebKey, algs []jose.SignatureAlgorithm) error {
	flat := map[string]any{
		"protected": s.GetProtected(),
		"payload":   base64.RawURLEncoding.EncodeToString(payload),
		"signature": s.GetSignature(),
	}
	if unprotected != "" {
		flat["header"] = json.RawMessage(unprotected)
	}
	raw, err := json.Marshal(flat)
	if err != nil {
		return err
	}
	obj, err := jose.ParseSignedJSON(string(raw), algs)
	if err != nil {
		return err
	}
	err = errors.New("no key")
	for _, k := range keys {
		if _, err = obj.Verify(k.Key); err == nil {
			return nil
		}
	}
	return err
}

// keys returns the trusted keys with the header's key id.
func (v *Verifier) keys(ctx context.Context, h *header) ([]jose.JSONWebKey, error) {
	var out []jose.JSONWebKey
	for _, k := range v.Keys {
		if k.KeyID == h.Kid && (k.Algorithm == "" || k.Algorithm == h.Alg) {
			out = append(out, k)
		}
	}
	if v.JWKS != nil {
		ks, err := v.JWKS.Keys(ctx, h.Kid)
		if err != nil && !errors.Is(err, jwks.ErrUnknownKey) {
			return nil, fmt.Errorf("trusted key set: %w", err)
		}
		for _, k := range ks {
			if k.Algorithm == "" || k.Algorithm == h.Alg {
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("key %q is not trusted", h.Kid)
		if h.JKU != "" {
			msg += fmt.Sprintf(" (the header's jku %s is not followed: give the keys or a key set URL you trust)", h.JKU)
		}
		return nil, errors.New(msg)
	}
	return out, nil
}

// parseHeader decodes a base64url protected header.
func parseHeader(protected string) (*header, error) {
	raw, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		return nil, fmt.Errorf("the protected header is not base64url: %w", err)
	}
	h := &header{}
	if err := json.Unmarshal(raw, h); err != nil {
		return nil, fmt.Errorf("the protected header is not a JSON object: %w", err)
	}
	return h, nil
}
