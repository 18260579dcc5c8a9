package execagent

import (
	"testing"
	"time"
)

// TestLimitDefaults: zero limits take the defaults, negative ones mean
// none.
func TestLimitDefaults(t *testing.T) {
	a, err := New(Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.o.Timeout != DefaultTimeout || DefaultTimeout != 10*time.Minute {
		t.Errorf("timeout %v, want %v", a.o.Timeout, DefaultTimeout)
	}
	if a.queue == nil || a.queue.free != DefaultConcurrency() {
		t.Errorf("queue %+v, want %d slots", a.queue, DefaultConcurrency())
	}
	a, err = New(Options{Command: []string{"true"}, Timeout: -1, Concurrency: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a.o.Timeout > 0 || a.queue != nil {
		t.Errorf("timeout %v, queue %v; want no limits", a.o.Timeout, a.queue)
	}
	for _, name := range []string{"", "A=B", "1X", "A B"} {
		if _, err := New(Options{Command: []string{"true"}, PassEnv: []string{name}}); err == nil {
			t.Errorf("PassEnv %q accepted", name)
		}
	}
}

func TestPassed(t *testing.T) {
	for name, want := range map[string]bool{"PATH": true, "LC_ALL": true, "LC_": true, "PATHX": false,
		"HOMEDIR": false, "LANGUAGE": false, "TMPDIR": true, "PARLEY_PUSH_KEY": false, "TZ": true} {
		if got := passed(name, baseEnv); got != want {
			t.Errorf("passed(%q) = %v, want %v", name, got, want)
		}
	}
}
