// Package seal encrypts the secrets a store keeps at rest, such as the
// webhook URLs, credentials and tokens of push notification
// configurations, which the spec asks agents to store securely (spec §13.2: "Agents SHOULD securely
// store push notification configurations and credentials").
//
// A Keys value holds one or more 32-byte keys that the operator provides.
// The first key seals; every key opens, so that keys can be rotated: put the
// new key first, keep the old ones after it until every value has been
// sealed again under the new key, then drop them.
//
// A sealed value is a byte string:
//
//	"PSv1" | key id (4 bytes) | nonce (12 bytes) | AES-256-GCM ciphertext and tag
//
// The key id names the key that sealed the value. It is derived from the
// key with HKDF-SHA256, so operators never have to name their keys; the AES
// key is derived the same way under another label, so the id tells nothing
// about it. The four-byte prefix carries the format version and, with the
// key id, is authenticated along with the caller's additional data: a value opens only with the key
// and the additional data it was sealed with, so a store that passes a
// row's identity as additional data gets ciphertexts that cannot be moved
// to another row. Nonces are random; with 96-bit nonces a key should seal
// no more than about 2^32 values, far beyond what a store of push
// configurations writes between rotations.
//
// Keys are given as text (see Parse): each key as standard or URL-safe
// base64 (44 characters, or 43 without padding) or as hex (64 characters).
// NewKey makes a key and Encode writes it in that form.
//
// A Keys value is immutable and safe for concurrent use. Nothing in this
// package writes a key or a plaintext anywhere: errors name keys by their
// id only.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key in bytes.
const KeySize = 32

// The layout of a sealed value.
const (
	prefix     = "PSv1" // format version 1
	idSize     = 4
	nonceSize  = 12
	headerSize = len(prefix) + idSize
	overhead   = headerSize + nonceSize + 16 // 16: the GCM tag
)

// HeaderSize is how many leading bytes of a sealed value name its format
// and its key: two values with equal headers were sealed under the same
// key. A store may group its values by header, for instance to check at
// start-up that every key it needs was given.
const HeaderSize = headerSize

// Errors of Open. Each is wrapped with details (never the key or the
// plaintext); test with errors.Is.
var (
	// ErrFormat means the value is not a sealed value of a version this
	// package reads.
	ErrFormat = errors.New("seal: not a sealed value")
	// ErrUnknownKey means the value was sealed under a key that is not
	// among the keys given.
	ErrUnknownKey = errors.New("seal: sealed under a key that was not given")
	// ErrAuth means the key named by the value did not open it: the value
	// or its additional data was changed, or it was moved from where it
	// was sealed.
	ErrAuth = errors.New("seal: authentication failed (the value was altered or moved)")
)

// Keys is an ordered set of keys: the first seals, all of them open. Make
// one with New or Parse; the zero value holds no key and cannot be used.
type Keys struct {
	keys []key
}

// key is one key as used: its id and its cipher.
type key struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// New returns the keys, in the order given: keys[0] seals new values. Each
// key must be KeySize bytes long, and no key may be given twice. New keeps
// no reference to the slices it is given.
func New(keys ...[]byte) (*Keys, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key given")
	}
	k := &Keys{}
	for i, raw := range keys {
		if len(raw) != KeySize {
			return nil, fmt.Errorf("seal: key %d is %d bytes long, want %d", i+1, len(raw), KeySize)
		}
		kk, err := derive(raw)
		if err != nil {
			return nil, err
		}
		for j, other := range k.keys {
			if other.id == kk.id {
				return nil, fmt.Errorf("seal: keys %d and %d are the same key (id %x)", j+1, i+1, kk.id)
			}
		}
		k.keys = append(k.keys, kk)
	}
	return k, nil
}

// derive makes the AES key and the key id of a key given by the operator.
// Both are derived with HKDF under distinct labels, so the id reveals
// nothing about the AES key and the key given is used for nothing else.
func derive(raw []byte) (key, error) {
	var k key
	aesKey, err := hkdf.Key(sha256.New, raw, nil, "parley seal v1 aes-256-gcm key", 32)
	if err != nil {
		return k, fmt.Errorf("seal: derive key: %w", err)
	}
	id, err := hkdf.Key(sha256.New, raw, nil, "parley seal v1 key id", idSize)
	if err != nil {
		return k, fmt.Errorf("seal: derive key id: %w", err)
	}
	copy(k.id[:], id)
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return k, fmt.Errorf("seal: %w", err)
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return k, fmt.Errorf("seal: %w", err)
	}
	return k, nil
}

