package check

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"parley.dev/parley/a2a"
)

// The gRPC half of the checker's wire layer: the gRPC protocol spoken by
// hand over HTTP/2 (length-prefixed protobuf messages, the call's status
// in grpc-status, grpc-message and grpc-status-details-bin), so that a
// grader sees the status, metadata and details exactly as the server sent
// them. Only the identity encoding is offered (no grpc-accept-encoding);
// a gzipped message is read anyway.

// grpcServicePath is the path prefix of the A2A service's methods.
const grpcServicePath = "/lf.a2a.v1.A2AService/"

// grpcCodeNames are the google.rpc.Code names, by number.
var grpcCodeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func grpcCodeName(c int) string {
	if c >= 0 && c < len(grpcCodeNames) {
		return grpcCodeNames[c]
	}
	return "code " + strconv.Itoa(c)
}

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

// grpcStatus is the status a gRPC call ended with.
type grpcStatus struct {
	Code    int
	Message string
	Details *spb.Status // decoded grpc-status-details-bin, nil if absent
	BadBin  error       // grpc-status-details-bin present but undecodable
	Where   string      // "trailers", or "headers" for a trailers-only response
}

// grpcStatusOf reads the status from the trailers, or from the headers of
// a trailers-only response; nil when there is none.
func grpcStatusOf(header, trailer http.Header) *grpcStatus {
	h, where := trailer, "trailers"
	if h.Get("Grpc-Status") == "" {
		h, where = header, "headers"
	}
	v := h.Get("Grpc-Status")
	if v == "" {
		return nil
	}
	st := &grpcStatus{Where: where, Code: -1}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		st.Code = n
	}
	st.Message = h.Get("Grpc-Message")
	if m, err := url.PathUnescape(st.Message); err == nil {
		st.Message = m
	}
	if bin := h.Get("Grpc-Status-Details-Bin"); bin != "" {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "="))
		if err == nil {
			s := &spb.Status{}
			if err = proto.Unmarshal(raw, s); err == nil {
				st.Details = s
			}
		}
		st.BadBin = err
	}
	return st
}

// wireError describes a status other than OK as a protocol error.
func (st *grpcStatus) wireError(httpStatus int) *wireError {
	e := &wireError{Shape: "grpc", Status: grpcCodeName(st.Code), GRPCCode: st.Code, Message: st.Message, DetailsOK: st.BadBin == nil}
	if httpStatus != http.StatusOK {
		e.HTTPStatus = httpStatus
	}
	if st.Details != nil {
		e.HasDetails = len(st.Details.GetDetails()) > 0
		if st.Details.GetCode() != int32(st.Code) {
			e.DetailsOK = false // grpc-status-details-bin disagrees with grpc-status
		}
		for _, d := range st.Details.GetDetails() {
			m, err := d.UnmarshalNew()
			if err != nil {
				continue
			}
			if info, ok := m.(*errdetails.ErrorInfo); ok && (!e.HasInfo || info.GetDomain() == a2a.DomainA2A) {
				e.HasInfo = true
				e.Reason, e.Domain = info.GetReason(), info.GetDomain()
				e.Metadata = info.GetMetadata()
			}
		}
	}
	if c, ok := a2a.CodeForReason(e.Reason); ok {
		e.Code, e.Known = c, true
		return e
	}
	switch e.Status {
	case "UNAUTHENTICATED":
		e.Code, e.Known = a2a.CodeUnauthenticated, true
	case "INVALID_ARGUMENT":
		e.Code, e.Known = a2a.CodeInvalidParams, true
	case "NOT_FOUND":
		e.Code, e.Known = a2a.CodeTaskNotFound, true
	case "UNIMPLEMENTED":
		e.Code, e.Known = a2a.CodeMethodNotFound, true
	case "INTERNAL":
		e.Code, e.Known = a2a.CodeInternal, true
	}
	return e
}

