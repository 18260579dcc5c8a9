package testenv

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"sync"
)

// gzipMember is one gzip member of bombBlock zero bytes, made once.
var gzipMember = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.CopyN(zw, zeros{}, bombBlock) // streamed: no block of zeros is held
	zw.Close()
	return b.Bytes()
})

const bombBlock = 1 << 20

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// GzipBomb returns gzip data that inflates to at least inflated zero bytes
// (rounded up to a MiB): the same gzip member repeated, which a gzip
// reader reads as one stream (RFC 1952 §2.2). 9 GiB take about 9 MB.
func GzipBomb(inflated int64) []byte {
	m := gzipMember()
	n := int((inflated + bombBlock - 1) / bombBlock)
	return bytes.Repeat(m, n)
}

// GzipBombGRPC is a gRPC server's handler that answers every call with one
// response message compressed with gzip that inflates to inflated bytes
// (GzipBomb), then the status OK: what a hostile server can send a
// client.
func GzipBombGRPC(inflated int64) http.Handler {
	bomb := GzipBomb(inflated)
	frame := append([]byte{1, byte(len(bomb) >> 24), byte(len(bomb) >> 16), byte(len(bomb) >> 8), byte(len(bomb))}, bomb...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Encoding", "gzip")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Write(frame)
		w.Header().Set("Grpc-Status", "0")
	})
}
