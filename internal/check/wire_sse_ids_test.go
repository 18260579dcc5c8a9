package check

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSSEIDTap: every event sseEvents returns carries the id: line it was
// sent with, whatever the line endings, comments and events without data
// around it.
func TestSSEIDTap(t *testing.T) {
	t.Parallel()
	stream := ": keep-alive\n\n" +
		"id: 1\ndata: a\n\n" +
		"data: b\n\n" +
		"id: abc\r\nevent: x\r\ndata: c\r\n\r\n" +
		"id: 9\n\n" + // no data: not dispatched, and its id is forgotten
		"id:\rdata: d\r\r" +
		"id: 7\ndata: e\n" // not ended by a blank line: dropped
	type got struct {
		data, id string
		hasID    bool
	}
	want := []got{{"a", "1", true}, {"b", "", false}, {"c", "abc", true}, {"d", "", true}}
	for name, r := range map[string]io.Reader{
		"at once":          strings.NewReader(stream),
		"a byte at a time": iotest.OneByteReader(strings.NewReader(stream)),
	} {
		next := sseEvents(r)
		for i, w := range want {
			ev, err := next()
			if err != nil {
				t.Fatalf("%s: event %d: %v", name, i, err)
			}
			if g := (got{string(ev.Data), ev.ID, ev.HasID}); g != w {
				t.Errorf("%s: event %d = %+v, want %+v", name, i, g, w)
			}
		}
		if ev, err := next(); err != io.EOF {
			t.Errorf("%s: after the last event: %+v, %v; want io.EOF", name, ev, err)
		}
	}
}