// describe renders the status on one line.
func (st *grpcStatus) describe() string {
	if st == nil {
		return "no grpc-status"
	}
	s := fmt.Sprintf("grpc-status %d %s", st.Code, grpcCodeName(st.Code))
	if st.Message != "" {
		s += " " + strconv.Quote(abridge(st.Message, 100))
	}
	for _, d := range st.Details.GetDetails() {
		m, err := d.UnmarshalNew()
		if err != nil {
			s += "; detail " + string(d.MessageName().Name())
			continue
		}
		switch v := m.(type) {
		case *errdetails.ErrorInfo:
			s += fmt.Sprintf("; ErrorInfo reason %s domain %s", v.GetReason(), v.GetDomain())
			if len(v.GetMetadata()) > 0 {
				s += fmt.Sprintf(" metadata %v", v.GetMetadata())
			}
		case *errdetails.BadRequest:
			for _, f := range v.GetFieldViolations() {
				s += fmt.Sprintf("; BadRequest %s: %s", f.GetField(), abridge(f.GetDescription(), 60))
			}
		default:
			s += "; detail " + string(m.ProtoReflect().Descriptor().Name())
		}
	}
	if st.BadBin != nil {
		s += "; grpc-status-details-bin undecodable"
	}
	return s
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

// newGRPCRequest builds the HTTP/2 request of a gRPC call. It returns the
// request and the request message as JSON, for reports.
func (t *target) newGRPCRequest(ctx context.Context, method string, req proto.Message, o callOpts) (*http.Request, []byte, error) {
	if req != nil && t.tenant != "" && !o.noTenant {
		req = proto.Clone(req)
		setTenant(req, t.tenant)
	}
	var payload, shown []byte
	switch {
	case o.rawBody != nil:
		payload, shown = o.rawBody, []byte(fmt.Sprintf("(%d bytes as they are)", len(o.rawBody)))
	case req != nil:
		var err error
		if payload, err = proto.Marshal(req); err != nil {
			return nil, nil, err
		}
		if shown, err = a2a.Marshal(req); err != nil {
			return nil, nil, err
		}
	}
	frame := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(payload)))
	copy(frame[5:], payload)
	u := t.url + grpcServicePath + method
	if o.query != "" {
		u += "?" + o.query
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(frame))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range t.header {
		switch strings.ToLower(k) {
		case "content-type", "te", "connection", "host", "content-length", "accept", "accept-encoding":
			continue
		}
		hr.Header[k] = append([]string(nil), v...)
	}
	ct := "application/grpc"
	if o.contentType != "" {
		ct = o.contentType
	}
	hr.Header.Set("Content-Type", ct)
	hr.Header.Set("Te", "trailers")
	switch {
	case o.version == nil:
		hr.Header.Set("A2A-Version", a2a.ProtocolVersion)
	case *o.version != "":
		hr.Header.Set("A2A-Version", *o.version)
	}
	tok := t.token
	if o.token != nil {
		tok = *o.token
	}
	if tok != "" {
		hr.Header.Set("Authorization", "Bearer "+tok)
	}
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

// grpcCall performs a unary gRPC call.
func (t *target) grpcCall(ctx context.Context, method string, req proto.Message, o callOpts) *result {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	hr, shown, err := t.newGRPCRequest(ctx, method, req, o)
	if err != nil {
		return &result{ex: &exchange{Method: "?", Err: fmt.Errorf("checker: building the request: %w", err)}}
	}
	ex := &exchange{Method: hr.Method, URL: hr.URL.String(), ReqHeader: hr.Header.Clone(), ReqBody: shown, IsGRPC: true}
	start := time.Now()
	resp, err := t.hc.Do(hr)
	if err != nil {
		ex.Err, ex.Elapsed = err, time.Since(start)
		return &result{ex: ex}
	}
	defer resp.Body.Close()
	ex.Status, ex.Header, ex.Proto = resp.StatusCode, resp.Header, resp.ProtoMajor
	r := &result{ex: ex}
	if !isGRPCContentType(resp.Header) || resp.StatusCode != http.StatusOK {
		ex.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		ex.Elapsed = time.Since(start)
		if st := grpcStatusOf(resp.Header, resp.Trailer); st != nil && st.Code != 0 {
			ex.GRPC = st
			r.err = st.wireError(resp.StatusCode)
			return r
		}
		if e := httpLevelError(ex); e != nil {
			r.err = e
			return r
		}
		r.broken = fmt.Sprintf("not a gRPC response (HTTP %d, Content-Type %q)", resp.StatusCode, resp.Header.Get("Content-Type"))
		return r
	}
	fr := &frameReader{r: resp.Body, encoding: resp.Header.Get("Grpc-Encoding")}
	var msgs [][]byte
	var ferr error
	for {
		m, err := fr.next()
		if err != nil {
			if err != io.EOF {
				ferr = err
			}
			break
		}
		msgs = append(msgs, m)
	}
	ex.Elapsed = time.Since(start)
	ex.Trailer = resp.Trailer
	st := grpcStatusOf(resp.Header, resp.Trailer)
	ex.GRPC = st
	switch {
	case ferr != nil && ctx.Err() == nil && st == nil:
		ex.Err = fmt.Errorf("reading the response: %w", ferr)
	case ferr != nil && st == nil:
		ex.Err = ctx.Err()
	case st == nil:
		r.broken = "the call ended without a grpc-status"
	case st.Code != 0:
		r.err = st.wireError(resp.StatusCode)
	case ferr != nil:
		r.broken = "unreadable response message: " + ferr.Error()
	case len(msgs) != 1:
		r.broken = fmt.Sprintf("%d response messages for a unary call", len(msgs))
	default:
		r.bin = msgs[0]
		if out := grpcOutput(method); out != nil {
			if err := proto.Unmarshal(r.bin, out); err != nil {
				r.broken = "the response message does not decode: " + err.Error()
				return r
			}
			r.raw, _ = a2a.Marshal(out)
			ex.Body = r.raw
		}
		if r.raw == nil {
			r.raw = []byte("{}")
		}
	}
	return r
}

