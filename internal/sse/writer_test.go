package sse_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"parley.dev/parley/internal/sse"
)

// TestNewWriterHeaders: NewWriter sets the headers but does not flush
// them alone; the first event carries them, in one flush.
func TestNewWriterHeaders(t *testing.T) {
	rec := newRecorder()
	w := sse.NewWriter(rec)
	if rec.status != http.StatusOK {
		t.Errorf("status = %d, want 200", rec.status)
	}
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := rec.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if rec.flushes != 0 {
		t.Errorf("NewWriter flushed %d times; want 0 (the headers go with the first event)", rec.flushes)
	}
	if err := w.Event("", 1, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 1 {
		t.Errorf("after the first event: %d flushes; want 1", rec.flushes)
	}
}

func TestEventFraming(t *testing.T) {
	tests := []struct {
		name string
		id   uint64
		data string
		want string
	}{
		{"id and data", 7, `{"a":1}`, "id: 7\ndata: {\"a\":1}\n\n"},
		{"no id when zero", 0, `{}`, "data: {}\n\n"},
		{"largest id", 1<<64 - 1, "x", "id: 18446744073709551615\ndata: x\n\n"},
		{"empty data", 3, "", "id: 3\ndata: \n\n"},
		{"LF splits lines", 1, "a\nb\nc", "id: 1\ndata: a\ndata: b\ndata: c\n\n"},
		{"CRLF is one line break", 0, "a\r\nb", "data: a\ndata: b\n\n"},
		{"lone CR splits", 0, "a\rb", "data: a\ndata: b\n\n"},
		{"CR CR is two breaks", 0, "a\r\rb", "data: a\ndata: \ndata: b\n\n"},
		{"LF CR is two breaks", 0, "a\n\rb", "data: a\ndata: \ndata: b\n\n"},
		{"trailing newline", 0, "a\n", "data: a\ndata: \n\n"},
		{"leading space kept", 0, " a", "data:  a\n\n"},
		{"colon-led line stays data", 0, "x\n: not a comment", "data: x\ndata: : not a comment\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			w := sse.NewWriter(rec)
			if err := w.Event("", tt.id, []byte(tt.data)); err != nil {
				t.Fatalf("Event: %v", err)
			}
			if got := rec.String(); got != tt.want {
				t.Errorf("Event(%d, %q) wrote %q, want %q", tt.id, tt.data, got, tt.want)
			}
			p := parseSSE(rec.String())
			if len(p.events) != 1 || len(p.foreign) > 0 || p.pending {
				t.Fatalf("parsed %+v, want one event", p)
			}
			if got, want := p.events[0].data, normalizeNewlines(tt.data); got != want {
				t.Errorf("data read back = %q, want %q", got, want)
			}
			if tt.id > 0 && p.events[0].id != strconv.FormatUint(tt.id, 10) {
				t.Errorf("id read back = %q, want %d", p.events[0].id, tt.id)
			}
			if tt.id == 0 && p.events[0].hasID {
				t.Errorf("id line written for id 0")
			}
		})
	}
}

