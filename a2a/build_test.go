package a2a

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// uuid7 is the text form of an RFC 9562 version 7 UUID: version nibble 7,
// variant bits 10.
var uuid7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestNewID checks that ids are version 7 UUIDs whose first 48 bits are
// the time they were made, so that ids made in later milliseconds sort
// after earlier ones, and that they do not repeat.
func TestNewID(t *testing.T) {
	before := time.Now().UnixMilli()
	first := NewID()
	after := time.Now().UnixMilli()
	if !uuid7.MatchString(first) {
		t.Fatalf("NewID() = %q; want a version 7 UUID", first)
	}
	ms, err := strconv.ParseInt(first[:8]+first[9:13], 16, 64)
	if err != nil || ms < before || ms > after {
		t.Errorf("NewID() = %q holds time %d; want between %d and %d", first, ms, before, after)
	}

	seen := map[string]bool{first: true}
	for range 10000 {
		id := NewID()
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}

	time.Sleep(2 * time.Millisecond)
	if later := NewID(); later <= first {
		t.Errorf("NewID() made later = %q; want it to sort after %q", later, first)
	}
}
