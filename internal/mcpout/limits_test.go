package mcpout_test

// Tests of the bounds of `parley mcp` at real sizes, over the wire.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/mcpout"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
)

// sizeAgent answers "text N" with an artifact of N bytes of text, "file N"
// with a file part of N bytes, and "chunks N" with an artifact streamed in
// N chunks.
func sizeAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		var what string
		var n int
		fmt.Sscanf(a2a.JoinText(req.Message.GetParts()), "%s %d", &what, &n)
		var err error
		switch what {
		case "text":
			err = em.Artifact(&a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart(strings.Repeat("x", n))}})
		case "file":
			err = em.Artifact(&a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Raw{Raw: make([]byte, n)},
				MediaType: "application/octet-stream", Filename: "f.bin"}}})
		case "chunks":
			for i := 0; i < n && err == nil; i++ {
				a := &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart(strconv.Itoa(i) + " ")}}
				switch {
				case i == 0:
					err = em.StartArtifact(a)
				case i == n-1:
					err = em.FinishArtifact(a)
				default:
					err = em.AppendArtifact(a)
				}
			}
		}
		if err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// sizeServer serves sizeAgent with a streaming card.
func sizeServer(t *testing.T) *parleytest.Server {
	return parleytest.NewServer(t, sizeAgent(), parleytest.WithCard(func(c *a2a.AgentCard) {
		streaming := true
		c.Capabilities.Streaming = &streaming
	}))
}

// TestStdioLargeResults: the built `parley mcp` over stdio, with the Go
// SDK's client (which reads at most 16 MiB a line): a 9 MB file and a 10
// MB text come back whole; a 17 MB answer is a tool error naming the
// task, and the session goes on (without the bound the client meets a
// line it cannot read and closes the session); a 5,000-chunk stream gives
// one progress notification per event, and the chunks joined in order.
func TestStdioLargeResults(t *testing.T) {
	t.Parallel()
	srv := sizeServer(t)
	var stderr testenv.SyncBuffer
	cmd := exec.Command(testkit.ParleyBinary(t), "mcp", srv.URL)
	cmd.Stderr = &stderr
	var progress atomic.Int64
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) }}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to parley mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	callWith := func(msg string) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "test", Arguments: map[string]any{"message": msg}}
		p.SetProgressToken("p")
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("tools/call %q: %v\n%s", msg, err, stderr.String())
		}
		return r
	}
	r := callWith("file 9000000")
	if len(r.Content) != 1 || r.IsError {
		t.Fatalf("file 9000000: %d blocks, isError %v", len(r.Content), r.IsError)
	}
	if res, ok := r.Content[0].(*mcp.EmbeddedResource); !ok || len(res.Resource.Blob) != 9_000_000 {
		t.Errorf("file 9000000: %T, want an embedded resource of 9,000,000 bytes", r.Content[0])
	}
	if r := callWith("text 10000000"); r.IsError || len(texts(r)) != 10_000_000 {
		t.Errorf("text 10000000: isError %v, %d bytes", r.IsError, len(texts(r)))
	}
	r = callWith("text 17000000")
	st := structured(t, r)
	if !r.IsError || !strings.Contains(texts(r), "too large for one MCP message") || st["state"] != "TASK_STATE_COMPLETED" ||
		!strings.Contains(texts(r), st["taskId"].(string)) {
		t.Errorf("text 17000000: isError %v, %v, %q; want a tool error naming the task", r.IsError, st, texts(r)[:min(300, len(texts(r)))])
	}
	progress.Store(0)
	r = callWith("chunks 5000")
	want := make([]string, 5000)
	for i := range want {
		want[i] = strconv.Itoa(i) + " "
	}
	if texts(r) != strings.Join(want, "") {
		t.Errorf("chunks 5000: %d bytes of text, not the chunks joined in order", len(texts(r)))
	}
	// The SDK's client hands notifications to their handler apart from
	// the result they came before.
	for deadline := time.Now().Add(20 * time.Second); progress.Load() < 5000; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("chunks 5000: %d progress notifications, want one per event (5,002)", progress.Load())
		}
	}
}

