package sse_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/streamctx"
)

// parkServer serves, on a loopback HTTP/1.1 server, a stream through
// Parking that sends event 1, then one more event each time more is
// signalled, and ends when end is closed. The stream waits through its
// Idler, as the server core does, with a context of its own (as
// middleware may make) that ends when cancel is called. handled receives
// when the handler has returned; idleEnded receives how the producer's
// last Idle ended.
type parkServer struct {
	url       string
	parking   *sse.Parking
	more      chan struct{}
	end       chan struct{}
	handled   chan struct{}
	idleEnded chan bool
	woke      func()
	cancel    atomic.Pointer[context.CancelFunc]
}

// startParkServer serves streams that park after 50 ms.
func startParkServer(t *testing.T, keepAlive time.Duration) *parkServer {
	return startParkServerAfter(t, 50*time.Millisecond, keepAlive)
}

func startParkServerAfter(t *testing.T, after, keepAlive time.Duration) *parkServer {
	t.Helper()
	ps := &parkServer{parking: sse.NewParking(after), more: make(chan struct{}, 1),
		end: make(chan struct{}), handled: make(chan struct{}, 4), idleEnded: make(chan bool, 1)}
	var idler atomic.Pointer[streamctx.Idler]
	ps.woke = func() {
		if id := idler.Load(); id != nil {
			(*id).Wake()
		}
	}
	open := func(ctx context.Context) iter.Seq2[a2a.StreamEvent, error] {
		return func(yield func(a2a.StreamEvent, error) bool) {
			id := streamctx.IdlerFrom(ctx)
			if id == nil {
				yield(a2a.StreamEvent{}, errors.New("no Idler in the stream's context"))
				return
			}
			idler.Store(&id)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ps.cancel.Store(&cancel)
			for seq := uint64(1); ; seq++ {
				if !yield(a2a.StreamEvent{Seq: seq}, nil) {
					return
				}
				select {
				case <-ps.end:
					return
				default:
				}
				ok := id.Idle(ctx, ps.more)
				ps.idleEnded <- ok
				if !ok {
					return
				}
				select {
				case <-ps.end:
					return
				default:
				}
			}
		}
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ps.handled <- struct{}{} }()
		ps.parking.Serve(r.Context(), w, r, open, jsonEnc{}, keepAlive)
	}))
	t.Cleanup(func() {
		ps.parking.Close()
		hs.Close()
	})
	ps.url = hs.URL
	return ps
}

// signal wakes the stream for one more event, as a publisher does.
func (ps *parkServer) signal() {
	select {
	case ps.more <- struct{}{}:
	default:
	}
	ps.woke()
}

// openRaw opens the stream over a raw connection and returns the body
// (chunked transfer decoded) and the connection.
func openRaw(t *testing.T, url string) (*bufio.Reader, net.Conn) {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /stream HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("response %d, transfer encoding %v; want 200, chunked", resp.StatusCode, resp.TransferEncoding)
	}
	return bufio.NewReader(resp.Body), c
}

// nextBlock reads one SSE block (up to a blank line) from the body.
func nextBlock(t *testing.T, body *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (read %q)", err, b.String()+line)
		}
		if line == "\n" {
			return b.String()
		}
		b.WriteString(line)
	}
}

