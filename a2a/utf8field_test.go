package a2a_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// TestUTF8Field: a string that is not UTF-8 is found by its path in JSON
// (camelCase or snake_case names, lists, metadata) and in the binary
// encoding, and a2a.Unmarshal's error names it.
func TestUTF8Field(t *testing.T) {
	md := (&a2a.SendMessageRequest{}).ProtoReflect().Descriptor()
	for _, tc := range []struct{ json, want string }{
		{`{"message":{"messageId":"a` + "\xff" + `"}}`, "message.messageId"},
		{`{"message":{"message_id":"a` + "\xff" + `"}}`, "message.messageId"},
		{`{"message":{"messageId":"ok","parts":[{"text":"x"},{"text":"` + "\xc3" + `"}]}}`, "message.parts[1].text"},
		{`{"tenant":"t","metadata":{"k":["v","` + "\xfe" + `"]}}`, "metadata.k[1]"},
		{`{"message":{"messageId":"ok"}}`, ""},
	} {
		if got := a2a.JSONUTF8Field([]byte(tc.json), md); got != tc.want {
			t.Errorf("JSON %q: %q, want %q", tc.json, got, tc.want)
		}
		if tc.want == "" {
			continue
		}
		err := a2a.Unmarshal([]byte(tc.json), &a2a.SendMessageRequest{})
		var de *a2a.DecodeError
		if !errors.As(err, &de) || de.Field != tc.want {
			t.Errorf("Unmarshal %q: %v, want a DecodeError on %s", tc.json, err, tc.want)
		}
		if e := a2a.InvalidParamsFor(err); e.Code != a2a.CodeInvalidParams || len(e.Violations) != 1 || e.Violations[0].Field != tc.want {
			t.Errorf("InvalidParamsFor %q: %v", tc.json, e)
		}
	}

	req := &a2a.SendMessageRequest{Tenant: "TTTT", Message: &a2a.Message{MessageId: "ok", ReferenceTaskIds: []string{"r0", "MMMM"}}}
	b, _ := proto.Marshal(req)
	if got := a2a.BinaryUTF8Field(b, md); got != "" {
		t.Errorf("binary of a valid request: %q", got)
	}
	for mark, want := range map[string]string{"MMMM": "message.referenceTaskIds[1]", "TTTT": "tenant"} {
		bad := bytes.Replace(b, []byte(mark), []byte("M\xffMM"), 1)
		if got := a2a.BinaryUTF8Field(bad, md); got != want {
			t.Errorf("binary with %s spoilt: %q, want %q", mark, got, want)
		}
	}
}
