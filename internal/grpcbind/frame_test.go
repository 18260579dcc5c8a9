package grpcbind_test

import (
	"bytes"
	"testing"

	"parley.dev/parley/internal/grpcbind"
)

// TestAppendFrame: a message is framed as gRPC's uncompressed
// length-prefixed message, after what dst already holds.
func TestAppendFrame(t *testing.T) {
	t.Parallel()
	long := bytes.Repeat([]byte{'x'}, 0x10203)
	for _, c := range []struct {
		name     string
		dst, msg []byte
		want     []byte
	}{
		{"empty", nil, nil, []byte{0, 0, 0, 0, 0}},
		{"short", nil, []byte("ab"), []byte{0, 0, 0, 0, 2, 'a', 'b'}},
		{"after dst", []byte("z"), []byte("a"), []byte{'z', 0, 0, 0, 0, 1, 'a'}},
		{"long", nil, long, append([]byte{0, 0, 1, 2, 3}, long...)},
	} {
		if got := grpcbind.AppendFrame(c.dst, c.msg); !bytes.Equal(got, c.want) {
			t.Errorf("AppendFrame(%s) = % x…, want % x…", c.name, got[:min(len(got), 8)], c.want[:min(len(c.want), 8)])
		}
	}
}
