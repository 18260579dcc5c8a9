package protocard_test

import (
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"parley.dev/parley/internal/interop/gosdk/protocard"
)

// cardWith is a minimal v1.0 card with the given securityRequirements,
// for the card and for its one skill.
func cardWith(cardReqs, skillReqs string) string {
	return `{"name":"a","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"capabilities":{},"supportedInterfaces":[{"url":"http://127.0.0.1:1/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}},"oauth":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://example.com/token","scopes":{"read":"r","write":"w"}}}}}},` +
		`"securityRequirements":` + cardReqs + `,` +
		`"skills":[{"id":"s","name":"s","description":"d","tags":["t"],"securityRequirements":` + skillReqs + `}]}`
}

// TestParseCard: every shape of scopes the proto allows is read, for the
// card and for a skill, where the SDK's own parser refuses them.
func TestParseCard(t *testing.T) {
	for _, tc := range []struct {
		name             string
		card             string
		cardReqs, skills []map[string][]string // want, scopes by scheme
	}{
		{"no scopes", cardWith(`[{"schemes":{"bearer":{}}}]`, `[{"schemes":{"bearer":{}}}]`),
			[]map[string][]string{{"bearer": {}}}, []map[string][]string{{"bearer": {}}}},
		{"scopes", cardWith(`[{"schemes":{"oauth":{"list":["read","write"]}}},{"schemes":{"bearer":{"list":[]}}}]`, `[{"schemes":{"oauth":{"list":["read"]},"bearer":{}}}]`),
			[]map[string][]string{{"oauth": {"read", "write"}}, {"bearer": {}}}, []map[string][]string{{"oauth": {"read"}, "bearer": {}}}},
		{"anonymous too", cardWith(`[{"schemes":{"bearer":{}}},{}]`, `[]`),
			[]map[string][]string{{"bearer": {}}, {}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := agentcard.DefaultCardParser([]byte(tc.card)); err == nil {
				t.Errorf("the SDK's own parser reads %s: ParseCard may no longer be needed", tc.card)
			}
			card, err := protocard.ParseCard([]byte(tc.card))
			if err != nil {
				t.Fatalf("ParseCard = %v", err)
			}
			if got := scopes(card.SecurityRequirements); !equal(got, tc.cardReqs) {
				t.Errorf("card securityRequirements = %v, want %v", got, tc.cardReqs)
			}
			if got := scopes(card.Skills[0].SecurityRequirements); !equal(got, tc.skills) {
				t.Errorf("skill securityRequirements = %v, want %v", got, tc.skills)
			}
		})
	}
}

// scopes is reqs as plain maps.
func scopes(reqs a2a.SecurityRequirementsOptions) []map[string][]string {
	var out []map[string][]string
	for _, r := range reqs {
		m := map[string][]string{}
		for name, s := range r {
			m[string(name)] = append([]string{}, s...)
		}
		out = append(out, m)
	}
	return out
}

func equal(a, b []map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for k, v := range a[i] {
			w, ok := b[i][k]
			if !ok || strings.Join(v, " ") != strings.Join(w, " ") {
				return false
			}
		}
	}
	return true
}

// TestDocumented: docs/interoperability.md shows ParseCard and its helper
// as this package has them, so that what users copy is what is tested.
func TestDocumented(t *testing.T) {
	src, err := os.ReadFile("protocard.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../../docs/interoperability.md")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src[strings.Index(string(src), "// ParseCard is"):])
	if !strings.Contains(string(doc), code) {
		t.Errorf("docs/interoperability.md does not show protocard.go from ParseCard on, as it is:\n%s", code)
	}
}

// FuzzParseCard: no card, however malformed, makes ParseCard panic.
func FuzzParseCard(f *testing.F) {
	f.Add([]byte(cardWith(`[{"schemes":{"bearer":{}}}]`, `[]`)))
	f.Add([]byte(`{"securityRequirements":[1,{"schemes":[]},{"schemes":{"x":{"list":7}}}],"skills":[{"securityRequirements":{}}]}`))
	f.Add([]byte(`[{"securityRequirements":[null]}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		protocard.ParseCard(body)
	})
}
