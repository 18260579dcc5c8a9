package cardsign_test

import (
	"context"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/cardsign"
)

// A provider signs its card; a client that trusts the provider's public
// key verifies it, and notices a change made after signing.
func Example() {
	key, _ := cardsign.GenerateKey("ES256")
	signer, _ := cardsign.NewSigner(key, jose.ES256, &cardsign.SignerOptions{KeyID: "2026-12"})
	card := &a2a.AgentCard{Name: "Weather", Description: "Forecasts.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "https://weather.example/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}},
		Capabilities:        &a2a.AgentCapabilities{},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "forecast", Name: "Forecast", Description: "Tomorrow's weather.", Tags: []string{"weather"}}}}
	if err := signer.Sign(card); err != nil {
		panic(err)
	}

	pub, _ := signer.PublicJWK() // what the provider publishes (`parley key jwks`)
	v := &cardsign.Verifier{Keys: []jose.JSONWebKey{pub}}
	kid, err := v.Verify(context.Background(), card)
	fmt.Println(kid, err)

	card.SupportedInterfaces[0].Url = "https://evil.example/a2a"
	_, err = v.Verify(context.Background(), card)
	fmt.Println(err != nil)
	// Output:
	// 2026-12 <nil>
	// true
}

// The payload a signature covers: §8.4.1's presence rules, then RFC 8785.
func ExampleCanonical() {
	no := false
	card := &a2a.AgentCard{Name: "Example Agent", Capabilities: &a2a.AgentCapabilities{Streaming: &no}}
	b, _ := cardsign.Canonical(card)
	fmt.Println(string(b))
	// Output:
	// {"capabilities":{"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],"description":"","name":"Example Agent","skills":[],"supportedInterfaces":[],"version":""}
}
