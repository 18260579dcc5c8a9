package httpx

import (
	"net/http/httptest"
	"slices"
	"testing"
)

// TestCallInfoExtensions: the activated extensions are read from every
// line of A2A-Extensions and of v0.3's X-A2A-Extensions, comma-separated,
// each URI once, in the order given.
func TestCallInfoExtensions(t *testing.T) {
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Add(HeaderExtensions, "urn:a, urn:b")
	r.Header.Add(HeaderExtensions, " urn:c ,")
	r.Header.Add(HeaderExtensionsV03, "urn:b,urn:d")
	got := CallInfo(r).Extensions
	if want := []string{"urn:a", "urn:b", "urn:c", "urn:d"}; !slices.Equal(got, want) {
		t.Errorf("extensions %q, want %q", got, want)
	}
	r = httptest.NewRequest("POST", "/", nil)
	r.Header.Set(HeaderExtensionsV03, "urn:v03")
	if got := MetadataCallInfo(r).Extensions; !slices.Equal(got, []string{"urn:v03"}) {
		t.Errorf("v0.3 header alone: %q", got)
	}
}
