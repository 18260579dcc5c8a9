package cardsign

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

// TestSignJSONCoversTheDocument: a signature covers every member of the
// document it was made over, members the card model does not know among
// them; white space and member order do not matter, a member added, a
// member removed or a value changed after signing fail.
func TestSignJSONCoversTheDocument(t *testing.T) {
	s := newSigner(t, "ES256", &SignerOptions{KeyID: "k"})
	doc := bytes.Replace(doc(t, testCard()), []byte("{"), []byte(`{"url":"https://agent.example/","protocolVersion":"0.3.0",`), 1)
	signed, err := s.SignJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	v := trust(t, s)
	var indented bytes.Buffer
	json.Indent(&indented, signed, "", "\t")
	for name, d := range map[string][]byte{"as signed": signed, "indented": indented.Bytes()} {
		if kid, err := v.Verify(context.Background(), d); err != nil || kid != "k" {
			t.Errorf("%s: Verify = %q, %v", name, kid, err)
		}
	}
	for name, d := range map[string][]byte{
		"member added":   bytes.Replace(signed, []byte(`{"capabilities"`), []byte(`{"added":true,"capabilities"`), 1),
		"member removed": bytes.Replace(signed, []byte(`"protocolVersion":"0.3.0",`), nil, 1),
		"value changed":  bytes.Replace(signed, []byte(`"url":"https://agent.example/"`), []byte(`"url":"https://evil.example/"`), 1),
		"nested added":   bytes.Replace(signed, []byte(`"streaming":true`), []byte(`"streaming":true,"x":null`), 1),
	} {
		if bytes.Equal(d, signed) {
			t.Fatalf("%s: the test's change did not apply to %s", name, signed)
		}
		var e *Error
		if _, err := v.Verify(context.Background(), d); !errors.As(err, &e) || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s: Verify = %v; want a mismatch", name, err)
		}
	}
	// A member repeated is refused: readers would not agree on its value.
	dup := bytes.Replace(signed, []byte(`{"capabilities"`), []byte(`{"name":"Other","capabilities"`), 1)
	if _, err := v.Verify(context.Background(), dup); err == nil || !strings.Contains(err.Error(), "RFC 8785") {
		t.Errorf("repeated member: %v", err)
	}
	for _, d := range []string{`[]`, `null`, `{"a":1} {}`, ``} {
		if _, err := v.Verify(context.Background(), []byte(d)); err == nil || errors.Is(err, ErrUnsigned) {
			t.Errorf("%q: %v; want it refused as not a JSON object", d, err)
		}
	}
	if _, err := v.Verify(context.Background(), []byte(`{"name":"x","signatures":[]}`)); !errors.Is(err, ErrUnsigned) {
		t.Errorf("empty signatures: %v", err)
	}
}

// TestSignJSONAppends: signing a signed document keeps its signatures and
// adds the new one; each verifies with its own key.
func TestSignJSONAppends(t *testing.T) {
	a, b := newSigner(t, "ES256", &SignerOptions{KeyID: "a"}), newSigner(t, "EdDSA", &SignerOptions{KeyID: "b"})
	once, err := a.SignJSON(doc(t, testCard()))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := b.SignJSON(once)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Signatures []json.RawMessage }
	json.Unmarshal(twice, &got)
	if len(got.Signatures) != 2 {
		t.Fatalf("%d signatures; want 2", len(got.Signatures))
	}
	for _, s := range []*Signer{a, b} {
		if kid, err := trust(t, s).Verify(context.Background(), twice); err != nil || kid != s.KeyID() {
			t.Errorf("%s: Verify = %q, %v", s.KeyID(), kid, err)
		}
	}
	// The model's encoding and the document agree: Sign is SignJSON on
	// a2a.Marshal.
	card := testCard()
	a.Sign(card)
	if err := trust(t, a).VerifyCard(context.Background(), card); err != nil {
		t.Fatal(err)
	}
	if _, err := trust(t, a).Verify(context.Background(), doc(t, card)); err != nil {
		t.Fatal(err)
	}
}