func TestEventsAreSeparate(t *testing.T) {
	rec := newRecorder()
	w := sse.NewWriter(rec)
	for i := uint64(1); i <= 3; i++ {
		if err := w.Event("", i, fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	p := parseSSE(rec.String())
	if len(p.events) != 3 {
		t.Fatalf("got %d events, want 3: %q", len(p.events), rec.String())
	}
	for i, ev := range p.events {
		if want := fmt.Sprintf(`{"n":%d}`, i+1); ev.data != want || ev.id != strconv.Itoa(i+1) {
			t.Errorf("event %d = (id %q, data %q), want (id %d, data %q)", i, ev.id, ev.data, i+1, want)
		}
	}
}

func TestComment(t *testing.T) {
	rec := newRecorder()
	w := sse.NewWriter(rec)
	if err := w.Comment("keep-alive"); err != nil {
		t.Fatal(err)
	}
	if err := w.Event("", 1, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	const want = ": keep-alive\n\nid: 1\ndata: {}\n\n"
	if got := rec.String(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	p := parseSSE(want)
	if len(p.comments) != 1 || len(p.events) != 1 {
		t.Errorf("parsed %+v, want one comment and one event", p)
	}
}

// TestCommentCannotInjectFields: Comment promises a comment line that every
// client ignores, so text holding a line break must not turn its second
// line into a field (here a data line a client would deliver as an event).
func TestCommentCannotInjectFields(t *testing.T) {
	for _, text := range []string{"a\ndata: injected", "a\rdata: injected", "a\r\nid: 99"} {
		rec := newRecorder()
		w := sse.NewWriter(rec)
		if err := w.Comment(text); err != nil {
			t.Fatal(err)
		}
		p := parseSSE(rec.String())
		if p.fields > 0 {
			t.Errorf("Comment(%q) wrote %q, which a client reads as fields: %+v", text, rec.String(), p)
		}
	}
}

func TestWriteErrorIsSticky(t *testing.T) {
	rec := newRecorder()
	rec.failAt = 2
	w := sse.NewWriter(rec)
	if err := w.Event("", 1, []byte("a")); err != nil {
		t.Fatalf("first Event: %v", err)
	}
	if err := w.Event("", 2, []byte("b")); err == nil {
		t.Fatal("Event on a failing connection returned nil")
	}
	n := rec.writeCount()
	if err := w.Event("", 3, []byte("c")); err == nil {
		t.Error("Event after a failed write returned nil")
	}
	if err := w.Comment("keep-alive"); err == nil {
		t.Error("Comment after a failed write returned nil")
	}
	if got := rec.writeCount(); got != n {
		t.Errorf("the writer kept writing after a failure: %d writes, want %d", got, n)
	}
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}`), uint64(1), false)
	f.Add([]byte(`{"error":{"code":500}}`), uint64(0), true)
	f.Add([]byte(""), uint64(0), false)
	f.Add([]byte("plain"), uint64(1<<64-1), false)
	f.Add([]byte("a\nb"), uint64(2), true)
	f.Add([]byte("a\r\nb\rc\n"), uint64(3), false)
	f.Add([]byte("\r\r\n\n"), uint64(0), false)
	f.Add([]byte("\n\ndata: x\n\nid: 5\n\n"), uint64(4), false)
	f.Add([]byte(": comment\nevent: x\nretry: 10"), uint64(5), true)
	f.Add([]byte(" leading space"), uint64(6), false)
	f.Add([]byte("nul\x00byte"), uint64(7), false)
	f.Add([]byte("\xff\xfe invalid utf-8 \xc3"), uint64(8), false)
	f.Add([]byte("\u2028\u2029\u0085"), uint64(9), false)
	f.Fuzz(func(t *testing.T, data []byte, id uint64, named bool) {
		name := ""
		if named {
			name = "error" // the only name a binding uses
		}
		rec := newRecorder()
		w := sse.NewWriter(rec)
		if err := w.Event(name, id, data); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("keep-alive"); err != nil {
			t.Fatal(err)
		}
		if err := w.Event("", 0, []byte("next")); err != nil {
			t.Fatal(err)
		}
		out := rec.String()
		p := parseSSE(out)
		if len(p.foreign) > 0 {
			t.Fatalf("Event(%q, %d, %q) wrote lines that are no event, id or data field nor comment: %q", name, id, data, p.foreign)
		}
		if p.pending {
			t.Fatalf("the stream ends inside an event: %q", out)
		}
		for _, ev := range p.events {
			for _, l := range ev.lines {
				if !strings.HasPrefix(l, "data: ") && !strings.HasPrefix(l, "id: ") && !strings.HasPrefix(l, "event: ") {
					t.Fatalf("unexpected line %q in %q", l, out)
				}
			}
		}
		if len(p.events) != 2 || len(p.comments) != 1 {
			t.Fatalf("parsed %d events and %d comments, want 2 and 1, from %q", len(p.events), len(p.comments), out)
		}
		ev := p.events[0]
		if !bytes.ContainsAny(data, "\r\n") && ev.data != string(data) {
			t.Fatalf("data %q read back as %q", data, ev.data)
		}
		if want := normalizeNewlines(string(data)); ev.data != want {
			t.Fatalf("data %q read back as %q, want %q", data, ev.data, want)
		}
		if ev.event != name {
			t.Fatalf("event name %q read back as %q", name, ev.event)
		}
		switch {
		case id == 0 && ev.hasID:
			t.Fatalf("id 0 wrote an id line: %q", out)
		case id > 0 && ev.id != strconv.FormatUint(id, 10):
			t.Fatalf("id %d read back as %q", id, ev.id)
		}
		if p.events[1].data != "next" || p.events[1].hasID || p.events[1].event != "" {
			t.Fatalf("the following event was disturbed: %+v", p.events[1])
		}
	})
}
