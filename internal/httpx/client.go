package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/streamctx"
	"parley.dev/parley/internal/transport"
)

// Media types (spec §9.1, §11.1, §11.7).
const (
	ContentTypeJSON = "application/json"
	ContentTypeA2A  = "application/a2a+json"
	ContentTypeSSE  = "text/event-stream"
)

// maxResponseSize bounds a unary response body.
const maxResponseSize = 64 << 20

// maxEventSize bounds one Server-Sent Event a client reads.
const maxEventSize = 16 << 20

// Caller is the client half both HTTP transports share: the HTTP client,
// the headers of every request, and reading responses. It is safe for
// concurrent use.
type Caller struct {
	hc     *http.Client
	header transport.Headers
}

// NewCaller returns a Caller for a transport's configuration. Its requests
// carry the configuration's headers, credentials among them, so it follows
// no redirect unless the HTTP client decides on redirects itself
// (transport.NoRedirects).
func NewCaller(cfg transport.Config) Caller {
	return Caller{hc: transport.NoRedirects(cfg.HTTPClient), header: cfg.Headers()}
}

// Close closes the HTTP client's idle connections.
func (c *Caller) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// CheckURL accepts an absolute http or https URL.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("a2a client: interface URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("a2a client: interface URL %q is not an absolute http or https URL", raw)
	}
	return u, nil
}

// Send performs one request and returns the response, or the error a
// Transport reports when no response arrived. A SubscribeToTask request
// whose context carries a resume position (client.WithResumeAfter) sends it as
// Last-Event-ID, the SSE standard's header, which both HTTP bindings read.
func (c *Caller) Send(ctx context.Context, op, method, u string, body []byte, contentType, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: %w", op, err)
	}
	if err := c.header.Apply(ctx, req.Header); err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	if seq, ok := streamctx.ResumeAfter(ctx); ok && op == a2a.MethodSubscribeToTask {
		req.Header.Set(streamctx.LastEventIDHeader, strconv.FormatUint(seq, 10))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transport.RequestFailure(ctx, op, u, err)
	}
	return resp, nil
}

// ReadAll reads a unary response body, bounded, and closes it.
func ReadAll(ctx context.Context, op, u string, resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err != nil {
		return nil, transport.ReadFailure(ctx, op, u, transport.PhaseResponse, err)
	}
	if len(b) > maxResponseSize {
		return nil, &transport.Error{Op: op, URL: u, Phase: transport.PhaseResponse, StatusCode: resp.StatusCode,
			Err: fmt.Errorf("response larger than %d bytes", maxResponseSize)}
	}
	return b, nil
}

// Failure is the error for a non-2xx response: the protocol error its body
// carries, or a *transport.Error with the status.
func Failure(op, u string, resp *http.Response, body []byte) error {
	if e := HTTPError(resp.StatusCode, resp.Header, body); e != nil {
		return e
	}
	return &transport.Error{Op: op, URL: u, Phase: transport.PhaseResponse, StatusCode: resp.StatusCode,
		RetryAfter: RetryAfter(resp.Header), Err: BodySnippet(body)}
}

// RetryAfter is the wait a response's Retry-After header asks for when it
// is given in seconds (RFC 9110 §10.2.3); 0 when it is absent, or an HTTP
// date (read as no particular wait).
func RetryAfter(h http.Header) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get("Retry-After")), 10, 32)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// Success reports whether the response has a 2xx status.
func Success(resp *http.Response) bool { return resp.StatusCode >= 200 && resp.StatusCode <= 299 }

// BodySnippet describes an unexpected body in an error message (nil for
// an empty body). An HTML page, which is what a URL that is not an agent
// usually answers, is named by its title rather than quoted.
func BodySnippet(body []byte) error {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return nil
	}
	if isHTML(s) {
		if title := htmlTitle(s); title != "" {
			return fmt.Errorf("unexpected body: an HTML page titled %q", title)
		}
		return errors.New("unexpected body: an HTML page")
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Errorf("unexpected body %q", s)
}

// IsEventStream reports whether the response is Server-Sent Events.
func IsEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == ContentTypeSSE
}

// EventDecoder turns one SSE event into a stream item: a StreamResponse,
// or an error that ends the stream. It returns nil, nil for an event to
// skip.
type EventDecoder func(ev sse.Event) (*a2a.StreamResponse, error)

// ReadEvents is the stream of an SSE response, each event decoded by
// decode, until the response ends, an error arrives, ctx is canceled, or
// the consumer stops; the body is closed in every case.
func ReadEvents(ctx context.Context, op, u string, resp *http.Response, decode EventDecoder) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		defer resp.Body.Close()
		rd := sse.NewReader(resp.Body, maxEventSize)
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(a2a.StreamEvent{}, transport.ReadFailure(ctx, op, u, transport.PhaseStream, err))
				return
			}
			sr, err := decode(ev)
			if err != nil {
				yield(a2a.StreamEvent{}, err)
				return
			}
			if sr == nil {
				continue
			}
			if !yield(a2a.StreamEvent{Seq: ev.ID, Response: sr}, nil) {
				return
			}
		}
	}
}

// NoContent reports whether a response body carries nothing to decode for
// an operation without a result (google.protobuf.Empty): an empty body
// (REST 204), JSON null (a JSON-RPC result) or {}.
func NoContent(out proto.Message, body []byte) bool {
	if _, ok := out.(*emptypb.Empty); !ok {
		return false
	}
	b := bytes.TrimSpace(body)
	return len(b) == 0 || string(b) == "null" || string(b) == "{}"
}

// isHTML reports whether a body looks like an HTML document.
func isHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 512)])
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") || strings.Contains(head, "<head>") || strings.Contains(head, "<body")
}

// htmlTitle returns the text of an HTML document's title element, trimmed
// and bounded, or "".
func htmlTitle(s string) string {
	lower := strings.ToLower(s)
	i := strings.Index(lower, "<title")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(lower[i:], '>')
	k := strings.Index(lower[i:], "</title>")
	if j < 0 || k < j {
		return ""
	}
	title := strings.Join(strings.Fields(s[i+j+1:i+k]), " ")
	if len(title) > 80 {
		title = title[:80] + "..."
	}
	return title
}

// ClosedBeforeAnswer reports whether a request failed because its
// connection was closed or reset before any answer arrived (a reset, a
// broken pipe, an end of file, an HTTP/2 connection never established).
// Under TLS 1.3 it is also how a server's refusal of the client's
// certificate, or of its lack of one, usually reaches the client: the
// server judges the certificate after the client finished its handshake.
func ClosedBeforeAnswer(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "http2: client conn could not be established") ||
		strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "broken pipe") || strings.HasSuffix(msg, "EOF")
}
