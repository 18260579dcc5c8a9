package connlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveHTTP serves a tiny handler on a bounded loopback listener and
// returns its address.
func serveHTTP(t *testing.T, o Options) string {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Wrap(raw, o)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ReadHeaderTimeout: time.Minute, // idle connections stay open for the test
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return raw.Addr().String()
}

// dialFrom opens a TCP connection to addr from the loopback address src
// (Linux routes all of 127/8 to the loopback interface).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from %s (needs 127/8 on loopback, as on Linux): %v", src, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stillOpen reports whether the server keeps c open: a read gets nothing
// for a while rather than an answer or the end.
func stillOpen(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// refusedAt reads what the server says to c before closing it, failing
// when it takes longer than a second (a connection left in the backlog
// would take until the client's timeout).
func refusedAt(t *testing.T, c net.Conn) string {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection neither answered nor closed after 5s (read %q)", b)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusal took %v", d)
	}
	return string(b)
}

// get makes a request from 127.0.0.1 on a new connection.
func get(addr string) error { return getFrom("127.0.0.1", addr) }

// TestPerAddrShare: idle connections from 127.0.0.2 are held up to its
// share; the next one from there is answered 503 and closed at once, while
// requests from 127.0.0.1 keep being served; once one of 127.0.0.2's
// connections closes, it may open another.
func TestPerAddrShare(t *testing.T) {
	addr := serveHTTP(t, Options{Max: 16, PerAddr: 3, HTTP: true})
	var idle []net.Conn
	for range 3 {
		idle = append(idle, dialFrom(t, "127.0.0.2", addr))
	}
	for i, c := range idle {
		if !stillOpen(c) {
			t.Fatalf("idle connection %d of 3 from 127.0.0.2 was not kept", i)
		}
	}
	for range 3 {
		over := dialFrom(t, "127.0.0.2", addr)
		got := refusedAt(t, over)
		if !strings.HasPrefix(got, "HTTP/1.1 503 ") || !strings.Contains(got, "\r\nRetry-After: 1\r\n") ||
			!strings.Contains(got, "\r\nConnection: close\r\n") || !strings.Contains(got, "your address") {
			t.Errorf("connection past the share got %q", got)
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
		if err != nil || resp.StatusCode != 503 {
			t.Errorf("the answer is not a well-formed 503: %v", err)
		}
	}
	for i := range 10 {
		if err := get(addr); err != nil {
			t.Fatalf("request %d from 127.0.0.1 while 127.0.0.2 holds its share: %v", i, err)
		}
	}
	for i, c := range idle {
		if !stillOpen(c) {
			t.Errorf("idle connection %d was closed by the refusals", i)
		}
	}
	idle[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := dialFrom(t, "127.0.0.2", addr)
		if stillOpen(c) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("127.0.0.2 cannot open a connection after closing one of its share")
		}
	}
}

// TestGlobalCap: past Max, a new connection from any address is refused at
// once instead of waiting in the backlog; a listener that is not plain
// HTTP only closes it; a freed slot is used again.
func TestGlobalCap(t *testing.T) {
	for _, plain := range []bool{true, false} {
		addr := serveHTTP(t, Options{Max: 4, PerAddr: 2, HTTP: plain})
		var held []net.Conn
		for _, src := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"} {
			held = append(held, dialFrom(t, src, addr))
		}
		for i, c := range held {
			if !stillOpen(c) {
				t.Fatalf("plain HTTP %v: connection %d of 4 was not kept", plain, i)
			}
		}
		over := dialFrom(t, "127.0.0.1", addr)
		over.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		got := refusedAt(t, over)
		switch {
		case plain && got != "" && !strings.HasPrefix(got, "HTTP/1.1 503 "):
			t.Errorf("a connection past the cap got %q", got)
		case plain && got != "" && !strings.Contains(got, "too many connections open"):
			t.Errorf("the answer past the cap does not say why: %q", got)
		case !plain && got != "":
			t.Errorf("a listener that is not plain HTTP wrote %q", got)
		}
		if err := get(addr); err == nil {
			t.Errorf("plain HTTP %v: a request past the cap was served", plain)
		}
		held[0].Close()
		deadline := time.Now().Add(5 * time.Second)
		for get(addr) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("plain HTTP %v: no request served after a connection closed", plain)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestReserveKeepsRoomForFewConnections: five addresses that each open
// connections that never finish their headers, as many as their share
// allows, fill the listener up to its reserve and no further: a client
// from a sixth address is served every time. Without a reserve the same
// flood keeps it out.
func TestReserveKeepsRoomForFewConnections(t *testing.T) {
	for _, tc := range []struct {
		reserve     int
		wantRefused bool
	}{{0, false}, {-1, true}} {
		raw, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		const max, perAddr, flood = 100, 25, 30
		l := Wrap(raw, Options{Max: max, PerAddr: perAddr, Reserve: tc.reserve, HTTP: true}).(*listener)
		srv := &http.Server{
			Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
			ReadHeaderTimeout: time.Minute,
		}
		go srv.Serve(l)
		addr := raw.Addr().String()
		for i := range flood {
			for a := 2; a <= 6; a++ {
				c := dialFrom(t, "127.0.0."+strconv.Itoa(a), addr)
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nX-Slow-" + strconv.Itoa(i) + ": "))
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			l.mu.Lock()
			seen := l.open + l.refused.total + l.refused.fromAddr
			open := l.open
			l.mu.Unlock()
			if seen == 5*flood {
				if limit := max - max/8; tc.reserve == 0 && open > limit {
					t.Errorf("the flood holds %d connections, want at most %d", open, limit)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reserve %d: %d of %d flood connections accepted or refused after 10 s", tc.reserve, seen, 5*flood)
			}
			time.Sleep(10 * time.Millisecond)
		}
		refused := 0
		for range 20 {
			if err := getFrom("127.0.0.7", addr); err != nil {
				refused++
			}
		}
		if got := refused > 0; got != tc.wantRefused {
			t.Errorf("reserve %d: the control client was refused %d times of 20; want refusals %v", tc.reserve, refused, tc.wantRefused)
		}
		srv.Close()
	}
}

// getFrom makes a request from the loopback address src on a new
// connection.
func getFrom(src, addr string) error {
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "ok" {
		return errors.New(resp.Status + ": " + string(b))
	}
	return nil
}

// TestNoBounds: without bounds Wrap returns the listener itself.
func TestNoBounds(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if Wrap(raw, Options{HTTP: true}) != raw {
		t.Error("Wrap without bounds wrapped the listener")
	}
	if Wrap(nil, Options{Max: 1}) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}

// TestSource: what counts as one source address.
func TestSource(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}, "192.0.2.7/32"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, "fe80::/64"},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, ""},
		{nil, ""},
	} {
		src, ok := source(tc.addr)
		got := ""
		if ok {
			got = src.String()
		}
		if got != tc.want {
			t.Errorf("source(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	a, _ := source(&net.TCPAddr{IP: net.ParseIP("2001:db8::1")})
	b, _ := source(&net.TCPAddr{IP: net.ParseIP("2001:db8::ffff:2")})
	if a != b || !a.IsValid() {
		t.Error("two addresses of one /64 are two sources")
	}
}
