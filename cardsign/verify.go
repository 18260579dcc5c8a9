package cardsign

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jwks"
)

// JWKS is a cached JSON Web Key Set (RFC 7517) fetched from URL, or from the
// key set an OpenID Connect Issuer's discovery document names; it is
// fetched again on an unknown key id (at most every 30 s) and every 5
// minutes. Verifier.JWKS trusts the keys it holds.
type JWKS = jwks.Cache

// ErrUnsigned is Verify's error for a card without signatures.
var ErrUnsigned = errors.New("cardsign: the card has no signatures")

// Verifier checks card signatures against the keys its user trusts.
type Verifier struct {
	// Keys are trusted public keys, found by their key id.
	Keys []jose.JSONWebKey
	// JWKS, when set, is a trusted key set (fetched from a URL the caller
	// chose, refreshed when a signature names a key id it does not hold).
	JWKS *JWKS
	// Algorithms are the accepted "alg" values (default Algorithms).
	Algorithms []jose.SignatureAlgorithm
	// AcceptSDKForm also accepts a signature over SDKCanonical, the form
	// the official SDKs sign, which covers neither empty values nor the
	// members a v1.0 card does not define (see there). Off by default.
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

// VerifyCardJSON implements client.CardVerifier: it returns nil when at
// least one signature of the card document card, the JSON bytes as
// received, verifies (§8.4.3). See Verify.
func (v *Verifier) VerifyCardJSON(ctx context.Context, card []byte) error {
	_, err := v.Verify(ctx, card)
	return err
}

// VerifyCard verifies a card that arrived as a message rather than as a
// JSON document (over gRPC, say): its encoding (a2a.Marshal) is the
// document verified. Members the model does not hold are not seen, so
// verify a card received as JSON with Verify, on the bytes received.
func (v *Verifier) VerifyCard(ctx context.Context, card *a2a.AgentCard) error {
	raw, err := a2a.Marshal(card)
	if err != nil {
		return fmt.Errorf("cardsign: encoding the card: %w", err)
	}
	_, err = v.Verify(ctx, raw)
	return err
}

// Verify checks the signatures of the card document card, the JSON bytes
// as received, in order, and returns the key id of the first that
// verifies. The payload is the document's canonical form without its
// "signatures" member (Canonical), so a member added after signing, or a
// value changed, fails every signature. A signature verifies when its
// algorithm is accepted, a trusted key fits it (one with its "kid", or
// one without a key id whose algorithm fits; a "jku" in the header is not
// followed: only Keys and JWKS are trusted) and the signature is valid
// over the payload. The error is ErrUnsigned, an *Error, or one saying
// the document is not a JSON object.
func (v *Verifier) Verify(ctx context.Context, card []byte) (string, error) {
	top, err := members(card)
	if err != nil {
		return "", err
	}
	var sigs []json.RawMessage
	if raw, ok := top["signatures"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &sigs); err != nil {
			return "", fmt.Errorf(`cardsign: the card's "signatures" is not a list: %w`, err)
		}
	}
	if len(sigs) == 0 {
		return "", ErrUnsigned
	}
	delete(top, "signatures")
	canon, err := encode(top)
	if err != nil {
		return "", err
	}
	sdk := sdkForm(canon)
	e := &Error{}
	for i, raw := range sigs {
		kid, err := v.verifyOne(ctx, raw, canon, sdk)
		if err == nil {
			return kid, nil
		}
		e.Reasons = append(e.Reasons, fmt.Sprintf("signature %d: %v", i+1, err))
	}
	return "", e
}

// signature is one member of a card's "signatures" (§8.4.2).
type signature struct {
	protected, signature string
	header               json.RawMessage // the unprotected header, nil when absent
}

// parseSignature reads one signature object, its member names exactly.
func parseSignature(raw json.RawMessage) (*signature, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	s := &signature{}
	if json.Unmarshal(m["protected"], &s.protected) != nil {
		return nil, errors.New(`"protected" is missing or not a string`)
	}
	if json.Unmarshal(m["signature"], &s.signature) != nil {
		return nil, errors.New(`"signature" is missing or not a string`)
	}
	if h, ok := m["header"]; ok {
		if len(h) == 0 || h[0] != '{' {
			return nil, errors.New(`"header" is not a JSON object`)
		}
		s.header = h
	}
	return s, nil
}

// verifyOne checks one signature against the payloads.
func (v *Verifier) verifyOne(ctx context.Context, raw json.RawMessage, canon, sdk []byte) (string, error) {
	s, err := parseSignature(raw)
	if err != nil {
		return "", err
	}
	h, err := parseHeader(s.protected)
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
	if check(s, canon, keys, algs) == nil {
		return h.Kid, nil
	}
	sdkOK := sdk != nil && check(s, sdk, keys, algs) == nil
	switch {
	case sdkOK && v.AcceptSDKForm:
		return h.Kid, nil
	case sdkOK:
		return "", errors.New("the signature does not match the card's canonical form (§8.4.1), only the card with its empty values removed " +
			"(the form the official SDKs sign, which protects neither empty values nor members their card model does not define): the card was " +
			"signed by such an SDK, or such a value or member was added or removed after signing (accept that form with AcceptSDKForm / --accept-sdk-form)")
	}
	return "", fmt.Errorf("the signature with key %q does not match the card (changed after signing, or signed by another key)", h.Kid)
}

// check verifies a detached JWS over payload with any of keys.
func check(s *signature, payload []byte, keys []jose.JSONWebKey, algs []jose.SignatureAlgorithm) error {
	flat := map[string]any{
		"protected": s.protected,
		"payload":   base64.RawURLEncoding.EncodeToString(payload),
		"signature": s.signature,
	}
	if s.header != nil {
		flat["header"] = s.header
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

// keys returns the trusted keys that may have made a signature with
// header h: those with its key id, and those without a key id (a PEM key,
// say) whose algorithm fits.
func (v *Verifier) keys(ctx context.Context, h *header) ([]jose.JSONWebKey, error) {
	var out []jose.JSONWebKey
	for _, k := range v.Keys {
		if (k.KeyID == h.Kid || k.KeyID == "") && fits(k, h.Alg) {
			out = append(out, k)
		}
	}
	if v.JWKS != nil {
		ks, err := v.JWKS.Keys(ctx, h.Kid)
		if err != nil && !errors.Is(err, jwks.ErrUnknownKey) {
			return nil, fmt.Errorf("trusted key set: %w", err)
		}
		for _, k := range ks {
			if fits(k, h.Alg) {
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("key %q is not trusted (no trusted key with that key id, or without a key id, fits %s)", h.Kid, h.Alg)
		if h.JKU != "" {
			msg += fmt.Sprintf(" (the header's jku %s is not followed: give the keys or a key set URL you trust)", h.JKU)
		}
		return nil, errors.New(msg)
	}
	return out, nil
}

// fits reports whether key k signs with alg: its "alg" when it names one,
// else what its kind of key signs with (ES256, ES384, ES512 by curve;
// EdDSA for Ed25519; the RS and PS algorithms for RSA).
func fits(k jose.JSONWebKey, alg string) bool {
	if k.Algorithm != "" {
		return k.Algorithm == alg
	}
	switch pub := k.Public().Key.(type) {
	case *ecdsa.PublicKey:
		switch pub.Curve {
		case elliptic.P256():
			return alg == string(jose.ES256)
		case elliptic.P384():
			return alg == string(jose.ES384)
		case elliptic.P521():
			return alg == string(jose.ES512)
		}
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	}
	return false
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
