package loadgen

import (
	"bytes"
	"testing"

	"parley.dev/parley/internal/grpcbind"
)

// FuzzGRPCMessages: the generator's reading of a gRPC answer never panics,
// and the messages it finds, framed again, are the answer it read.
func FuzzGRPCMessages(f *testing.F) {
	f.Add([]byte{})
	f.Add(grpcbind.AppendFrame(nil, []byte("hello")))
	f.Add(append(grpcbind.AppendFrame(nil, nil), grpcbind.AppendFrame(nil, []byte{8, 1})...))
	f.Add([]byte{0, 0, 0, 0, 9, 1})      // shorter than it says
	f.Add([]byte{1, 0, 0, 0, 1, 'x'})    // compressed
	f.Add([]byte{0, 255, 255, 255, 255}) // a length beyond the body
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs := grpcMessages(body)
		if msgs == nil {
			return
		}
		var again []byte
		for _, m := range msgs {
			again = append(again, grpcbind.AppendFrame(nil, m)...)
		}
		if !bytes.Equal(again, body) {
			t.Fatalf("%x read as %d messages that frame to %x", body, len(msgs), again)
		}
	})
}
