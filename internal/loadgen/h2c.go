package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Conn is a minimal HTTP/2 client connection without TLS (prior
// knowledge, RFC 9113 §3.3) for gRPC calls, one at a time: a call is one
// write, its HEADERS and its DATA frame (which ends the stream) together,
// as gRPC clients commonly send a unary request, and its answer is read
// frame by frame into a reused buffer. It is the HTTP/2 counterpart of
// rawConn, there so that the generator spends little per call and the
// server sees a call the way it sees one from a real client (net/http's
// client flushes the headers and the body apart). It is not a general
// client: no TLS, no push, no priorities, no request bigger than a frame.
type h2Conn struct {
	redialer        // opens the connections, paced after connection errors (dial.go)
	header   []byte // the HPACK block of the request header, stateless
	nc       net.Conn
	bw       *bufio.Writer
	fr       *http2.Framer
	dec      *hpack.Decoder
	stream   uint32 // the last stream id used
	// sendWin is the connection's send window, as the server's
	// WINDOW_UPDATE frames replenish it; recvd counts what was received
	// since the last WINDOW_UPDATE sent.
	sendWin, recvd int64
	body           []byte // the last answer's messages, gRPC frames
	status         int
	grpcStatus     string
	grpcMessage    string
}

// h2Window is the receive window the client announces, for the connection
// and each stream: large, so that it rarely has to send an update.
const h2Window = 1 << 30

// newH2Conn returns a client of the procedure at rawURL whose connection
// attempts gate paces (nothing is dialled before the first call).
func newH2Conn(rawURL string, gate *dialGate) *h2Conn {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err) // newEndpoint checked the URL
	}
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	var hb []byte
	enc := hpack.NewEncoder(&appendWriter{&hb})
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", u.Host}, {":path", u.EscapedPath()},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"a2a-version", "1.0"}} {
		// Never indexed: the block leaves the server's table as it was,
		// so the same bytes can be sent on every call.
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1], Sensitive: true})
	}
	return &h2Conn{redialer: redialer{addr: addr, gate: gate}, header: hb}
}

// appendWriter appends what is written to a slice.
type appendWriter struct{ b *[]byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// dial opens the connection by deadline, the attempt paced after
// connection errors as every binding's are (redialer), and sends the
// preface, the client's settings and its connection window.
func (c *h2Conn) dial(deadline time.Time) error {
	nc, err := c.open(deadline)
	if err != nil {
		return err
	}
	c.nc, c.bw, c.stream, c.sendWin, c.recvd = nc, bufio.NewWriterSize(nc, 8<<10), 0, 65535, 0
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(nc, 32<<10))
	c.fr.MaxHeaderListSize = 1 << 20
	c.dec = hpack.NewDecoder(4096, nil)
	c.fr.ReadMetaHeaders = c.dec
	c.bw.WriteString(http2.ClientPreface)
	c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window}, http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	c.fr.WriteWindowUpdate(0, h2Window-65535)
	if err := c.bw.Flush(); err != nil {
		c.redialer.broke()
		c.close()
		return &errKind{"write", err}
	}
	return nil
}

// close closes the connection, if open; the next call redials.
func (c *h2Conn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// roundTrip calls the procedure with frame (a gRPC message) and returns
// the HTTP status and the answer's messages (valid until the next call).
// A gRPC status other than OK is an error of the kind "grpc CODE". Any
// error leaves the connection closed; one before the connection's first
// answer counts as a connection error (redialer.broke).
func (c *h2Conn) roundTrip(frame []byte, deadline time.Time) (int, []byte, error) {
	if c.nc == nil {
		if err := c.dial(deadline); err != nil {
			return 0, nil, err
		}
	}
	c.nc.SetDeadline(deadline)
	status, body, err := c.call(frame)
	if err != nil {
		c.redialer.broke()
		c.close()
	}
	return status, body, err
}

// call sends one call and reads its answer.
func (c *h2Conn) call(frame []byte) (int, []byte, error) {
	for c.sendWin < int64(len(frame)) { // wait for the server to open the window
		if _, err := c.readFrame(); err != nil {
			return 0, nil, err
		}
	}
	c.stream += 2
	if c.stream == 0 || c.stream > 1<<31-1 {
		return 0, nil, &errKind{"protocol", errors.New("out of stream ids")}
	}
	c.stream |= 1
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: c.stream, BlockFragment: c.header, EndHeaders: true})
	c.fr.WriteData(c.stream, true, frame)
	c.sendWin -= int64(len(frame))
	if err := c.bw.Flush(); err != nil {
		return 0, nil, &errKind{"write", err}
	}
	c.body, c.status, c.grpcStatus, c.grpcMessage = c.body[:0], 0, "", ""
	for {
		end, err := c.readFrame()
		if err != nil {
			return 0, nil, err
		}
		if end {
			break
		}
	}
	c.answered()
	switch {
	case c.status != 200:
		return c.status, c.body, nil
	case c.grpcStatus == "":
		return 0, nil, &errKind{"grpc no status", fmt.Errorf("HTTP 200 without grpc-status: %.200q", c.body)}
	case c.grpcStatus != "0":
		return 0, nil, &errKind{"grpc " + c.grpcStatus, errors.New(c.grpcMessage)}
	}
	return c.status, c.body, nil
}

// readFrame reads and handles one frame; end says it ended the current
// stream.
func (c *h2Conn) readFrame() (end bool, err error) {
	f, err := c.fr.ReadFrame()
	if err != nil {
		return false, &errKind{"read", err}
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if !f.IsAck() {
			err = c.fr.WriteSettingsAck()
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			err = c.fr.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.sendWin += int64(f.Increment)
		}
	case *http2.GoAwayFrame:
		return false, &errKind{"goaway", fmt.Errorf("the server sent GOAWAY %v", f.ErrCode)}
	case *http2.RSTStreamFrame:
		if f.StreamID == c.stream {
			return false, &errKind{"reset", fmt.Errorf("the server reset the stream: %v", f.ErrCode)}
		}
	case *http2.MetaHeadersFrame:
		if f.StreamID != c.stream {
			break
		}
		if s := f.PseudoValue("status"); s != "" {
			c.status, _ = strconv.Atoi(s)
		}
		for _, h := range f.RegularFields() {
			switch h.Name {
			case "grpc-status":
				c.grpcStatus = h.Value
			case "grpc-message":
				c.grpcMessage, _ = url.PathUnescape(h.Value)
			}
		}
		end = f.StreamEnded()
	case *http2.DataFrame:
		if f.StreamID == c.stream {
			c.body = append(c.body, f.Data()...)
			end = f.StreamEnded()
		}
		if c.recvd += int64(f.Length); c.recvd >= h2Window/2 {
			err = c.fr.WriteWindowUpdate(0, uint32(c.recvd))
			c.recvd = 0
		}
	}
	if err == nil && c.bw.Buffered() > 0 {
		err = c.bw.Flush()
	}
	if err != nil {
		return false, &errKind{"write", err}
	}
	return end, nil
}
