package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"
)

// rawConn is a minimal HTTP/1.1 client connection: it writes a request the
// caller built and reads one response (Content-Length or chunked body) into
// a reused buffer. It exists so that the generator spends as little CPU per
// request as it can; it is not a general HTTP client.
type rawConn struct {
	addr string
	nc   net.Conn
	br   *bufio.Reader
	body []byte
}

// errKind is an error tagged with the kind it is counted under.
type errKind struct {
	kind string
	err  error
}

// Error is the kind, then the error.
func (e *errKind) Error() string { return e.kind + ": " + e.err.Error() }

// Unwrap returns the tagged error.
func (e *errKind) Unwrap() error { return e.err }

// kindOf is the kind a failed request is counted under: "timeout" for a
// deadline, else the tag of err ("other" without one).
func kindOf(err error) string {
	var k *errKind
	if errors.As(err, &k) {
		var ne net.Error
		if errors.As(k.err, &ne) && ne.Timeout() {
			return "timeout"
		}
		return k.kind
	}
	return "other"
}

// dial opens the connection.
func (c *rawConn) dial() error {
	nc, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return &errKind{"dial", err}
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c.nc = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 32<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

// close closes the connection, if open; the next roundTrip redials.
func (c *rawConn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// roundTrip sends req and returns the response's status and body (valid
// until the next call). Any error leaves the connection closed.
func (c *rawConn) roundTrip(req []byte, deadline time.Time) (int, []byte, error) {
	if c.nc == nil {
		if err := c.dial(); err != nil {
			return 0, nil, err
		}
	}
	c.nc.SetDeadline(deadline)
	if _, err := c.nc.Write(req); err != nil {
		c.close()
		return 0, nil, &errKind{"write", err}
	}
	status, keep, err := c.readResponse()
	if err != nil {
		c.close()
		return 0, nil, err
	}
	if !keep {
		c.close()
	}
	return status, c.body, nil
}

// The response headers the reader looks at, in lower case.
var (
	hContentLength    = []byte("content-length:")
	hTransferEncoding = []byte("transfer-encoding:")
	hConnection       = []byte("connection:")
)

// readResponse reads one response into c.body; keep says whether the
// connection can carry the next request.
func (c *rawConn) readResponse() (status int, keep bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, &errKind{"read", err}
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, &errKind{"protocol", fmt.Errorf("bad status line %q", line)}
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, &errKind{"protocol", fmt.Errorf("bad status line %q", line)}
	}
	keep = line[7] == '1' // HTTP/1.1 keeps the connection by default
	length, chunked := -1, false
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, &errKind{"read", err}
		}
		if len(line) <= 2 {
			break // the empty line ending the header
		}
		switch {
		case hasPrefixFold(line, hContentLength):
			length, err = strconv.Atoi(string(bytes.TrimSpace(line[len(hContentLength):])))
			if err != nil || length < 0 {
				return 0, false, &errKind{"protocol", fmt.Errorf("bad header %q", line)}
			}
		case hasPrefixFold(line, hTransferEncoding):
			chunked = bytes.Contains(bytes.ToLower(line), []byte("chunked"))
		case hasPrefixFold(line, hConnection):
			v := bytes.ToLower(line[len(hConnection):])
			if bytes.Contains(v, []byte("close")) {
				keep = false
			} else if bytes.Contains(v, []byte("keep-alive")) {
				keep = true
			}
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		err = c.readChunked()
	case length >= 0:
		c.body = slices.Grow(c.body, length)[:length]
		_, err = io.ReadFull(c.br, c.body)
	default: // the body runs to the end of the connection
		keep = false
		var b bytes.Buffer
		_, err = b.ReadFrom(c.br)
		c.body = append(c.body, b.Bytes()...)
	}
	if err != nil {
		return 0, false, &errKind{"read", err}
	}
	return status, keep, nil
}

// readChunked appends a chunked body to c.body.
func (c *rawConn) readChunked() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseUint(string(line), 16, 31)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, then the empty line
				line, err = c.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		off := len(c.body)
		c.body = slices.Grow(c.body, int(n))[:off+int(n)]
		if _, err := io.ReadFull(c.br, c.body[off:]); err != nil {
			return err
		}
		if _, err := c.br.Discard(2); err != nil { // CRLF after the data
			return err
		}
	}
}

// hasPrefixFold reports whether s begins with prefix, ignoring case.
func hasPrefixFold(s, prefix []byte) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], prefix)
}
