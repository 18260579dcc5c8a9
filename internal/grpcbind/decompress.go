package grpcbind

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"connectrpc.com/connect"
)

// What one message may make a peer inflate. A gRPC message may be
// compressed (grpc-encoding: gzip), and connect-go bounds the message it
// inflates by its read limit (connect.WithReadMaxBytes), but it then
// inflates the rest of a message over the limit, to say how large it was:
// 9 MiB of gzip that inflate to 9 GiB cost seconds of CPU before they are
// refused. The gzip decompressor here stops as soon as a message passes
// the limit, so a message costs at most the limit's worth of inflating
// (spec §13.4: "Agents SHOULD implement appropriate limits on message
// sizes"). Every service this package serves reads with it (the A2A
// service, health, reflection), so does the v0.3 service, and so do both
// versions' clients.

const gzipName = "gzip"

// ReadLimit bounds what a handler reads of one request message: at most
// maxBytes (DefaultMaxRecvBytes when maxBytes is 0 or less), as sent or
// once inflated. A message over it is refused with RESOURCE_EXHAUSTED.
func ReadLimit(maxBytes int) connect.HandlerOption {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRecvBytes
	}
	dec, enc := boundedGzip(maxBytes)
	return connect.WithHandlerOptions(
		connect.WithReadMaxBytes(maxBytes),
		connect.WithCompression(gzipName, nil, nil), // connect-go's own gzip
		connect.WithCompression(gzipName, dec, enc),
	)
}

// ClientReadLimit is ReadLimit for a client reading response messages of
// a server it does not trust.
func ClientReadLimit(maxBytes int) connect.ClientOption {
	dec, enc := boundedGzip(maxBytes)
	return connect.WithClientOptions(
		connect.WithReadMaxBytes(maxBytes),
		connect.WithAcceptCompression(gzipName, nil, nil),
		connect.WithAcceptCompression(gzipName, dec, enc),
	)
}

// boundedGzip returns the constructors of a gzip decompressor that fails
// once it has inflated more than maxBytes of one message, and of the
// standard gzip compressor (connect-go's default).
func boundedGzip(maxBytes int) (func() connect.Decompressor, func() connect.Compressor) {
	return func() connect.Decompressor { return &limitedGzip{max: int64(maxBytes)} },
		func() connect.Compressor { return gzip.NewWriter(io.Discard) }
}

// limitedGzip inflates one message at a time (Reset starts the next) and
// fails once it has produced more than max bytes of it. connect-go reads
// max+1 bytes, sees the message is over its limit, and reads on only to
// measure it: that read fails at once, and the message is refused with
// RESOURCE_EXHAUSTED, its size left unsaid.
type limitedGzip struct {
	zr       *gzip.Reader
	max, out int64
}

func (d *limitedGzip) Reset(r io.Reader) error {
	d.out = 0
	if d.zr == nil {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		d.zr = zr
		return nil
	}
	return d.zr.Reset(r)
}

func (d *limitedGzip) Read(p []byte) (int, error) {
	if d.zr == nil {
		return 0, errors.New("gzip: no message to read")
	}
	if d.out > d.max {
		return 0, fmt.Errorf("inflating stopped at the limit of %d bytes", d.max)
	}
	n, err := d.zr.Read(p)
	d.out += int64(n)
	return n, err
}

func (d *limitedGzip) Close() error {
	if d.zr == nil {
		return nil
	}
	return d.zr.Close()
}
