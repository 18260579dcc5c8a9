package cli

import (
	"testing"

	"parley.dev/parley/a2a"
)

// TestArtifactBody: text chunks join as they were split, other parts are
// summarised on lines of their own.
func TestArtifactBody(t *testing.T) {
	a := a2a.NewArtifact("a", a2a.TextPart("Hel"), a2a.TextPart("lo"),
		&a2a.Part{Content: &a2a.Part_Url{Url: "https://example.com/f"}, MediaType: "text/plain"},
		a2a.TextPart("wor"), a2a.TextPart("ld"))
	want := "Hello\n[file https://example.com/f text/plain]\nworld"
	if got := artifactBody(a); got != want {
		t.Errorf("artifactBody(%v) = %q, want %q", a, got, want)
	}
	if got := artifactBody(nil); got != "" {
		t.Errorf("artifactBody(nil) = %q, want empty", got)
	}
}
