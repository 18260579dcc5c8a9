package grpcbind

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"parley.dev/parley/internal/testenv"
)

// TestLimitedGzipStopsAtTheLimit: connect-go reads a message through the
// decompressor up to its limit plus one byte, then on to measure it; the
// decompressor fails that read at once, having inflated the limit and one
// byte of a 9 GiB bomb, and reads a message within the limit whole.
func TestLimitedGzipStopsAtTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	dec, _ := boundedGzip(limit)
	d := dec()
	bomb := testenv.GzipBomb(9 << 30)
	if err := d.Reset(bytes.NewReader(bomb)); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(d, limit+1))
	if err != nil || n != limit+1 {
		t.Fatalf("read to the limit: %d bytes, %v; want %d", n, err, limit+1)
	}
	if m, err := io.Copy(io.Discard, d); err == nil || m != 0 || !strings.Contains(err.Error(), "limit of 1048576 bytes") {
		t.Errorf("read past the limit: %d more bytes, %v; want none and an error naming the limit", m, err)
	}
	if out := d.(*limitedGzip).out; out != limit+1 {
		t.Errorf("inflated %d bytes, want %d", out, limit+1)
	}

	// The same decompressor, reset, reads a message of exactly the limit.
	var msg bytes.Buffer
	zw := gzip.NewWriter(&msg)
	zw.Write(bytes.Repeat([]byte("a"), limit))
	zw.Close()
	if err := d.Reset(&msg); err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, d); err != nil || n != limit {
		t.Errorf("a message of the limit: %d bytes, %v; want %d", n, err, limit)
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}

// FuzzLimitedGzip: whatever the bytes, the decompressor reads as
// connect-go does without panicking and never inflates more than its
// limit and one byte.
func FuzzLimitedGzip(f *testing.F) {
	const limit = 1 << 10
	var small, big bytes.Buffer
	zw := gzip.NewWriter(&small)
	zw.Write([]byte("hello"))
	zw.Close()
	zw = gzip.NewWriter(&big)
	zw.Write(make([]byte, 64<<10))
	zw.Close()
	for _, seed := range [][]byte{small.Bytes(), big.Bytes(), append(small.Bytes(), big.Bytes()...), {0x1f, 0x8b}, nil} {
		f.Add(seed)
	}
	dec, _ := boundedGzip(limit)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := dec()
		if err := d.Reset(bytes.NewReader(data)); err != nil {
			return
		}
		n, err := io.Copy(io.Discard, io.LimitReader(d, limit+1))
		if err == nil && n > limit {
			m, _ := io.Copy(io.Discard, d)
			n += m
		}
		if n > limit+1 {
			t.Fatalf("inflated %d bytes, past the limit of %d", n, limit)
		}
		d.Close()
	})
}
