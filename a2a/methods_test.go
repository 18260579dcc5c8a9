package a2a

import "testing"

// TestMethods: Methods yields the eleven operations once each, as the same
// *Method MethodByName returns (so a *Method can key a map), and stops
// when the loop does.
func TestMethods(t *testing.T) {
	seen := map[*Method]bool{}
	for m := range Methods() {
		if seen[m] {
			t.Errorf("%s yielded twice", m.Name)
		}
		seen[m] = true
		if MethodByName(m.Name) != m {
			t.Errorf("MethodByName(%q) is not the *Method Methods yields", m.Name)
		}
	}
	if len(seen) != 11 {
		t.Errorf("Methods yields %d operations, want 11", len(seen))
	}
	n := 0
	for range Methods() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("Methods went on after break")
	}
	if MethodByName("NoSuchMethod") != nil {
		t.Error("MethodByName(NoSuchMethod) != nil")
	}
}
