package a2a

import (
	"strings"
	"testing"
)

// TestRequestedVersion: an empty A2A-Version means 0.3 (spec §3.6.2), and
// versions compare by Major.Minor (docs/decisions.md#b7).
func TestRequestedVersion(t *testing.T) {
	for _, tc := range []struct{ in, asked, mm string }{
		{"", "0.3", "0.3"},
		{"  ", "0.3", "0.3"},
		{"1.0", "1.0", "1.0"},
		{" 1.0.2 ", "1.0.2", "1.0"},
		{"0.3.0", "0.3.0", "0.3"},
		{"2", "2", "2"},
		{"abc", "abc", "abc"},
	} {
		asked, mm := RequestedVersion(tc.in)
		if asked != tc.asked || mm != tc.mm {
			t.Errorf("RequestedVersion(%q) = %q, %q; want %q, %q", tc.in, asked, mm, tc.asked, tc.mm)
		}
	}
}

// splitVersion is RequestedVersion as it was written first: the version
// split at its dots and its first two parts joined again.
func splitVersion(v string) (asked, majorMinor string) {
	asked = strings.TrimSpace(v)
	if asked == "" {
		asked = "0.3"
	}
	majorMinor = asked
	if parts := strings.Split(asked, "."); len(parts) >= 2 {
		majorMinor = parts[0] + "." + parts[1]
	}
	return asked, majorMinor
}

// TestRequestedVersionAsSplit: taking Major.Minor as a substring gives
// what splitting and joining gave, for odd values too, without allocating.
func TestRequestedVersionAsSplit(t *testing.T) {
	for _, in := range []string{"", " ", "1", "1.", ".1", "..", "...", "1..2", "1.0", "1.0.", "1.0.0",
		"1.0.0.7", " 0.3 ", "\t1.1.2\n", "a.b.c", "10.20.30", ".1.2", "1.2..3", "1.0-rc.1"} {
		asked, mm := RequestedVersion(in)
		wa, wm := splitVersion(in)
		if asked != wa || mm != wm {
			t.Errorf("RequestedVersion(%q) = %q, %q; split and joined: %q, %q", in, asked, mm, wa, wm)
		}
	}
	if n := testing.AllocsPerRun(100, func() { RequestedVersion(" 1.0.2 ") }); n != 0 {
		t.Errorf("RequestedVersion allocates %v times per call, want 0", n)
	}
}
