package a2ahttp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"parley.dev/parley/a2ahttp"
)

// lockedBuffer is a bytes.Buffer a logger may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeLogsWhereItServes: Serve says where it serves once it does (a
// program that only calls Serve would otherwise print nothing on start).
func TestServeLogsWhereItServes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- a2ahttp.Serve(ctx, serveConfig(func(c *a2ahttp.ServeConfig) {
			c.Listener, c.Logger = ln, slog.New(slog.NewTextHandler(&logs, nil))
		}))
	}()
	fetchCard(t, "http://"+ln.Addr().String()) // it serves
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	want := "msg=serving url=http://" + ln.Addr().String() + " addr=" + ln.Addr().String()
	if !strings.Contains(logs.String(), want) {
		t.Errorf("Serve's log has no %q:\n%s", want, logs.String())
	}
}
