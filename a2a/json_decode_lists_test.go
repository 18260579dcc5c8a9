package a2a

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestUnmarshalBareScopes: a SecurityRequirement's scopes are read both in
// the proto shape and as a bare array (the official Go SDK's shape), on the
// card and on a skill, and are always written in the proto shape.
func TestUnmarshalBareScopes(t *testing.T) {
	t.Parallel()
	want := []*SecurityRequirement{
		{Schemes: map[string]*StringList{"bearer": {}, "oauth": {List: []string{"read", "write"}}}},
	}
	for _, c := range []struct{ name, reqs string }{
		{"proto shape", `[{"schemes":{"bearer":{"list":[]},"oauth":{"list":["read","write"]}}}]`},
		{"bare arrays", `[{"schemes":{"bearer":[],"oauth":["read","write"]}}]`},
		{"mixed", `[{"schemes":{"bearer":{"list":[]},"oauth":["read","write"]}}]`},
		{"snake case", `[{"schemes":{"bearer":[],"oauth":[ "read" , "write" ]}}]`},
	} {
		in := `{"name":"a","securityRequirements":` + c.reqs + `,"skills":[{"id":"s","security_requirements":` + c.reqs + `}],"capabilities":{"streaming":true}}`
		var card AgentCard
		if err := Unmarshal([]byte(in), &card); err != nil {
			t.Fatalf("%s: Unmarshal = %v", c.name, err)
		}
		if !proto.Equal(&AgentCard{SecurityRequirements: want}, &AgentCard{SecurityRequirements: card.SecurityRequirements}) ||
			!proto.Equal(&AgentSkill{Id: "s", SecurityRequirements: want}, card.Skills[0]) {
			t.Errorf("%s: Unmarshal = %v, want the requirements %v on the card and the skill", c.name, &card, want)
		}
		if card.GetName() != "a" || !card.GetCapabilities().GetStreaming() {
			t.Errorf("%s: Unmarshal lost the other members: %v", c.name, &card)
		}
		out, err := Marshal(&card)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(out); !strings.Contains(s, `"bearer":{}`) || !strings.Contains(s, `"oauth":{"list":["read","write"]}`) {
			t.Errorf("%s: Marshal = %s, want the proto shape (an object; list omitted when empty)", c.name, s)
		}
	}
}

// TestUnmarshalBareScopesStaysNarrow: only arrays standing for StringList
// map values are rewritten; other malformed input is still refused, and
// enum names are still checked after the rewrite.
func TestUnmarshalBareScopesStaysNarrow(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"securityRequirements":[{"schemes":{"bearer":"read"}}]}`,
		`{"securityRequirements":[{"schemes":{"bearer":[1]}}]}`,
		`{"securityRequirements":[{"schemes":["bearer"]}]}`,
		`{"securityRequirements":{"schemes":{"bearer":[]}}}`,
		`{"skills":[["x"]],"securityRequirements":[{"schemes":{"bearer":[]}}]}`,
		`{"defaultInputModes":{"list":["text/plain"]}}`,
	} {
		var card AgentCard
		if err := Unmarshal([]byte(in), &card); err == nil {
			t.Errorf("Unmarshal(%s) = nil error, want one", in)
		}
	}
	var tk Task
	if err := Unmarshal([]byte(`{"id":"t","status":{"state":"completed"}}`), &tk); err == nil {
		t.Errorf("Unmarshal(Task with a v0.3 state) = nil error, want one")
	}
	var card AgentCard
	in := `{"securityRequirements":[{"schemes":{"bearer":[]}}],"securitySchemes":{"k":{"apiKeySecurityScheme":{"location":"header","name":"X"}}}}`
	if err := Unmarshal([]byte(in), &card); err != nil {
		t.Errorf("Unmarshal(%s) = %v", in, err)
	}
}
