package inspect

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxShown bounds each body kept for the traffic view; the rest is
// counted, not kept (the client still reads all of it).
const maxShown = 1 << 20

// Exchange is one HTTP request to the agent and its response, as the
// traffic view shows them.
type Exchange struct {
	Method          string      `json:"method"`
	URL             string      `json:"url"`
	RequestHeaders  http.Header `json:"requestHeaders"`
	RequestBody     string      `json:"requestBody"`
	Status          int         `json:"status,omitempty"`
	ResponseHeaders http.Header `json:"responseHeaders,omitempty"`
	ResponseBody    string      `json:"responseBody"`
	Trailers        http.Header `json:"trailers,omitempty"`
	// Binary says the bodies are shown as a hex dump (gRPC frames).
	Binary bool `json:"binary,omitempty"`
	// Size is the response body's length in bytes, Truncated whether
	// ResponseBody holds only its first maxShown bytes.
	Size      int64   `json:"size"`
	Truncated bool    `json:"truncated,omitempty"`
	Error     string  `json:"error,omitempty"`
	Started   string  `json:"started"`
	Millis    float64 `json:"millis"`

	began    time.Time
	reqRaw   []byte
	respRaw  bytes.Buffer
	finished bool
}

// recorder keeps the exchanges of one call of the page.
type recorder struct {
	mu sync.Mutex
	ex []*Exchange
}

// snapshot returns the exchanges so far, bodies rendered.
func (r *recorder) snapshot() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, 0, len(r.ex))
	for _, e := range r.ex {
		c := Exchange{Method: e.Method, URL: e.URL, RequestHeaders: e.RequestHeaders, Status: e.Status,
			ResponseHeaders: e.ResponseHeaders, Trailers: e.Trailers, Size: e.Size, Truncated: e.Truncated,
			Error: e.Error, Started: e.Started, Millis: e.Millis}
		binary := isBinary(e.reqRaw) || isBinary(e.respRaw.Bytes())
		c.Binary = binary
		c.RequestBody, c.ResponseBody = render(e.reqRaw, binary), render(e.respRaw.Bytes(), binary)
		if !e.finished {
			c.Millis = float64(time.Since(e.began).Microseconds()) / 1000
		}
		out = append(out, c)
	}
	return out
}

// isBinary reports whether b cannot be shown as text.
func isBinary(b []byte) bool {
	return !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0
}

// render is a body as shown: text as it is, binary as a hex dump.
func render(b []byte, binary bool) string {
	if binary {
		return hex.Dump(b)
	}
	return string(b)
}

// captureTransport records every request and response it carries into
// rec. gRPC requests go over h2 (HTTP/2 only), the others over base.
type captureTransport struct {
	rec      *recorder
	base, h2 http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	e := &Exchange{Method: req.Method, URL: req.URL.String(), RequestHeaders: redact(req.Header), began: time.Now()}
	e.Started = e.began.Format("15:04:05.000")
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxShown+1))
		if err != nil {
			return nil, err
		}
		rest := req.Body
		e.reqRaw = b[:min(len(b), maxShown)]
		req = req.Clone(req.Context())
		req.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), rest), rest}
	}
	t.rec.mu.Lock()
	t.rec.ex = append(t.rec.ex, e)
	t.rec.mu.Unlock()
	rt := t.base
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
		rt = t.h2
	}
	resp, err := rt.RoundTrip(req)
	t.rec.mu.Lock()
	defer t.rec.mu.Unlock()
	if err != nil {
		e.Error, e.finished = err.Error(), true
		e.Millis = float64(time.Since(e.began).Microseconds()) / 1000
		return nil, err
	}
	e.Status, e.ResponseHeaders = resp.StatusCode, resp.Header.Clone()
	resp.Body = &teeBody{rc: resp.Body, e: e, rec: t.rec, resp: resp}
	return resp, nil
}

// redact copies h, hiding the credentials of Authorization.
func redact(h http.Header) http.Header {
	h = h.Clone()
	if v := h.Get("Authorization"); v != "" {
		scheme, _, _ := strings.Cut(v, " ")
		h.Set("Authorization", scheme+" ••••••••")
	}
	return h
}

// teeBody keeps what the client reads of a response body.
type teeBody struct {
	rc   io.ReadCloser
	e    *Exchange
	rec  *recorder
	resp *http.Response
}

// Read implements io.Reader.
func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	b.e.Size += int64(n)
	if keep := maxShown - b.e.respRaw.Len(); keep > 0 {
		b.e.respRaw.Write(p[:min(n, keep)])
	}
	b.e.Truncated = b.e.Size > maxShown
	if err != nil {
		b.end(err)
	}
	return n, err
}

// Close implements io.Closer.
func (b *teeBody) Close() error {
	err := b.rc.Close()
	b.rec.mu.Lock()
	b.end(nil)
	b.rec.mu.Unlock()
	return err
}

// end marks the exchange finished. Callers hold b.rec.mu.
func (b *teeBody) end(err error) {
	if b.e.finished {
		return
	}
	b.e.finished = true
	b.e.Millis = float64(time.Since(b.e.began).Microseconds()) / 1000
	if len(b.resp.Trailer) > 0 {
		b.e.Trailers = b.resp.Trailer.Clone()
	}
	if err != nil && err != io.EOF {
		b.e.Error = err.Error()
	}
}
