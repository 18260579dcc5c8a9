package execagent

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		``:                       nil,
		`  echo   hi  `:          {"echo", "hi"},
		`sh -c 'echo "$X" | wc'`: {"sh", "-c", `echo "$X" | wc`},
		`a"b c"d`:                {"ab cd"},
		`"a\"b\\c\d"`:            {`a"b\c\d`},
		`a\ b c\\`:               {"a b", `c\`},
		`'' ""`:                  {"", ""},
		"a\\\nb":                 {"ab"},
		"python3\t-u\nscript.py": {"python3", "-u", "script.py"},
	} {
		got, err := SplitWords(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`'open`, `"open`, `end\`, `"a\"`} {
		if got, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzSplitWords: any input splits without a panic, and words joined back
// with single quotes split to the same words.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`a b`, `'a b' "c\"d" e\ f`, `"`, `\`, "a\\\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
		again, err := SplitWords(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("%q split to %q; quoted back and split again: %q, %v", s, words, again, err)
		}
	})
}

// FuzzParseLine: no line a program writes makes the decoder panic, and an
// accepted line is exactly one of a state or an artifact.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{`{"state":"WORKING"}`, `{"state":"input-required","message":"q"}`,
		`{"artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true,"lastChunk":true}`,
		`{"artifact":{"artifactId":"a","parts":[{"data":{"k":[1,2]}}]}}`, `{}`, `[]`, `{"state":1}`, `{"state":"DONE"} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseLine(b)
		if err != nil {
			return
		}
		if (ev.artifact == nil) == (ev.state == 0) {
			t.Fatalf("%q decoded to %+v: want a state or an artifact", b, ev)
		}
	})
}

func TestTailWriter(t *testing.T) {
	var logged []string
	tw := &tailWriter{max: 2, onLine: func(l string) { logged = append(logged, l) }}
	tw.Write([]byte("one\ntwo\nthr"))
	tw.Write([]byte("ee\nfour"))
	if got := tw.String(); got != "three\nfour" {
		t.Errorf("tail %q, want three, four", got)
	}
	if !slices.Equal(logged, []string{"one", "two", "three"}) {
		t.Errorf("logged %q", logged)
	}
	tw.Write([]byte(strings.Repeat("x", 2*maxTailLine) + "\n"))
	if got := tw.String(); len(got) != len("three\n")+maxTailLine {
		t.Errorf("a long line is kept whole: %d bytes", len(got))
	}
}
