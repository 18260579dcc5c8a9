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
	redialer // opens the connections, paced after connection errors (dial.go)
	nc       net.Conn
	br       *bufio.Reader
	body     []byte
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

// dial opens the connection, by deadline, pacing the attempts after
// connection errors (dialGate.dial).
func (c *rawConn) dial(deadline time.Time) error {
	nc, err := c.open(deadline)
	if err != nil {
		return err
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

// broke closes the connection after an error on it (redialer.broke).
func (c *rawConn) broke() {
	c.redialer.broke()
	c.close()
}

// roundTrip sends req and returns the response's status and body (valid
// until the next call). Any error leaves the connection closed.
func (c *rawConn) roundTrip(req []byte, deadline time.Time) (int, []byte, error) {
	if c.nc == nil {
		if err := c.dial(deadline); err != nil {
			return 0, nil, err
		}
	}
	c.nc.SetDeadline(deadline)
	if _, err := c.nc.Write(req); err != nil {
		c.broke()
		return 0, nil, &errKind{"write", err}
	}
	status, keep, err := c.readResponse()
	if err != nil {
		c.broke()
		return 0, nil, err
	}
	c.answered()
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
	status, keep, _, err = c.readBody(0)
	return status, keep, err
}

// readBody reads one response into c.body. With stopAfter > 0 it stops
// reading a chunked body (a stream) once c.body holds that many complete
// Server-Sent Events; cut then says the body was left unread, and the
// connection cannot carry another request.
func (c *rawConn) readBody(stopAfter int) (status int, keep, cut bool, err error) {
	status, keep, length, chunked, err := c.readHead()
	if err != nil {
		return 0, false, false, err
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		cut, err = c.readChunked(stopAfter)
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
		return 0, false, false, &errKind{"read", err}
	}
	return status, keep && !cut, cut, nil
}

// readHead reads a response's status line and header: the status, whether
// the connection may be kept, the Content-Length (-1 when absent) and
// whether the body is chunked.
func (c *rawConn) readHead() (status int, keep bool, length int, chunked bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, 0, false, &errKind{"read", err}
	}
	bad := func(what string) (int, bool, int, bool, error) {
		return 0, false, 0, false, &errKind{"protocol", fmt.Errorf("bad %s %q", what, line)}
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return bad("status line")
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return bad("status line")
	}
	keep = line[7] == '1' // HTTP/1.1 keeps the connection by default
	length = -1
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, 0, false, &errKind{"read", err}
		}
		if len(line) <= 2 {
			return status, keep, length, chunked, nil // the empty line ending the header
		}
		switch {
		case hasPrefixFold(line, hContentLength):
			length, err = strconv.Atoi(string(bytes.TrimSpace(line[len(hContentLength):])))
			if err != nil || length < 0 {
				return bad("header")
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
}

// eventEnd ends every Server-Sent Event Parley and the ceiling write.
var eventEnd = []byte("\n\n")

// readChunked appends a chunked body to c.body; with stopAfter > 0 it
// stops, cut, once c.body holds stopAfter events.
func (c *rawConn) readChunked(stopAfter int) (cut bool, err error) {
	events := 0
	for {
		if stopAfter > 0 && events >= stopAfter {
			return true, nil
		}
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return false, err
		}
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseUint(string(line), 16, 31)
		if err != nil {
			return false, fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, then the empty line
				line, err = c.br.ReadSlice('\n')
				if err != nil {
					return false, err
				}
				if len(line) <= 2 {
					return false, nil
				}
			}
		}
		off := len(c.body)
		c.body = slices.Grow(c.body, int(n))[:off+int(n)]
		if _, err := io.ReadFull(c.br, c.body[off:]); err != nil {
			return false, err
		}
		if _, err := c.br.Discard(2); err != nil { // CRLF after the data
			return false, err
		}
		if stopAfter > 0 {
			events = bytes.Count(c.body, eventEnd) // an event may span chunks
		}
	}
}

// hasPrefixFold reports whether s begins with prefix, ignoring case.
func hasPrefixFold(s, prefix []byte) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], prefix)
}
