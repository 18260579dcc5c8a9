package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"parley.dev/parley/a2a"
)

// Media types (brief §9.4).
const (
	contentTypeJSON = "application/json"
	contentTypeA2A  = "application/a2a+json"
	contentTypeSSE  = "text/event-stream"
)

// maxResponseSize bounds a unary response body.
const maxResponseSize = 64 << 20

// httpBase is what both HTTP transports share: the client, the headers of
// every request, and reading responses.
type httpBase struct {
	hc     *http.Client
	header http.Header
}

func newHTTPBase(cfg TransportConfig) httpBase {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return httpBase{hc: hc, header: cfg.Header.Clone()}
}

// checkURL accepts an absolute http or https URL.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("a2a client: interface URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("a2a client: interface URL %q is not an absolute http or https URL", raw)
	}
	return u, nil
}

// send performs one request and returns the response, or the error a
// Transport reports when no response arrived.
func (h *httpBase) send(ctx context.Context, op, method, u string, body []byte, contentType, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s: %w", op, err)
	}
	for k, v := range h.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, requestFailure(ctx, op, u, err)
	}
	return resp, nil
}

// readAll reads a unary response body, bounded by maxResponseSize.
func readAll(ctx context.Context, op, u string, resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err != nil {
		return nil, readFailure(ctx, op, u, PhaseResponse, err)
	}
	if len(b) > maxResponseSize {
		return nil, &TransportError{Op: op, URL: u, Phase: PhaseResponse, StatusCode: resp.StatusCode,
			Err: fmt.Errorf("response larger than %d bytes", maxResponseSize)}
	}
	return b, nil
}

// failure is the error for a non-2xx response: the protocol error its body
// carries, or a *TransportError with the status.
func failure(op, u string, resp *http.Response, body []byte) error {
	if e := httpError(resp.StatusCode, resp.Header, body); e != nil {
		return e
	}
	return &TransportError{Op: op, URL: u, Phase: PhaseResponse, StatusCode: resp.StatusCode, Err: bodySnippet(body)}
}

// bodySnippet describes an unexpected body in an error message.
func bodySnippet(body []byte) error {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return nil
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Errorf("unexpected body %q", s)
}

// isEventStream reports whether the response is Server-Sent Events.
func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == contentTypeSSE
}

// decodeFunc turns one SSE event into a stream item: a StreamResponse, or
// an error that ends the stream. It returns nil, nil for an event to skip.
type decodeFunc func(ev sseEvent) (*a2a.StreamResponse, error)

// readEvents yields the events of an SSE response until it ends, an error
// arrives, ctx is canceled, or the consumer stops; the body is closed in
// every case.
func readEvents(ctx context.Context, op, u string, resp *http.Response, decode decodeFunc, yield func(a2a.StreamEvent, error) bool) {
	defer resp.Body.Close()
	rd := newSSEReader(resp.Body, maxEventSize)
	for {
		ev, err := rd.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			yield(a2a.StreamEvent{}, readFailure(ctx, op, u, PhaseStream, err))
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
		if !yield(a2a.StreamEvent{Seq: ev.id, Response: sr}, nil) {
			return
		}
	}
}

// errorSeq is a stream whose only item is err.
func errorSeq(err error) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) { yield(a2a.StreamEvent{}, err) }
}
