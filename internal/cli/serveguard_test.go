package cli

import (
	"flag"
	"io"
	"testing"
	"time"

	"parley.dev/parley/a2ahttp"
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

// TestCallerBoundFlags: the per-caller bounds and the write deadline have
// their defaults, a value given wins, and the flags' 0 (no bound) reaches
// the handler as its negative.
func TestCallerBoundFlags(t *testing.T) {
	type bounds struct {
		calls, streams int
		budget         int64
		write          time.Duration
	}
	for _, tc := range []struct {
		args []string
		want bounds
	}{
		{nil, bounds{a2ahttp.DefaultMaxCalls, a2ahttp.DefaultMaxStreams, a2ahttp.DefaultAnswerBudget, a2ahttp.DefaultWriteTimeout}},
		{[]string{"-max-calls", "9", "-max-streams", "3", "-answer-budget", "1000", "-write-timeout", "2s"}, bounds{9, 3, 1000, 2 * time.Second}},
		{[]string{"-max-calls", "0", "-max-streams", "0", "-answer-budget", "0", "-write-timeout", "0"}, bounds{-1, -1, -1, -1}},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		g, f := addGuardFlags(fs), addIdentityFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		id, err := f.load(false)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var o a2ahttp.Options
		g.apply(&o)
		id.apply(&o)
		if got := (bounds{o.MaxCalls, o.MaxStreams, o.AnswerBudget, o.WriteTimeout}); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.args, got, tc.want)
		}
	}
}
