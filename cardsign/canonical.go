// Package cardsign signs agent cards and verifies their signatures (spec
// §8.4): a JWS (RFC 7515) whose payload is the card without its
// signatures, with the field presence rules of §8.4.1 and in the JSON
// Canonicalization Scheme of RFC 8785. The payload is not stored: the
// signature object holds the protected header and the signature, and a
// verifier recomputes the payload from the card it received.
//
// A verifier chooses what it trusts (keys it holds, or a key set URL it
// names); a "jku" in a signature's header is never followed by itself.
package cardsign

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Canonical returns the bytes a card signature covers (§8.4.1): the card's
// ProtoJSON with presence semantics (fields set to a value, default or not,
// when they track presence; every REQUIRED field, even empty; nothing else),
// without "signatures", canonicalized by RFC 8785 (members sorted by their
// UTF-16 code units, numbers and strings in ECMAScript form, no
// whitespace). a2a.Marshal writes exactly the presence rules; gowebpki/jcs
// does the RFC 8785 step.
func Canonical(card *a2a.AgentCard) ([]byte, error) {
	if card == nil {
		return nil, fmt.Errorf("cardsign: no card")
	}
	c := card
	if len(card.GetSignatures()) > 0 {
		c = proto.Clone(card).(*a2a.AgentCard)
		c.Signatures = nil
	}
	raw, err := a2a.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("cardsign: encoding the card: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("cardsign: canonicalizing the card: %w", err)
	}
	return out, nil
}

// SDKCanonical returns the payload that the official A2A SDKs sign and
// verify (@a2a-js/sdk's canonicalizeAgentCard, and a2a-python's): the
// canonical form with every empty string, empty list and empty object
// removed, recursively (so a REQUIRED "description": "" and a security
// requirement naming a scheme without scopes, {"bearer": {}}, vanish).
// That departs from §8.4.1, which keeps REQUIRED fields and says nothing of
// removing map entries; two cards that differ only in such values have the
// same SDK form, so a signature over it does not protect them.
func SDKCanonical(card *a2a.AgentCard) ([]byte, error) {
	canon, err := Canonical(card)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(canon))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	v, _ = dropEmpty(v)
	if v == nil {
		v = map[string]any{}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cardsign: %w", err)
	}
	return jcs.Transform(raw)
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