// grpcStream performs a server-streaming gRPC call and reads its messages
// as ctl says. An error status after no message is the call's error
// (res.err), as a trailers-only response is; after messages it is a last
// event carrying the error.
func (t *target) grpcStream(ctx context.Context, method string, req proto.Message, o callOpts, ctl streamCtl) *result {
	if ctl.max == 0 {
		ctl.max = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hr, shown, err := t.newGRPCRequest(ctx, method, req, o)
	if err != nil {
		return &result{ex: &exchange{Method: "?", Err: fmt.Errorf("checker: building the request: %w", err)}}
	}
	ex := &exchange{Method: hr.Method, URL: hr.URL.String(), ReqHeader: hr.Header.Clone(), ReqBody: shown, IsGRPC: true, Streaming: true}
	start := time.Now()
	resp, err := t.hc.Do(hr)
	if err != nil {
		ex.Err, ex.Elapsed = err, time.Since(start)
		return &result{ex: ex}
	}
	defer resp.Body.Close()
	ex.Status, ex.Header, ex.Proto = resp.StatusCode, resp.Header, resp.ProtoMajor
	r := &result{ex: ex, idOK: true}
	if !isGRPCContentType(resp.Header) || resp.StatusCode != http.StatusOK || resp.Header.Get("Grpc-Status") != "" {
		// Not a stream: an error (trailers-only, or not gRPC at all).
		ex.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		ex.Elapsed = time.Since(start)
		st := grpcStatusOf(resp.Header, resp.Trailer)
		ex.GRPC = st
		switch {
		case st != nil && st.Code != 0:
			r.err = st.wireError(resp.StatusCode)
		case st != nil && isGRPCContentType(resp.Header) && resp.StatusCode == http.StatusOK:
			ex.Closed = true // an empty stream
		case httpLevelError(ex) != nil:
			r.err = httpLevelError(ex)
		default:
			r.broken = fmt.Sprintf("not a gRPC response (HTTP %d, Content-Type %q)", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return r
	}
	fr := &frameReader{r: resp.Body, encoding: resp.Header.Get("Grpc-Encoding")}
	ended := false
	next := func() (*event, error) {
		if ended {
			return nil, io.EOF
		}
		m, err := fr.next()
		if err == io.EOF {
			ended = true
			st := grpcStatusOf(http.Header{}, resp.Trailer)
			switch {
			case st == nil:
				return nil, errors.New("the stream ended without a grpc-status")
			case st.Code != 0:
				return &event{Err: st.wireError(http.StatusOK)}, nil
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		ev := &event{Data: m}
		sr := &a2a.StreamResponse{}
		if err := proto.Unmarshal(m, sr); err != nil {
			ev.DecodeErr = err
		} else {
			ev.Resp = sr
		}
		return ev, nil
	}
	take := func(ev *event) bool {
		if ev.Err != nil && len(ex.Events) == 0 {
			r.err = ev.Err // an error before any message is the call's error
			return false
		}
		return true
	}
	t.readEvents(ctx, ex, r, start, next, take, ctl)
	if ex.Closed {
		// The reader saw the end of the body: the trailers are complete.
		ex.Trailer, ex.GRPC = resp.Trailer, grpcStatusOf(http.Header{}, resp.Trailer)
	}
	return r
}

// describeGRPC renders a gRPC response on one line.
func describeGRPC(r *result) string {
	x := r.ex
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/%d %d %s", x.Proto, x.Status, x.Header.Get("Content-Type"))
	if v := x.Header.Get("WWW-Authenticate"); v != "" {
		b.WriteString("  www-authenticate: " + v)
	}
	if x.Streaming && r.err == nil && r.broken == "" {
		fmt.Fprintf(&b, "  %d messages:", len(x.Events))
		for i, ev := range x.Events {
			if i == 8 && len(x.Events) > 10 {
				fmt.Fprintf(&b, " … (%d more) %s", len(x.Events)-9, x.Events[len(x.Events)-1].kind())
				break
			}
			b.WriteString(" " + ev.kind())
		}
		switch {
		case x.Closed:
			b.WriteString("; then the server ended the call: " + x.GRPC.describe())
		case x.Err != nil:
			b.WriteString("; then " + x.Err.Error())
		default:
			b.WriteString("; stream still open when the checker stopped reading")
		}
		return b.String()
	}
	if x.GRPC != nil {
		b.WriteString("  " + x.GRPC.describe())
	}
	switch {
	case r.broken != "":
		b.WriteString("  " + r.broken)
	case r.err == nil && len(x.Body) > 0:
		b.WriteString("  " + abridge(string(x.Body), 240))
	}
	return b.String()
}
