package layout

import (
	"bytes"
	"fmt"
	"testing"
)

// logged returns n events numbered from first, each with bytes of its own.
func logged(first uint64, n int) []Logged {
	evs := make([]Logged, n)
	for i := range evs {
		evs[i] = Logged{Seq: first + uint64(i), Data: bytes.Repeat([]byte{byte(i)}, i*50)}
	}
	return evs
}

// TestJoinEvents: a row of one event is the event's bytes as they are;
// a row of several splits back into the same events.
func TestJoinEvents(t *testing.T) {
	for _, n := range []int{1, 2, 3, 23} {
		evs := logged(7, n)
		seq, first, data := JoinEvents(evs)
		if seq != int64(6+n) {
			t.Errorf("%d events: seq %d, want %d", n, seq, 6+n)
		}
		if n == 1 {
			if first != nil || !bytes.Equal(data, evs[0].Data) {
				t.Errorf("one event: first_seq %v, data %q; want nil and the event's bytes", first, data)
			}
			continue
		}
		if first != int64(7) {
			t.Fatalf("%d events: first_seq %v, want 7", n, first)
		}
		got, err := SplitEvents(data, 7, uint64(seq))
		if err != nil {
			t.Fatalf("%d events: %v", n, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(evs) {
			t.Errorf("%d events: split into %v, want %v", n, got, evs)
		}
	}
}

// TestSplitEventsRefuses: a row whose bytes do not hold its numbers'
// events is an error, not a short or long list.
func TestSplitEventsRefuses(t *testing.T) {
	_, _, three := JoinEvents(logged(1, 3))
	for _, c := range []struct {
		name        string
		data        []byte
		first, last uint64
	}{
		{"one more number than events", three, 1, 4},
		{"one fewer", three, 1, 2},
		{"cut short", three[:len(three)-1], 1, 3},
		{"a byte too many", append(append([]byte{}, three...), 0), 1, 3},
		{"first after last", three, 3, 1},
		{"a row of one", three, 2, 2},
		{"empty", nil, 1, 2},
		{"every number", three, 0, 1<<64 - 1},
	} {
		if evs, err := SplitEvents(c.data, c.first, c.last); err == nil {
			t.Errorf("%s: %d events, no error", c.name, len(evs))
		}
	}
}

// FuzzSplitEvents: any bytes and numbers give an error or exactly the
// events numbered first to last, which join and split into themselves.
func FuzzSplitEvents(f *testing.F) {
	_, _, data := JoinEvents(logged(1, 3))
	f.Add(data, uint64(1), uint64(3))
	f.Add([]byte{0, 0}, uint64(5), uint64(6))
	f.Add([]byte{0xff, 0xff, 0xff}, uint64(0), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, first, last uint64) {
		evs, err := SplitEvents(data, first, last)
		if err != nil {
			return
		}
		if uint64(len(evs)) != last-first+1 {
			t.Fatalf("%d events for %d to %d", len(evs), first, last)
		}
		// Joined again, they read the same (the bytes may differ: a
		// length's varint need not be the shortest).
		_, _, again := JoinEvents(evs)
		if evs2, err := SplitEvents(again, first, last); err != nil || fmt.Sprint(evs2) != fmt.Sprint(evs) {
			t.Fatalf("joined again and split: %v, %v; want %v", evs2, err, evs)
		}
	})
}
