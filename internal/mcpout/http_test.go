package mcpout_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
