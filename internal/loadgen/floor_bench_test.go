package loadgen

import (
	"bytes"
	"net/http"
	"testing"
)

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkFloorSend is the floor's work for one blocking JSON-RPC
// SendMessage as the load generator sends it: the envelope and the
// request decoded, the answer built and encoded.
func BenchmarkFloorSend(b *testing.B) {
	ep := &endpoint{msgID: "lg-0123456789abcdef-0000-00000000"}
	body := []byte(rpcBody("SendMessage", ep.message("hello")))
	h := Floor(0)
	w := &discardWriter{h: http.Header{}}
	r, err := http.NewRequest(http.MethodPost, "http://floor/", nil)
	if err != nil {
		b.Fatal(err)
	}
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		r.Body = http.NoBody
		r.Body = readCloser{rd}
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
