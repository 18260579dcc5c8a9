package mcpout_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/internal/mcpout"
)

// initialize is an MCP initialize request, as a client's first POST.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends body to url with the headers a streamable HTTP client sends,
// and extra ones.
func post(t *testing.T, url, body string, h map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestStreamableHTTP: the Go SDK's streamable HTTP client lists and calls
// the tools at /mcp; a foreign Origin is refused with 403 on POST and GET;
// the same origin and no Origin are served; a session is named by
// Mcp-Session-Id and an unknown one is refused.
func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	b, err := mcpout.New(agentServer(t, true, nil).Client(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(b.Handler())
	t.Cleanup(hs.Close)
	endpoint := hs.URL + mcpout.Path

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r := call(t, cs, "test", map[string]any{"message": "over http"})
	if structured(t, r)["state"] != "TASK_STATE_COMPLETED" || texts(r) != "over http" {
		t.Errorf("tools/call over streamable HTTP = %v %q", r.StructuredContent, texts(r))
	}

	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1", "http://localhost" + strings.TrimPrefix(hs.URL, "http://127.0.0.1")} {
		if resp := post(t, endpoint, initialize, map[string]string{"Origin": origin}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with Origin %s: %s, want 403", origin, resp.Status)
		}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", endpoint, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET with Origin %s: %s, want 403", origin, resp.Status)
		}
	}
	resp := post(t, endpoint, initialize, map[string]string{"Origin": hs.URL})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize from the same origin: %s, Mcp-Session-Id %q; want 200 and a session", resp.Status, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp := post(t, endpoint, list, map[string]string{"Mcp-Session-Id": "no-such-session", "Mcp-Protocol-Version": "2025-06-18"}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("tools/list in an unknown session: %s, want 404", resp.Status)
	}
	post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	resp = post(t, endpoint, list, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	var body strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(body.String(), `"tools"`) {
		n, err := resp.Body.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), `"name":"test"`) {
		t.Errorf("tools/list in session %s: %s %s", sid, resp.Status, body.String())
	}
	if resp := post(t, hs.URL+"/other", list, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /other: %s, want 404", resp.Status)
	}
}

// TestStreamableHTTPMaxSessions: with MaxSessions 3, the Go SDK's client
// opens three sessions; a fourth initialize is refused with 503 and a
// Retry-After, while the open sessions are still served; once a client
// closes its session (DELETE) a new one is opened. Initializes sent all at
// once never open more sessions than the bound.
func TestStreamableHTTPMaxSessions(t *testing.T) {
	t.Parallel()
	agent := agentServer(t, true, nil).Client()
	b, err := mcpout.New(agent, &mcpout.Options{MaxSessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(b.Handler())
	t.Cleanup(hs.Close)
	endpoint := hs.URL + mcpout.Path
	connect := func() (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	}
	var open []*mcp.ClientSession
	for i := range 3 {
		cs, err := connect()
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		defer cs.Close()
		open = append(open, cs)
	}
	if cs, err := connect(); err == nil {
		cs.Close()
		t.Fatal("a fourth session was opened past MaxSessions 3")
	} else if !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("fourth session: %v, want a 503 refusal", err)
	}
	resp := post(t, endpoint, initialize, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != strconv.Itoa(mcpout.SessionsRetryAfter) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("initialize past the bound: %s, Retry-After %q, Mcp-Session-Id %q; want 503, Retry-After %d and no session",
			resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id"), mcpout.SessionsRetryAfter)
	}
	if r := call(t, open[2], "test", map[string]any{"message": "still served"}); texts(r) != "still served" {
		t.Errorf("a call in an open session past the bound: %q", texts(r))
	}

	open[0].Close() // DELETE: its place is free once the server has closed it
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs, err := connect()
		if err == nil {
			cs.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new session 5 s after one closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A fresh handler, raced by 20 initializes at once: 3 get a session.
	b2, _ := mcpout.New(agent, &mcpout.Options{MaxSessions: 3})
	hs2 := httptest.NewServer(b2.Handler())
	t.Cleanup(hs2.Close)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 20 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), "POST", hs2.URL+mcpout.Path, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			code := 0 // a transport error
			if resp, err := http.DefaultClient.Do(req); err == nil {
				code = resp.StatusCode
				resp.Body.Close()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] < 1 || codes[http.StatusOK] > 3 || codes[http.StatusOK]+codes[http.StatusServiceUnavailable] != 20 {
		t.Errorf("20 initializes at once with MaxSessions 3: status counts %v, want at most 3 × 200, the rest 503", codes)
	}
}
