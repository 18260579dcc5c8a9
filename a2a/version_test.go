package a2a

import "testing"

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
