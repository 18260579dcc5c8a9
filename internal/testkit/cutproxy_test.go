package testkit_test

import (
	"bytes"
	"io"
	"net"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// TestCutProxy: the proxy forwards what the client sends, and no more than
// the connection's budget of what the target sends, then drops the
// connection; a target that sends less is forwarded whole.
func TestCutProxy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	payload := bytes.Repeat([]byte("0123456789"), 10_000)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var n [1]byte
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				c.Write(payload[:int(n[0])*1000]) // n KB, as the client asks
			}()
		}
	}()
	p := testkit.StartCutProxy(t, ln.Addr().String(), &testkit.CutOptions{Seed: 7, MinBytes: 5000, MaxBytes: 5000})
	read := func(kb byte) []byte {
		c, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte{kb})
		got, _ := io.ReadAll(c) // a reset ends the read with an error
		return got
	}
	// A cut by reset may drop bytes still in flight: at most the budget
	// arrives, and never anything beyond it.
	if got := read(50); len(got) > 5000 || !bytes.HasPrefix(payload, got) {
		t.Errorf("50 KB through a 5000-byte budget: got %d bytes, want at most the first 5000", len(got))
	}
	if got := read(3); !bytes.Equal(got, payload[:3000]) {
		t.Errorf("3 KB through a 5000-byte budget: got %d bytes, want all 3000", len(got))
	}
	if p.Cuts() != 1 {
		t.Errorf("Cuts() = %d, want 1", p.Cuts())
	}
}
