package cli

import (
	"testing"

	"parley.dev/parley/a2a"
)

// TestArtifactParts: a stored artifact made of token-sized chunks reads as
// one text; a part that is not text stands on its own line.
func TestArtifactParts(t *testing.T) {
	data := &a2a.Part{Content: &a2a.Part_Url{Url: "https://example.com/x"}}
	for _, tc := range []struct {
		parts []*a2a.Part
		want  string
	}{
		{[]*a2a.Part{a2a.TextPart("Hel"), a2a.TextPart("lo")}, "Hello"},
		{[]*a2a.Part{a2a.TextPart("a"), data, a2a.TextPart("b"), a2a.TextPart("c")}, "a\n" + partText(data) + "\nbc"},
		{nil, ""},
	} {
		if got := artifactParts(tc.parts); got != tc.want {
			t.Errorf("artifactParts(%v) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}
