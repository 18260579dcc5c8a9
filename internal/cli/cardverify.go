package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/internal/jwks"
)

// verifyFlags are the flags of `parley card` that check the card's
// signature.
type verifyFlags struct {
	keyFile       string
	jwksURL       string
	acceptSDKForm bool
}

// addVerifyFlags registers them on fs.
func addVerifyFlags(fs *flag.FlagSet) *verifyFlags {
	v := &verifyFlags{}
	fs.StringVar(&v.keyFile, "verify-key", "", "the card must be signed by a key in `FILE`: a JWKS or a JWK (keys found by their kid), or PEM public keys or certificates (tried on each signature whose algorithm fits)")
	fs.StringVar(&v.jwksURL, "verify-jwks", "", "the card must be signed by a key of the JWKS at this `URL` (one you trust)")
	fs.BoolVar(&v.acceptSDKForm, "accept-sdk-form", false, "also accept a signature over the card without its empty values and the members a v1.0 card does not define (what @a2a-js/sdk and a2a-python sign)")
	return v
}

// verify checks the signatures of card, the card document as received,
// when a trust root was given, and returns the key id that verified (""
// when nothing was asked).
func (v *verifyFlags) verify(ctx context.Context, card []byte) (string, error) {
	if v.keyFile == "" && v.jwksURL == "" {
		return "", nil
	}
	ver := &cardsign.Verifier{AcceptSDKForm: v.acceptSDKForm}
	if v.keyFile != "" {
		b, err := os.ReadFile(v.keyFile)
		if err != nil {
			return "", usageError{fmt.Errorf("--verify-key: %w", err)}
		}
		if ver.Keys, err = cardsign.ParsePublicKeys(b); err != nil {
			return "", usageError{fmt.Errorf("--verify-key %s: %v", v.keyFile, err)}
		}
	}
	if v.jwksURL != "" {
		ver.JWKS = &jwks.Cache{URL: v.jwksURL}
	}
	kid, err := ver.Verify(ctx, card)
	if errors.Is(err, cardsign.ErrUnsigned) {
		return "", errors.New("the agent card is not signed")
	}
	if err != nil {
		return "", fmt.Errorf("the agent card's signature does not verify: %v", err)
	}
	return kid, nil
}

// signatureOutcome is what card get reports of the card's signature
// (A2A CLI SPEC §10.1, A2A §8.4.3): verified with a key given (a signature
// that does not verify fails the command before this), unverifiable when
// the card is signed and no key was given (a jku in the signature is not
// followed: a key the card itself points to proves nothing of the card),
// or absent (signing is optional, spec §8.4: not a failure).
func signatureOutcome(card *a2a.AgentCard, kid string) string {
	switch n := len(card.GetSignatures()); {
	case kid != "":
		return "verified (key " + kid + ")"
	case n > 0:
		return fmt.Sprintf("unverifiable (%d signature(s); no key was given: --verify-key FILE or --verify-jwks URL checks it)", n)
	}
	return "absent"
}

// printSignature shows the signature's outcome as a field.
func (o *output) printSignature(card *a2a.AgentCard, kid string) {
	var b strings.Builder
	o.field(&b, "Signature", signatureOutcome(card, kid))
	o.printf("%s", b.String())
}
