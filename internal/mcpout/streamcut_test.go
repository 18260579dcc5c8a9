package mcpout_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/client"
	"parley.dev/parley/internal/mcpout"
)

// cutFirstStream is an HTTP transport that ends the first event stream it
// carries after its first event, the way a proxy that closes long
// responses does; every other response passes whole.
type cutFirstStream struct{ cut atomic.Bool }

func (c *cutFirstStream) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || c.cut.Swap(true) {
		return resp, err
	}
	resp.Body = &firstEvent{rc: resp.Body}
	return resp, nil
}

// firstEvent reads a stream up to the end of its first event.
type firstEvent struct {
	rc   io.ReadCloser
	seen []byte
	done bool
}

func (f *firstEvent) Read(p []byte) (int, error) {
	if f.done {
		return 0, io.EOF
	}
	n, err := f.rc.Read(p)
	f.seen = append(f.seen, p[:n]...)
	if i := bytes.Index(f.seen, []byte("\n\n")); i >= 0 {
		over := len(f.seen) - (i + 2)
		f.done = true
		return n - over, nil
	}
	return n, err
}

func (f *firstEvent) Close() error { return f.rc.Close() }

// TestStreamEndsEarly: when the agent's stream ends before the task
// settled (closed on the way, and not resumed), the call follows the task
// to its end rather than answering an error for a task left running.
func TestStreamEndsEarly(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, nil)
	cut := &cutFirstStream{}
	cl, err := srv.NewClient(&client.Options{HTTPClient: &http.Client{Transport: cut}, Resumes: -1,
		Transports: []client.TransportFactory{client.JSONRPC()}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mcpout.New(cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx, st) }()
	defer func() { cancel(); <-done }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r := call(t, cs, "test", map[string]any{"message": "slow 300"})
	if !cut.cut.Load() {
		t.Fatal("no event stream was cut: the test does not test")
	}
	if st := structured(t, r); st["state"] != "TASK_STATE_COMPLETED" || r.IsError {
		t.Fatalf("after a cut stream: %v isError %v %q; want the task followed to COMPLETED", st, r.IsError, texts(r))
	}
}
