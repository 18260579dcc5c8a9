package server

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// TestDigestOfAsMarshal: digestOf, which encodes into pooled buffers,
// gives the hex SHA-256 of the message's deterministic encoding, for small
// and large messages one after another (a buffer grown past the pool's
// bound is dropped, one reused is overwritten from its start).
func TestDigestOfAsMarshal(t *testing.T) {
	for i, text := range []string{"hi", strings.Repeat("x", 100<<10), "", strings.Repeat("y", 3000), "hi"} {
		m := &a2a.Message{MessageId: "m", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart(text)},
			Metadata: nil, Extensions: []string{"e1", "e2"}}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got, want := digestOf(m), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("message %d: digestOf = %s, want %s", i, got, want)
		}
	}
}