// TestKeyWithoutKeyID: a PEM public key has no key id; it verifies a
// signature whatever its kid when its algorithm fits, and is not tried
// on another algorithm's.
func TestKeyWithoutKeyID(t *testing.T) {
	s := newSigner(t, "ES256", &SignerOptions{KeyID: "card-1"})
	der, err := x509.MarshalPKIXPublicKey(s.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParsePublicKeys(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil || len(keys) != 1 || keys[0].KeyID != "" {
		t.Fatalf("ParsePublicKeys = %v, %v; want one key without a key id", keys, err)
	}
	signed, _ := s.SignJSON(doc(t, testCard()))
	v := &Verifier{Keys: keys}
	if kid, err := v.Verify(context.Background(), signed); err != nil || kid != "card-1" {
		t.Fatalf("PEM key: Verify = %q, %v", kid, err)
	}
	ed := newSigner(t, "EdDSA", &SignerOptions{KeyID: "card-1"})
	other, _ := ed.SignJSON(doc(t, testCard()))
	if _, err := v.Verify(context.Background(), other); err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("an EdDSA signature with a P-256 key: %v; want no key fitting", err)
	}
	rsaSigner := newSigner(t, "RS256", nil)
	rsaSigned, _ := rsaSigner.SignJSON(doc(t, testCard()))
	pub, _ := rsaSigner.PublicJWK()
	pub.KeyID, pub.Algorithm = "", ""
	if _, err := (&Verifier{Keys: append(keys, pub)}).Verify(context.Background(), rsaSigned); err != nil {
		t.Errorf("RSA JWK without kid or alg: %v", err)
	}
}

// TestSignaturesMalformed: a signature object that is not one is a reason,
// and the others are still tried.
func TestSignaturesMalformed(t *testing.T) {
	s := newSigner(t, "ES256", &SignerOptions{KeyID: "k"})
	signed, _ := s.SignJSON(doc(t, testCard()))
	bad := bytes.Replace(signed, []byte(`"signatures":[`), []byte(`"signatures":[null,7,{"protected":1},{"protected":"","signature":"","header":[]},`), 1)
	if kid, err := trust(t, s).Verify(context.Background(), bad); err != nil || kid != "k" {
		t.Fatalf("Verify = %q, %v", kid, err)
	}
	only := []byte(`{"name":"x","signatures":[null,{"protected":"e30","signature":"","header":"h"}]}`)
	var e *Error
	if _, err := trust(t, s).Verify(context.Background(), only); !errors.As(err, &e) || len(e.Reasons) != 2 {
		t.Fatalf("Verify = %v; want two reasons", err)
	}
	if _, err := trust(t, s).Verify(context.Background(), []byte(`{"signatures":{}}`)); err == nil || !strings.Contains(err.Error(), "not a list") {
		t.Errorf("signatures an object: %v", err)
	}
}

// TestSDKFormOfAWholeDocument: a document with members the card model
// does not define gets a second signature over the SDKs' form, which
// leaves them out; a strict verifier refuses such a member added after
// signing, AcceptSDKForm lets it through (that form does not protect it)
// but still refuses a changed card member.
func TestSDKFormOfAWholeDocument(t *testing.T) {
	s := newSigner(t, "ES256", &SignerOptions{KeyID: "k"})
	signed, err := s.SignJSON(bytes.Replace(doc(t, testCard()), []byte("{"), []byte(`{"protocolVersion":"0.3.0",`), 1))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Signatures []json.RawMessage }
	json.Unmarshal(signed, &got)
	if len(got.Signatures) != 2 {
		t.Fatalf("%d signatures; want 2 (canonical and SDK forms)", len(got.Signatures))
	}
	added := bytes.Replace(signed, []byte(`"protocolVersion":"0.3.0"`), []byte(`"protocolVersion":"0.3.0","url":"https://evil.example/"`), 1)
	changed := bytes.Replace(signed, []byte(`"name":"Signed agent"`), []byte(`"name":"Other agent"`), 1)
	strict, lenient := trust(t, s), trust(t, s)
	lenient.AcceptSDKForm = true
	if _, err := strict.Verify(context.Background(), added); err == nil || !strings.Contains(err.Error(), "members their card model does not define") {
		t.Errorf("strict, member added: %v; want the SDK-form explanation", err)
	}
	if _, err := lenient.Verify(context.Background(), added); err != nil {
		t.Errorf("AcceptSDKForm, member outside the model added: %v", err)
	}
	if _, err := lenient.Verify(context.Background(), changed); err == nil {
		t.Error("AcceptSDKForm, card member changed: verified")
	}
}
