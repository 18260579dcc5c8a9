package cardsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// Algorithms are the JWS algorithms Parley signs with and, by default,
// accepts: asymmetric ones only. "none" and the HMAC algorithms are never
// accepted (a verifier holding a public key must not be tricked into using
// it as an HMAC secret).
var Algorithms = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
}

// GenerateKey makes a new private key for alg: ES256 (EC P-256), EdDSA
// (Ed25519) or RS256 (RSA 3072).
func GenerateKey(alg string) (crypto.Signer, error) {
	switch jose.SignatureAlgorithm(alg) {
	case jose.ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	case jose.RS256:
		return rsa.GenerateKey(rand.Reader, 3072)
	}
	return nil, fmt.Errorf("cardsign: algorithm %q: want ES256, EdDSA or RS256", alg)
}

// EncodePrivateKey returns key as a PKCS #8 "PRIVATE KEY" PEM block.
func EncodePrivateKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads the first private key in PEM text (PKCS #8, or the
// older "EC PRIVATE KEY" and "RSA PRIVATE KEY" forms) and returns it with
// the algorithm it signs with: ES256 for P-256, ES384 for P-384, ES512 for
// P-521, EdDSA for Ed25519, RS256 for RSA (at least 2048 bits).
func ParsePrivateKey(pemText []byte) (crypto.Signer, jose.SignatureAlgorithm, error) {
	for rest := pemText; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, "", errors.New("no PEM private key found")
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return signerAlg(k)
	}
}

// signerAlg returns the signer and algorithm of a parsed private key.
func signerAlg(k any) (crypto.Signer, jose.SignatureAlgorithm, error) {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return k, jose.ES256, nil
		case elliptic.P384():
			return k, jose.ES384, nil
		case elliptic.P521():
			return k, jose.ES512, nil
		}
		return nil, "", fmt.Errorf("EC key on an unsupported curve %s", k.Curve.Params().Name)
	case ed25519.PrivateKey:
		return k, jose.EdDSA, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, "", fmt.Errorf("RSA key of %d bits: at least 2048 are needed", k.N.BitLen())
		}
		return k, jose.RS256, nil
	}
	return nil, "", fmt.Errorf("unsupported private key type %T", k)
}

// PublicJWK is the public half of key as a JWK with the key id kid (when
// "", the RFC 7638 thumbprint, see KeyID), "use": "sig" and "alg".
func PublicJWK(key crypto.Signer, alg jose.SignatureAlgorithm, kid string) (jose.JSONWebKey, error) {
	jwk := jose.JSONWebKey{Key: key.Public(), Algorithm: string(alg), Use: "sig"}
	if !jwk.Valid() {
		return jose.JSONWebKey{}, fmt.Errorf("cardsign: unsupported public key %T", key.Public())
	}
	if kid == "" {
		var err error
		if kid, err = KeyID(key.Public()); err != nil {
			return jose.JSONWebKey{}, err
		}
	}
	jwk.KeyID = kid
	return jwk, nil
}

// KeyID is the default key id of a public key: its RFC 7638 JWK
// thumbprint (SHA-256), base64url without padding.
func KeyID(pub crypto.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("cardsign: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// ParsePublicKeys reads trusted public keys: a JWKS document ({"keys":
// [...]}), one JWK, or PEM text holding public keys ("PUBLIC KEY"),
// certificates or private keys (their public half). PEM keys have no key
// id, nor has a JWK without "kid": a Verifier tries such a key on every
// signature whose algorithm fits it.
func ParsePublicKeys(text []byte) ([]jose.JSONWebKey, error) {
	if t := trimSpace(text); len(t) > 0 && t[0] == '{' {
		return parseJWKText(t)
	}
	var keys []jose.JSONWebKey
	for rest := text; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		var pub crypto.PublicKey
		switch b.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, err
			}
			pub = k
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, err
			}
			pub = c.PublicKey
		case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
			k, _, err := ParsePrivateKey(pem.EncodeToMemory(b))
			if err != nil {
				return nil, err
			}
			pub = k.Public()
		default:
			continue
		}
		if !(&jose.JSONWebKey{Key: pub}).Valid() {
			return nil, fmt.Errorf("unsupported public key %T", pub)
		}
		keys = append(keys, jose.JSONWebKey{Key: pub})
	}
	if len(keys) == 0 {
		return nil, errors.New("no public key found (want a JWKS, a JWK or PEM)")
	}
	return keys, nil
}

// parseJWKText reads a JWKS or a single JWK, public keys only.
func parseJWKText(t []byte) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(t, &set); err != nil || len(set.Keys) == 0 {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(t); err != nil {
			return nil, fmt.Errorf("not a JWKS or a JWK: %w", err)
		}
		set.Keys = []jose.JSONWebKey{k}
	}
	for i, k := range set.Keys {
		if _, symmetric := k.Key.([]byte); symmetric || !k.Valid() {
			return nil, fmt.Errorf("key %d is not a valid asymmetric key", i)
		}
		if !k.IsPublic() {
			set.Keys[i] = k.Public()
		}
	}
	return set.Keys, nil
}

// trimSpace trims ASCII white space.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
