package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// validSeeds are inputs at the edges of the JSON grammar.
var validSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`,
	``, ` `, `{}`, `[]`, `{} `, ` {}x`, `{}{}`, `"a"`, `"\u00e9\ud800\/\b\f\n\r\t\"\\"`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\xc3\"",
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.5e-300`, `1x`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `NaN`,
	`[1,]`, `[,1]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`, "\t\r\n[ 1 , { \"a\" : [ ] } ]\n", "\f{}", "\u00a0{}", "{\"a\":\"\xff\"}",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10000), strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat("}", 10001),
}

// FuzzValidJSON: validJSON answers as json.Valid on every input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// TestJSONString: jsonString reads a string value as json.Unmarshal does.
func TestJSONString(t *testing.T) {
	for _, v := range []string{`"2.0"`, `"SendMessage"`, `""`, `"\u0053end"`, `"a\"b"`, "\"\xff\"", `1`, `null`, `{}`, `["a"]`, `"é"`} {
		var want string
		wantOK := json.Unmarshal([]byte(v), &want) == nil
		got, ok := jsonString([]byte(v))
		if got != want || ok != wantOK {
			t.Errorf("jsonString(%s) = %q, %v; json.Unmarshal gives %q, %v", v, got, ok, want, wantOK)
		}
	}
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	body := []byte(validSeeds[0])
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}
