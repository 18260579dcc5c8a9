package cli

import (
	"flag"
	"io"
	"testing"
)

// TestConnsPerIPDefault: --max-conns-per-ip defaults to a quarter of
// --max-conns (at least one, none without a cap), and a given value wins,
// 0 included; a negative one is refused.
func TestConnsPerIPDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1024},
		{[]string{"-max-conns", "100"}, 25},
		{[]string{"-max-conns", "3"}, 1},
		{[]string{"-max-conns", "0"}, 0},
		{[]string{"-max-conns-per-ip", "7"}, 7},
		{[]string{"-max-conns-per-ip", "0"}, 0},
		{[]string{"-max-conns", "0", "-max-conns-per-ip", "5"}, 5},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		g := addGuardFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := g.connsPerIP(); got != tc.want {
			t.Errorf("%v: per-IP share %d, want %d", tc.args, got, tc.want)
		}
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addGuardFlags(fs)
	if err := fs.Parse([]string{"-max-conns-per-ip", "-1"}); err == nil {
		t.Error("a negative --max-conns-per-ip was accepted")
	}
}
