package a2a

import (
	"strings"
	"testing"
)

func TestUnmarshalRefusesDeepNesting(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200)
	in := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":` + deep + `}]}}`
	var req SendMessageRequest
	if err := Unmarshal([]byte(in), &req); err == nil {
		t.Fatal("200 levels of nesting were accepted")
	}
	ok := strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat(`}`, 20)
	in = `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":` + ok + `}]}}`
	if err := Unmarshal([]byte(in), &req); err != nil {
		t.Fatalf("20 levels refused: %v", err)
	}
}
