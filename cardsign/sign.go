package cardsign

import (
	"bytes"
	"crypto"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
)

// Signer adds signatures to agent cards with one private key.
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

// Sign appends a signature to card over its canonical form (Canonical),
// with the protected header {"alg", "kid", "typ": "JOSE"} and "jku" when
// set (§8.4.2). Signatures already on the card stay and are not covered.
//
// When the form the official SDKs verify (SDKCanonical) differs from the
// canonical one, which happens when the card holds an empty value such as
// a security requirement without scopes, a second signature over that form
// is appended, with the same header, so that those SDKs verify the card
// too; a verifier that follows §8.4.1 checks the first.
func (s *Signer) Sign(card *a2a.AgentCard) error {
	canon, err := Canonical(card)
	if err != nil {
		return err
	}
	sdk, err := SDKCanonical(card)
	if err != nil {
		return err
	}
	sig, err := s.sign(canon)
	if err != nil {
		return err
	}
	sigs := []*a2a.AgentCardSignature{sig}
	if !bytes.Equal(canon, sdk) {
		compat, err := s.sign(sdk)
		if err != nil {
			return err
		}
		sigs = append(sigs, compat)
	}
	card.Signatures = append(card.Signatures, sigs...)
	return nil
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
