package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
)

// The gRPC half of the checker's wire layer: the gRPC protocol spoken by
// hand over HTTP/2 (length-prefixed protobuf messages, the call's status
// in grpc-status, grpc-message and grpc-status-details-bin), so that a
// grader sees the status, metadata and details exactly as the server sent
// them. Only the identity encoding is offered (no grpc-accept-encoding);
// a gzipped message is read anyway.

// grpcServicePath is the path prefix of the A2A service's methods.
const grpcServicePath = "/lf.a2a.v1.A2AService/"

// grpcBase turns the url of a GRPC interface into the base URL of its
// calls: a dial target host:port (https when the card was served over
// https, otherwise cleartext HTTP/2), or an http:// or https:// URL.
func grpcBase(target string, tls bool) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(target), "dns:///")
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("%q is not a gRPC dial target (host:port) or an http(s) URL", target)
		}
		return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
	}
	u, err := url.Parse("//" + s)
	if s == "" || err != nil || u.Host != s || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not a gRPC dial target (host:port) or an http(s) URL", target)
	}
	if tls {
		return "https://" + s, nil
	}
	return "http://" + s, nil
}

// grpcHTTPClient returns a client that speaks HTTP/2 only (h2c for http
// URLs, TLS for https ones), built from hc's transport when that is an
// *http.Transport (its TLS settings kept).
func grpcHTTPClient(hc *http.Client) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if hc != nil && hc.Transport != nil {
		rt = hc.Transport
	}
	if ht, ok := rt.(*http.Transport); ok {
		c := ht.Clone()
		p := new(http.Protocols)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		c.Protocols = p
		rt = c
	}
	return &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// isGRPCContentType reports whether a response is gRPC (protobuf).
func isGRPCContentType(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/grpc" || mt == "application/grpc+proto"
}

// grpcOutput returns a new message of the type a method answers with.
func grpcOutput(method string) proto.Message {
	md := a2a.File_a2a_proto.Services().ByName("A2AService").Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil
	}
	return mt.New().Interface()
}

// grpcHopHeaders are the headers of the gRPC protocol itself, never
// copied from the extra headers.
var grpcHopHeaders = []string{"content-type", "te", "connection", "host", "content-length", "accept", "accept-encoding"}

// newGRPCRequest builds the HTTP/2 request of a gRPC call. It returns the
// request and the request message as JSON, for reports.
func (t *target) newGRPCRequest(ctx context.Context, method string, req proto.Message, o callOpts) (*http.Request, []byte, error) {
	req = t.withTenant(req)
	var payload, shown []byte
	switch {
	case o.rawBody != nil:
		payload, shown = o.rawBody, fmt.Appendf(nil, "(%d bytes as they are)", len(o.rawBody))
	case req != nil:
		var err error
		if payload, err = proto.Marshal(req); err != nil {
			return nil, nil, err
		}
		if shown, err = a2a.Marshal(req); err != nil {
			return nil, nil, err
		}
	}
	frame := grpcbind.AppendFrame(nil, payload)
	u := t.url + grpcServicePath + method
	if o.query != "" {
		u += "?" + o.query
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(frame))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range t.header {
		if !slices.Contains(grpcHopHeaders, strings.ToLower(k)) {
			hr.Header[k] = append([]string(nil), v...)
		}
	}
	ct := "application/grpc"
	if o.contentType != "" {
		ct = o.contentType
	}
	hr.Header.Set("Content-Type", ct)
	hr.Header.Set("Te", "trailers")
	t.setCallHeaders(hr.Header, o)
	return hr, shown, nil
}

// frameReader reads length-prefixed gRPC messages.
type frameReader struct {
	r        io.Reader
	encoding string // grpc-encoding of the response
}

// next returns the next message, io.EOF at a clean end.
func (f *frameReader) next() ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("a message prefix cut short: %w", err)
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxBody {
		return nil, fmt.Errorf("a message of %d bytes (the checker reads at most %d)", n, maxBody)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(f.r, msg); err != nil {
		return nil, fmt.Errorf("a message cut short: %w", err)
	}
	if hdr[0]&1 == 0 {
		return msg, nil
	}
	if f.encoding != "gzip" {
		return nil, fmt.Errorf("a compressed message with grpc-encoding %q", f.encoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, maxBody))
}
