package loadgen

import (
	"bytes"
	"testing"
)

// FuzzGRPCMessages: the generator's reading of a gRPC answer never panics,
// and the messages it finds, framed again, are the answer it read.
func FuzzGRPCMessages(f *testing.F) {
	f.Add([]byte{})
	f.Add(grpcFrame([]byte("hello")))
	f.Add(append(grpcFrame(nil), grpcFrame([]byte{8, 1})...))
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
			again = append(again, grpcFrame(m)...)
		}
		if !bytes.Equal(again, body) {
			t.Fatalf("%x read as %d messages that frame to %x", body, len(msgs), again)
		}
	})
}
