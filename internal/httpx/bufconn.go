package httpx

import (
	"bufio"
	"net"
)

// Cleartext HTTP/2 reads. net/http's HTTP/2 server reads each frame's
// 9-byte header and then its payload straight from the connection, two
// system calls per frame, where TLS reads whole records into a buffer: a
// gRPC call over h2c (a HEADERS and a DATA frame) cost five reads against
// one for an HTTP/1.1 request, whose server reads through a buffer of its
// own. BufferedListener gives the cleartext connections a read buffer, so
// that the frames a client sent together are read in one call
// (docs/performance.md, 2026-12-07). A read at least as large as the
// buffer (HTTP/1.1's) bypasses it and costs no copy.

// BufferedListener returns ln handing out its connections with a read
// buffer: the listener of a server without TLS.
func BufferedListener(ln net.Listener) net.Listener { return bufferedListener{ln} }

// bufferedListener is the listener BufferedListener returns.
type bufferedListener struct{ net.Listener }

func (l bufferedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, 4<<10)}, nil
}

// bufferedConn is a connection read through a buffer. Deadlines, writes
// and closing are the connection's own.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one it refuses (it looks for this method).
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