// TestStreamableHTTPStalledReader: clients that send a call and stop
// reading its answer (a 6 MB result, more than the socket buffers hold
// with the client's made small) hold its writer for WriteTimeout, not for
// as long as they keep the connection open: the write fails, the server
// closes the connection, and the handler's goroutines and the result are
// let go. Meanwhile the same session and another one are served.
func TestStreamableHTTPStalledReader(t *testing.T) {
	b, err := mcpout.New(sizeServer(t).Client(), &mcpout.Options{WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	closed := map[string]bool{} // by client address
	hs := httptest.NewUnstartedServer(b.Handler())
	hs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		closed[c.RemoteAddr().String()] = st == http.StateClosed || st == http.StateHijacked
	}
	hs.Start()
	t.Cleanup(hs.Close)
	endpoint, host := hs.URL+mcpout.Path, strings.TrimPrefix(hs.URL, "http://")
	sid := post(t, endpoint, initialize, nil).Header.Get("Mcp-Session-Id")
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	post(t, endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	before := runtime.NumGoroutine()
	var stalled []string
	for i := range 2 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		t.Cleanup(func() { c.Close() })
		stalled = append(stalled, c.LocalAddr().String())
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test","arguments":{"message":"text 6000000"}}}`, 10+i)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", mcpout.Path, host, sid, len(body), body)
	}
	resp := post(t, endpoint, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"test","arguments":{"message":"text 10"}}}`, h)
	if got, _ := io.ReadAll(resp.Body); !strings.Contains(string(got), `"text":"xxxxxxxxxx"`) {
		t.Errorf("a call in the session of the stalled readers: %s %.200s", resp.Status, got)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, cs, "test", map[string]any{"message": "text 10"}); texts(r) != "xxxxxxxxxx" {
		t.Errorf("a call in another session: %q", texts(r))
	}
	cs.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		done := closed[stalled[0]] && closed[stalled[1]]
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connections of readers that stopped reading are still open 30 s on (WriteTimeout 1 s)")
		}
	}
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before+2; time.Sleep(50 * time.Millisecond) {
		http.DefaultClient.CloseIdleConnections() // the other calls' keep-alive connections
		if time.Now().After(deadline) {
			var all strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&all, 1)
			t.Errorf("goroutines %d, %d before the stalled readers:\n%s", runtime.NumGoroutine(), before, all.String())
			break
		}
	}
}

// TestStdioStalledHost: a host that sends calls and stops reading the
// built `parley mcp`'s standard output (1 MB answers, more than a pipe
// holds) does not make it hold every answer for as long as it runs: once
// a message waited --write-timeout, the session ends and the command
// exits, saying why.
func TestStdioStalledHost(t *testing.T) {
	t.Parallel()
	srv := sizeServer(t)
	var stderr testenv.SyncBuffer
	cmd := exec.Command(testkit.ParleyBinary(t), "mcp", srv.URL, "--write-timeout", "1s")
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdoutPipe(); err != nil { // never read
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintln(in, initialize)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 20 {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test","arguments":{"message":"text 1000000"}}}`+"\n", 10+i)
	}
	select {
	case err := <-exited:
		if !strings.Contains(stderr.String(), "took no message for the write timeout") || cmd.ProcessState.ExitCode() != 1 {
			t.Errorf("parley mcp exited (%v), want exit 1 saying why:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("parley mcp still runs a minute after its host stopped reading (--write-timeout 1s)\n%s", stderr.String())
	}
	// The tasks of the calls end at the agent (before it is stopped): all
	// terminal, and no more of them, for a second.
	for deadline, seen, still := time.Now().Add(30*time.Second), -1, 0; still < 2; time.Sleep(500 * time.Millisecond) {
		l, err := srv.Client().ListTasks(t.Context(), &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		still++
		if n := len(l.GetTasks()); n != seen || slices.ContainsFunc(l.GetTasks(), func(tk *a2a.Task) bool { return !a2a.IsTerminal(tk.GetStatus().GetState()) }) {
			seen, still = n, 0
		}
		if time.Now().After(deadline) {
			t.Fatal("tasks of the calls still running 30 s after parley mcp exited")
		}
	}
}