// idleEnds waits for the stream's Idle to report false, because cause.
func idleEnds(t *testing.T, ps *parkServer, cause, failure string) {
	t.Helper()
	select {
	case ok := <-ps.idleEnded:
		if ok {
			t.Error("Idle reported true when " + cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal(failure)
	}
}

func waitFor(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// TestParkedStream: a stream silent for the parking delay leaves its
// handler (which returns while the stream stays open), then gets its
// events, its keep-alives and a proper end of the chunked body on the bare
// connection, which is closed after it.
func TestParkedStream(t *testing.T) {
	ps := startParkServer(t, 150*time.Millisecond)
	body, _ := openRaw(t, ps.url)
	if b := nextBlock(t, body); !strings.Contains(b, "id: 1\n") {
		t.Fatalf("first block %q, want event 1", b)
	}
	waitFor(t, ps.handled, "the handler's return after the stream parked")
	if b := nextBlock(t, body); b != ": keep-alive\n" {
		t.Errorf("parked stream sent %q, want a keep-alive comment", b)
	}
	ps.signal()
	if ok := <-ps.idleEnded; !ok {
		t.Fatal("Idle of a parked stream reported false after a Wake")
	}
	for {
		b := nextBlock(t, body)
		if b == ": keep-alive\n" {
			continue
		}
		if !strings.Contains(b, "id: 2\n") || !strings.Contains(b, `data: {"seq":2}`) {
			t.Fatalf("after the wake: %q, want event 2", b)
		}
		break
	}
	close(ps.end)
	ps.signal()
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("end of a parked stream: %v (want the last chunk, then EOF)", err)
	}
	if s := strings.ReplaceAll(string(rest), ": keep-alive\n\n", ""); s != "" {
		t.Errorf("after the end: %q", s)
	}
}

// TestParkedStreamSeesClientGo: a parked stream's wait ends when its client
// closes the connection.
func TestParkedStreamSeesClientGo(t *testing.T) {
	ps := startParkServer(t, 0)
	body, c := openRaw(t, ps.url)
	nextBlock(t, body)
	waitFor(t, ps.handled, "the handler's return after the stream parked")
	c.Close()
	idleEnds(t, ps, "the client had gone", "a parked stream did not see its client go")
}

// TestParkingClose: closing the Parking ends its parked streams properly
// and waits for them.
func TestParkingClose(t *testing.T) {
	ps := startParkServer(t, 0)
	body, _ := openRaw(t, ps.url)
	nextBlock(t, body)
	waitFor(t, ps.handled, "the handler's return after the stream parked")
	ps.parking.Close()
	if ok := <-ps.idleEnded; ok {
		t.Error("Idle reported true when the Parking was closed")
	}
	if rest, err := io.ReadAll(body); err != nil || len(rest) != 0 {
		t.Errorf("after Close: %q, %v; want the end of the body", rest, err)
	}
}

// TestStreamThatMayParkClosesItsConnection: every stream that may park
// says Connection: close, parked or not, so that no client sends its next
// request on a connection about to close.
func TestStreamThatMayParkClosesItsConnection(t *testing.T) {
	ps := startParkServer(t, 0)
	close(ps.end) // one event, then the end: never silent long enough to park
	resp, err := http.Get(ps.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(rest), "id: 1\n") {
		t.Fatalf("stream: %q, %v; want event 1, then the end", rest, err)
	}
	if !resp.Close {
		t.Error("a stream that may park did not say Connection: close")
	}
}

// TestStreamEndsWithItsRequestBeforeParking: a stream not parked yet ends
// when its request's context does (here: the client closes the
// connection), and its handler returns.
func TestStreamEndsWithItsRequestBeforeParking(t *testing.T) {
	ps := startParkServerAfter(t, time.Hour, 0)
	body, c := openRaw(t, ps.url)
	nextBlock(t, body)
	c.Close()
	idleEnds(t, ps, "the client had gone", "a stream not parked did not end with its request")
	waitFor(t, ps.handled, "the handler's return")
}

// TestParkedStreamEndsWithItsContext: a parked stream's wait ends when the
// context it waits with ends, though the stream's own has not: a context
// that middleware or the server derived.
func TestParkedStreamEndsWithItsContext(t *testing.T) {
	ps := startParkServer(t, 0)
	body, _ := openRaw(t, ps.url)
	nextBlock(t, body)
	waitFor(t, ps.handled, "the handler's return after the stream parked")
	time.Sleep(100 * time.Millisecond) // into the parked read (else it may see the end before it)
	(*ps.cancel.Load())()
	idleEnds(t, ps, "its context had ended", "a parked stream did not see its context end")
	if rest, err := io.ReadAll(body); err != nil || len(rest) != 0 {
		t.Errorf("after its context ended: %q, %v; want the end of the body", rest, err)
	}
}
