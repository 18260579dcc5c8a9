package cli_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// TestServeConnectionShares: a real `parley serve --max-conns 8` holds
// two idle connections from 127.0.0.2 (its default share, a quarter) and
// answers a third from there 503 at once, while requests from 127.0.0.1
// keep being served.
func TestServeConnectionShares(t *testing.T) {
	help, _ := exec.Command(testkit.ParleyBinary(t), "serve", "-h").CombinedOutput()
	if !strings.Contains(string(help), "-max-conns-per-ip ") {
		t.Errorf("serve -h does not list -max-conns-per-ip:\n%s", help)
	}
	p := serve(t, "--store", "memory", "--max-conns", "8")
	dial := func() net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", p.addr)
		if err != nil {
			t.Skipf("cannot dial from 127.0.0.2 (needs 127/8 on loopback, as on Linux): %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	for i := range 2 {
		c := dial()
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("idle connection %d from 127.0.0.2 was not kept: %v", i, err)
		}
	}
	over := dial()
	start := time.Now()
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(over)
	if d := time.Since(start); d > time.Second || !strings.HasPrefix(string(got), "HTTP/1.1 503 ") {
		t.Errorf("third connection from 127.0.0.2: %q after %v, want a 503 at once", got, d)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	for i := range 5 {
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + p.addr + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatalf("request %d from 127.0.0.1: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d from 127.0.0.1: %s", i, resp.Status)
		}
	}
}
