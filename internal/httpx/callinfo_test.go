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

// TestCallInfoParameters: A2A-Version from the header, else from the query
// (not for gRPC's metadata), and Last-Event-ID, trimmed, whatever the case
// the client wrote the names in.
func TestCallInfoParameters(t *testing.T) {
	r := httptest.NewRequest("GET", "/tasks/t1?A2A-Version=0.3", nil)
	r.Header.Set("a2a-version", " 1.0 ")
	r.Header.Set("LAST-EVENT-ID", " 7 ")
	if ci := CallInfo(r); ci.Version != "1.0" || ci.LastEventID != "7" {
		t.Errorf("version %q, last event id %q", ci.Version, ci.LastEventID)
	}
	r = httptest.NewRequest("GET", "/tasks/t1?A2A-Version=0.3", nil)
	if ci := CallInfo(r); ci.Version != "0.3" || ci.LastEventID != "" {
		t.Errorf("from the query: version %q, last event id %q", ci.Version, ci.LastEventID)
	}
	if ci := MetadataCallInfo(r); ci.Version != "" {
		t.Errorf("gRPC read the query: version %q", ci.Version)
	}
	r = httptest.NewRequest("GET", "/tasks/t1", nil)
	if ci := CallInfo(r); ci.Version != "" {
		t.Errorf("no version: %q", ci.Version)
	}
}
