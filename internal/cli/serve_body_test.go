package cli_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeBodyTimeout: `parley serve --body-timeout` bounds a stalled
// upload (through the http.Server's own ReadTimeout), while an SSE stream
// that lasts longer than that bound is not cut.
func TestServeBodyTimeout(t *testing.T) {
	p := serve(t, "--store", "memory", "--agent", "conformance", "--body-timeout", "500ms")
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /message:send HTTP/1.1\r\nHost: %s\r\nContent-Type: application/a2a+json\r\nContent-Length: 100\r\nA2A-Version: 1.0\r\n\r\n{", p.addr)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestTimeout || time.Since(start) > 15*time.Second {
		t.Fatalf("stalled body: %v %v after %v, want 408 soon after the bound", resp, err, time.Since(start))
	}

	// A stream that lasts 1.5 s outlives the body bound.
	body := `{"message":{"messageId":"long-stream","role":"ROLE_USER","parts":[{"text":"slow 1500"}]}}`
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/message:stream", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("A2A-Version", "1.0")
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	all, err := io.ReadAll(sresp.Body)
	if err != nil || !strings.Contains(string(all), "TASK_STATE_COMPLETED") {
		t.Errorf("a stream longer than the body bound: %v\n%s", err, all)
	}
}
