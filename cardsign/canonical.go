// Package cardsign signs agent cards and verifies their signatures (A2A
// §8.4): a JWS (RFC 7515) with a detached payload, the card's JSON object
// without its "signatures" member in the JSON Canonicalization Scheme of
// RFC 8785. The payload is not stored: a signature object holds the
// protected header and the signature, and a verifier recomputes the payload
// from the card document it received, byte for byte as received, so any
// member added or changed after signing, one a card model would drop among
// them, makes the signature fail.
//
// A verifier chooses what it trusts (keys it holds, or a key set URL it
// names); a "jku" in a signature's header is never followed by itself.
package cardsign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"

	"parley.dev/parley/a2a"
)

// errNotObject is Canonical's error for a document that is not a JSON
// object.
var errNotObject = errors.New("cardsign: the card is not a JSON object")

// Canonical returns the bytes a signature of the card document card covers
// (§8.4.1): the JSON object without its top-level "signatures" member, in
// RFC 8785 form (members sorted by their UTF-16 code units, numbers and
// strings in ECMAScript form, no whitespace). The document is taken as it
// is: whatever members it has are covered, unknown ones too. A document
// that is not one JSON object, or that repeats a member name (which RFC
// 8785 forbids, and which readers resolve differently), is refused.
//
// §8.4.1's presence rules (optional fields present when set, REQUIRED ones
// always) are the encoder's business: a2a.Marshal writes them.
func Canonical(card []byte) ([]byte, error) {
	top, err := members(card)
	if err != nil {
		return nil, err
	}
	delete(top, "signatures")
	return encode(top)
}

// members parses a card document into its top-level members, checking it
// is a single JSON object without repeated names.
func members(card []byte) (map[string]json.RawMessage, error) {
	// jcs.Transform refuses invalid JSON, trailing data and repeated
	// member names at any depth.
	canon, err := jcs.Transform(card)
	if err != nil {
		return nil, fmt.Errorf("cardsign: the card is not valid JSON for RFC 8785: %w", err)
	}
	if len(canon) == 0 || canon[0] != '{' {
		return nil, errNotObject
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(canon, &top); err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	return top, nil
}

// encode writes members as an RFC 8785 JSON object.
func encode(top map[string]json.RawMessage) ([]byte, error) {
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	return jcs.Transform(raw)
}

// SDKCanonical returns the payload that the official A2A SDKs sign and
// verify (@a2a-js/sdk's canonicalizeAgentCard, and a2a-python's): the card
// as their AgentCard model reads it, so without the members a v1.0 card
// does not define (the v0.3 ones, say), in canonical form with every empty
// string, empty list and empty object removed, recursively (so a REQUIRED
// "description": "" and a security requirement naming a scheme without
// scopes, {"bearer": {}}, vanish). That departs from §8.4.1, which keeps
// REQUIRED fields and covers the card as served; two cards that differ
// only in such members or values have the same SDK form, so a signature
// over it does not protect them. It is nil for a document that is not an
// agent card.
func SDKCanonical(card []byte) ([]byte, error) {
	canon, err := Canonical(card)
	if err != nil {
		return nil, err
	}
	return sdkForm(canon), nil
}

// sdkForm is the SDK form of a canonical form (nil when the document is
// not an agent card): read as the card model, encoded, empty values
// removed.
func sdkForm(canon []byte) []byte {
	card := &a2a.AgentCard{}
	if a2a.Unmarshal(canon, card) != nil {
		return nil
	}
	model, err := a2a.Marshal(card)
	if err != nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(model))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	v, _ = dropEmpty(v)
	if v == nil {
		v = map[string]any{}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil
	}
	return out
}

// dropEmpty removes empty strings, lists and objects from v, recursively;
// it reports false when v itself is empty.
func dropEmpty(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, x != ""
	case []any:
		out := x[:0]
		for _, e := range x {
			if e, ok := dropEmpty(e); ok {
				out = append(out, e)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		for k, e := range x {
			if e, ok := dropEmpty(e); ok {
				x[k] = e
			} else {
				delete(x, k)
			}
		}
		return x, len(x) > 0
	}
	return v, true
}