// Seal encrypts plaintext under the first key, binding it to ad (which may
// be nil): Open succeeds only with the same ad. The result does not alias
// plaintext or ad.
func (k *Keys) Seal(plaintext, ad []byte) []byte {
	primary := k.keys[0]
	out := make([]byte, headerSize+nonceSize, overhead+len(plaintext))
	copy(out, prefix)
	copy(out[len(prefix):], primary.id[:])
	rand.Read(out[headerSize:]) // never fails (crypto/rand)
	header, nonce := out[:headerSize], out[headerSize:]
	return primary.aead.Seal(out, nonce, plaintext, additional(header, ad))
}

// Open decrypts a value made by Seal with any of the keys, checking that
// it was sealed with the same ad. It returns ErrFormat, ErrUnknownKey or
// ErrAuth (wrapped) when it cannot.
func (k *Keys) Open(sealed, ad []byte) ([]byte, error) {
	id, err := KeyID(sealed)
	if err != nil {
		return nil, err
	}
	if len(sealed) < overhead {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrFormat, len(sealed))
	}
	header, nonce, ct := sealed[:headerSize], sealed[headerSize:headerSize+nonceSize], sealed[headerSize+nonceSize:]
	for _, kk := range k.keys {
		if !bytes.Equal(kk.id[:], header[len(prefix):]) {
			continue
		}
		pt, err := kk.aead.Open(nil, nonce, ct, additional(header, ad))
		if err != nil {
			return nil, fmt.Errorf("%w: key %s", ErrAuth, id)
		}
		return pt, nil
	}
	return nil, fmt.Errorf("%w: the value was sealed under key %s; the keys given are %s",
		ErrUnknownKey, id, strings.Join(k.IDs(), ", "))
}

// additional is the GCM additional data: the value's header (so that its
// version and key id cannot be changed) followed by the caller's ad.
func additional(header, ad []byte) []byte {
	return append(bytes.Clone(header), ad...)
}

// IDs returns the ids of the keys, in hex, the sealing key first.
func (k *Keys) IDs() []string {
	ids := make([]string, len(k.keys))
	for i, kk := range k.keys {
		ids[i] = hex.EncodeToString(kk.id[:])
	}
	return ids
}

// Header returns the first HeaderSize bytes of every value Seal makes now:
// the format version and the id of the first key. A value that starts
// otherwise should be sealed again.
func (k *Keys) Header() []byte {
	return append([]byte(prefix), k.keys[0].id[:]...)
}

// Current reports whether sealed was sealed under the first key, the one
// Seal uses, in the current format: a value that is not current should be
// sealed again.
func (k *Keys) Current(sealed []byte) bool {
	return bytes.HasPrefix(sealed, k.Header())
}

// KeyID returns the id, in hex, of the key a sealed value names, or
// ErrFormat when the value is not a sealed value of a known version. It
// needs no key: the id is not secret.
func KeyID(sealed []byte) (string, error) {
	if len(sealed) < headerSize || string(sealed[:len(prefix)]) != prefix {
		return "", fmt.Errorf("%w: no %q prefix", ErrFormat, prefix)
	}
	return hex.EncodeToString(sealed[len(prefix):headerSize]), nil
}

// NewKey returns a new random key from crypto/rand.
func NewKey() []byte {
	b := make([]byte, KeySize)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// Encode writes a key in the form Parse reads first: standard base64 with
// padding (44 characters).
func Encode(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// Parse reads keys from text such as a key file or an environment
// variable. Keys are separated by newlines, commas or spaces; a '#' starts
// a comment that runs to the end of its line. Each key is KeySize bytes
// written as hex (64 characters) or as standard or URL-safe base64, with
// or without padding. The first key seals. Errors name a key by its
// position, never by its text.
func Parse(text string) (*Keys, error) {
	var raws [][]byte
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n' }) {
			raw, err := decodeKey(f)
			if err != nil {
				return nil, fmt.Errorf("seal: key %d: %w", len(raws)+1, err)
			}
			raws = append(raws, raw)
		}
	}
	if len(raws) == 0 {
		return nil, errors.New("seal: no key in the text")
	}
	return New(raws...)
}

// decodeKey reads one key written as hex or base64.
func decodeKey(s string) ([]byte, error) {
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("decodes to %d bytes, want %d", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("is %d characters of neither hex (64 characters) nor base64 (44 characters) of a %d-byte key", len(s), KeySize)
}
