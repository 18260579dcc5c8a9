package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	t.Parallel()
	type ev struct {
		name, data string
		id         uint64
	}
	cases := []struct {
		name string
		in   string
		want []ev
	}{
		{"one event", "data: {}\n\n", []ev{{data: "{}"}}},
		{"id and name", "event: error\nid: 7\ndata: x\n\n", []ev{{name: "error", id: 7, data: "x"}}},
		{"comments and keep-alives", ": keep-alive\n\n:x\ndata: a\n\n: bye\n\n", []ev{{data: "a"}}},
		{"data lines joined", "data: a\ndata:b\ndata:  c\n\n", []ev{{data: "a\nb\n c"}}},
		{"CRLF", "data: a\r\nid: 2\r\n\r\ndata: b\r\n\r\n", []ev{{data: "a", id: 2}, {data: "b"}}},
		{"lone CR", "data: a\rdata: b\r\rdata: c\r\r", []ev{{data: "a\nb"}, {data: "c"}}},
		{"retry and unknown fields ignored", "retry: 100\nfoo: bar\ndata: a\n\n", []ev{{data: "a"}}},
		{"field without colon", "data\n\n", []ev{{data: ""}}},
		{"blank lines without data", "\n\n\nevent: x\n\ndata: a\n\n", []ev{{data: "a"}}},
		{"id only on its event", "id: 3\ndata: a\n\ndata: b\n\n", []ev{{id: 3, data: "a"}, {data: "b"}}},
		{"id not a number", "id: abc\ndata: a\n\n", []ev{{data: "a"}}},
		{"unterminated event dropped", "data: a\n\ndata: b", []ev{{data: "a"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				rd := NewReader(r, 1<<10)
				var got []ev
				for {
					e, err := rd.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("next() = %v", err)
					}
					got = append(got, ev{name: e.Name, id: e.ID, data: string(e.Data)})
				}
				if len(got) != len(tc.want) {
					t.Fatalf("events %+v, want %+v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("events %+v, want %+v", got, tc.want)
					}
				}
			}
		})
	}
}

func TestReaderLimit(t *testing.T) {
	t.Parallel()
	big := "data: " + strings.Repeat("x", 400) + "\n"
	rd := NewReader(strings.NewReader(big+big+big+"\n"), 1000)
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("next() = %v, want ErrEventTooLarge", err)
	}
	// A single line over the limit.
	rd = NewReader(strings.NewReader("data: "+strings.Repeat("y", 2000)+"\n\n"), 1000)
	if _, err := rd.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("next() = %v, want ErrEventTooLarge", err)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: {}\n\n", "id: 1\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n", ": c\rdata: x\r\r", "data"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rd := NewReader(strings.NewReader(in), 1<<16)
		total := 0
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			total += len(ev.Data)
			if total > len(in) {
				t.Fatalf("more data out (%d) than in (%d)", total, len(in))
			}
		}
	})
}
