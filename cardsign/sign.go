package cardsign

import (
	"bytes"
	"crypto"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
)

// Signer signs agent cards with one private key.
type Signer struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm
	kid string
	jku string
}

// SignerOptions configure a Signer.
type SignerOptions struct {
	// KeyID is the protected header's "kid" (default: the key's RFC 7638
	// thumbprint, see KeyID). Verifiers look the key up by it.
	KeyID string
	// JKU, when set, is the protected header's "jku": the URL of a key set
	// holding the public key. A careful verifier does not trust it by
	// itself; it helps one that already trusts that URL.
	JKU string
}

// NewSigner returns a Signer for key, which signs with alg (see
// ParsePrivateKey for the algorithm of each kind of key).
func NewSigner(key crypto.Signer, alg jose.SignatureAlgorithm, opts *SignerOptions) (*Signer, error) {
	s := &Signer{key: key, alg: alg}
	if opts != nil {
		s.kid, s.jku = opts.KeyID, opts.JKU
	}
	if s.kid == "" {
		var err error
		if s.kid, err = KeyID(key.Public()); err != nil {
			return nil, err
		}
	}
	if _, err := s.sign([]byte("{}")); err != nil {
		return nil, err
	}
	return s, nil
}

// KeyID returns the key id the signer puts in its signatures.
func (s *Signer) KeyID() string { return s.kid }

// PublicJWK returns the signer's public key as a JWK with its key id.
func (s *Signer) PublicJWK() (jose.JSONWebKey, error) { return PublicJWK(s.key, s.alg, s.kid) }

// SignJSON signs the card document card (a JSON object, as it will be
// served: every member in place, the v0.3 ones included) and returns it in
// RFC 8785 form with the signatures appended to its "signatures" member
// (signatures it already has stay, and are not covered). Each signature is
// a JWS with a detached payload, Canonical(card), and the protected header
// {"alg", "kid", "typ": "JOSE"}, with "jku" when set (§8.4.2).
//
// When the form the official SDKs verify (SDKCanonical) differs from the
// canonical one, which happens when the card holds an empty value such as
// a security requirement without scopes, or members their card model does
// not define such as the v0.3 ones, a second signature over that form is
// appended, with the same header, so that those SDKs verify the card too;
// a verifier that follows §8.4.1 checks the first.
//
// Sign the document again whenever it changes: a signature covers the
// bytes it was made over and nothing else.
func (s *Signer) SignJSON(card []byte) ([]byte, error) {
	top, err := members(card)
	if err != nil {
		return nil, err
	}
	var sigs []json.RawMessage
	if old, ok := top["signatures"]; ok {
		if err := json.Unmarshal(old, &sigs); err != nil {
			return nil, fmt.Errorf(`cardsign: the card's "signatures" is not a list: %w`, err)
		}
		delete(top, "signatures")
	}
	canon, err := encode(top)
	if err != nil {
		return nil, err
	}
	made, err := s.signatures(canon)
	if err != nil {
		return nil, err
	}
	for _, m := range made {
		b, err := json.Marshal(map[string]string{"protected": m.Protected, "signature": m.Signature})
		if err != nil {
			return nil, fmt.Errorf("cardsign: %w", err)
		}
		sigs = append(sigs, b)
	}
	if top["signatures"], err = json.Marshal(sigs); err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	return encode(top)
}

// Sign appends signatures to card over its encoding (a2a.Marshal), as
// SignJSON does: for a card served as the model encodes it, such as the
// extended card that GetExtendedAgentCard returns. A card document that
// gains members the model does not have (the public card with its v0.3
// members) is signed with SignJSON once it is whole.
func (s *Signer) Sign(card *a2a.AgentCard) error {
	raw, err := a2a.Marshal(card)
	if err != nil {
		return fmt.Errorf("cardsign: encoding the card: %w", err)
	}
	canon, err := Canonical(raw)
	if err != nil {
		return err
	}
	made, err := s.signatures(canon)
	if err != nil {
		return err
	}
	card.Signatures = append(card.Signatures, made...)
	return nil
}

// signatures signs a canonical form, and its SDK form when that differs.
func (s *Signer) signatures(canon []byte) ([]*a2a.AgentCardSignature, error) {
	sig, err := s.sign(canon)
	if err != nil {
		return nil, err
	}
	out := []*a2a.AgentCardSignature{sig}
	if sdk := sdkForm(canon); sdk != nil && !bytes.Equal(canon, sdk) {
		compat, err := s.sign(sdk)
		if err != nil {
			return nil, err
		}
		out = append(out, compat)
	}
	return out, nil
}

// sign makes one detached JWS over payload.
func (s *Signer) sign(payload []byte) (*a2a.AgentCardSignature, error) {
	opts := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("kid", s.kid)
	if s.jku != "" {
		opts = opts.WithHeader("jku", s.jku)
	}
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: s.key}, opts)
	if err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	obj, err := js.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("cardsign: signing: %w", err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("cardsign: unexpected JWS form")
	}
	return &a2a.AgentCardSignature{Protected: parts[0], Signature: parts[2]}, nil
}
