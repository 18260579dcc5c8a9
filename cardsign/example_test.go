package cardsign_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/cardsign"
)

// A provider signs its card document once it is whole; a client that
// trusts the provider's public key verifies the bytes it received, and
// notices a member added after signing.
func Example() {
	key, _ := cardsign.GenerateKey("ES256")
	signer, _ := cardsign.NewSigner(key, jose.ES256, &cardsign.SignerOptions{KeyID: "2026-12"})
	card := &a2a.AgentCard{Name: "Weather", Description: "Forecasts.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "https://weather.example/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}},
		Capabilities:        &a2a.AgentCapabilities{},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "forecast", Name: "Forecast", Description: "Tomorrow's weather.", Tags: []string{"weather"}}}}
	doc, _ := a2a.Marshal(card)
	served, err := signer.SignJSON(doc) // what the provider serves
	if err != nil {
		panic(err)
	}

	pub, _ := signer.PublicJWK() // what the provider publishes (`parley key jwks`)
	v := &cardsign.Verifier{Keys: []jose.JSONWebKey{pub}}
	kid, err := v.Verify(context.Background(), served)
	fmt.Println(kid, err)

	added := bytes.Replace(served, []byte(`{`), []byte(`{"url":"https://evil.example/a2a",`), 1)
	_, err = v.Verify(context.Background(), added)
	fmt.Println(err != nil)
	// Output:
	// 2026-12 <nil>
	// true
}

// The payload a signature covers: the card document without its
// signatures, in RFC 8785 form.
func ExampleCanonical() {
	b, _ := cardsign.Canonical([]byte(`{"name": "Example Agent", "capabilities": {"streaming": false}, "signatures": []}`))
	fmt.Println(string(b))
	// Output:
	// {"capabilities":{"streaming":false},"name":"Example Agent"}
}
