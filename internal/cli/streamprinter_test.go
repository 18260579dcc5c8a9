package cli

import (
	"strings"
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

// TestPipedStreamJoinsChunks: piped, the text of appended chunks is joined
// with nothing added, as artifactBody joins a whole artifact's parts, and
// shown once, in one block, at the last chunk.
func TestPipedStreamJoinsChunks(t *testing.T) {
	var out strings.Builder
	p := newStreamPrinter(&output{w: &out, errw: &out})
	chunk := func(appended, last bool, parts ...*a2a.Part) {
		p.event(a2a.StreamEvent{Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t", ContextId: "c", Append: appended, LastChunk: last, Artifact: a2a.NewArtifact("a", parts...)}}}})
	}
	chunk(false, false, a2a.TextPart("Hel"))
	chunk(true, false, a2a.TextPart("lo"), a2a.TextPart(", wor"))
	chunk(true, true, a2a.TextPart("ld"))
	p.done()
	whole := artifactBody(a2a.NewArtifact("a", a2a.TextPart("Hel"), a2a.TextPart("lo"), a2a.TextPart(", wor"), a2a.TextPart("ld")))
	if got, want := out.String(), "Artifact ID: a\nArtifact:\n  "+whole+"\n\n"; got != want || whole != "Hello, world" {
		t.Errorf("piped stream = %q, want %q (the whole artifact %q)", got, want, whole)
	}
}
