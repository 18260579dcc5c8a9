package httpx

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// A request body is read whole before any binding decodes it (the spec gives
// no limit; Parley bounds every size, see docs/security.md): Preread reads it
// under a deadline and a memory budget shared by every request, so that slow
// or stalled uploads can neither pin memory nor hold a handler forever.

// FreeBodyBytes is how much of one body Preread reads without drawing on
// the shared budget: the bodies of ordinary requests are far smaller.
const FreeBodyBytes = 64 << 10

// Budget is a shared allowance of bytes for request bodies being read. It
// is safe for concurrent use; the zero value has no allowance.
type Budget struct {
	mu   sync.Mutex
	left int64
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget { return &Budget{left: n} }

func (b *Budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

func (b *Budget) give(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// Left returns the bytes of the budget not held now.
func (b *Budget) Left() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left
}

// Errors of Preread.
var (
	// ErrBodyTimeout: the body did not arrive before the deadline.
	ErrBodyTimeout = errors.New("the request body did not arrive in time")
	// ErrBusy: the shared budget cannot hold the body now.
	ErrBusy = errors.New("the server is receiving too many large request bodies; retry shortly")
)

// PrereadBody is a request body that was read ahead of the handler. The
// bindings take its bytes without another copy (ReadBody).
type PrereadBody struct {
	b   []byte
	off int
}

// Read implements io.Reader.
func (p *PrereadBody) Read(out []byte) (int, error) {
	if p.off >= len(p.b) {
		return 0, io.EOF
	}
	n := copy(out, p.b[p.off:])
	p.off += n
	return n, nil
}

// Close implements io.Closer.
func (p *PrereadBody) Close() error { return nil }

// Preread reads r's body (at most limit+1 bytes, so that the binding can
// still refuse an oversized body in its own shape) within timeout (0: no
// deadline), drawing every byte past FreeBodyBytes from budget (nil: no
// budget), and replaces r.Body by a PrereadBody: the caller must own r (a
// copy made by WithContext, say). A server whose ReadTimeout is set bounds
// the body already, and no deadline of Preread's own is set. The budget is
// given back when Preread returns: from then on the body is
// ordinary handler memory, bounded by limit. A failure is ErrBodyTimeout,
// ErrBusy or the read error.
func Preread(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, budget *Budget) (*http.Request, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return r, nil
	}
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if timeout > 0 && !serverBounded(r) {
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
			defer rc.SetReadDeadline(time.Time{})
		}
	}
	// The buffer grows as bytes arrive, not by the declared length: a
	// Content-Length alone must not reserve memory.
	size := int64(512)
	if r.ContentLength > 0 {
		size = min(r.ContentLength, limit+1, FreeBodyBytes)
	}
	var held int64
	defer func() {
		if held > 0 {
			budget.give(held)
		}
	}()
	grow := func(n int64) bool { // holds budget for a buffer of n bytes
		need := n - FreeBodyBytes - held
		if need <= 0 || budget == nil {
			return true
		}
		if !budget.take(need) {
			return false
		}
		held += need
		return true
	}
	if !grow(size) {
		return r, ErrBusy
	}
	buf := make([]byte, 0, size)
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			next := min(int64(cap(buf))*2, limit+1)
			if !grow(next) {
				return r, ErrBusy
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return r, ErrBodyTimeout
			}
			return r, err
		}
	}
	r.Body = &PrereadBody{b: buf}
	return r, nil
}

// serverBounded reports whether the http.Server serving r bounds the time
// to read a whole request itself (ReadTimeout): then a deadline of the
// handler's own would only cost two timer updates per request.
func serverBounded(r *http.Request) bool {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	return ok && srv.ReadTimeout > 0
}

// bodies holds the buffers response bodies are encoded into: a body is
// written as soon as it is encoded, so its buffer can take the next one.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the buffers kept for reuse, so that one large
// answer does not pin its buffer.
const maxPooledBody = 64 << 10

// Body returns an empty buffer (its capacity from earlier use) to encode a
// response body into; give it back with PutBody once the body is written.
func Body() *[]byte {
	bp := bodies.Get().(*[]byte)
	*bp = (*bp)[:0]
	return bp
}

// PutBody gives back a buffer from Body, b being what was encoded into it.
func PutBody(bp *[]byte, b []byte) {
	if cap(b) > maxPooledBody {
		return
	}
	*bp = b[:0]
	bodies.Put(bp)
}
