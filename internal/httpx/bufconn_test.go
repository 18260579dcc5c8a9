package httpx

import (
	"io"
	"net"
	"testing"
)

// TestBufferedListener: over a real loopback connection, small reads are
// served from what one read of the socket brought (a frame's header, then
// its payload, as net/http's HTTP/2 server reads), a large read gets the
// rest, and closing the write half (net/http's way of refusing a
// connection) reaches the peer.
func TestBufferedListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := BufferedListener(raw)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	sent := "123456789payload-of-the-first-frame" + "987654321" + string(make([]byte, 10000))
	if _, err := client.Write([]byte(sent)); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 9)
	if _, err := io.ReadFull(server, head); err != nil || string(head) != "123456789" {
		t.Fatalf("header %q, %v", head, err)
	}
	payload := make([]byte, 26)
	if _, err := io.ReadFull(server, payload); err != nil || string(payload) != "payload-of-the-first-frame" {
		t.Fatalf("payload %q, %v", payload, err)
	}
	rest := make([]byte, len(sent)-35)
	if _, err := io.ReadFull(server, rest); err != nil || string(rest) != sent[35:] {
		t.Fatalf("the rest: %d bytes, %v", len(rest), err)
	}

	cw, ok := server.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("the connection has no CloseWrite")
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after CloseWrite the peer read %d bytes, %v; want EOF", n, err)
	}
}
