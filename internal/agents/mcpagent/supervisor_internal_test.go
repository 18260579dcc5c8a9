package mcpagent

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestSetAfterStop: a session the supervisor's loop finished starting
// again just as Close was called is refused (set reports false, and the
// loop closes it), rather than made live after shutdown looked for the
// live session: shutdown would then wait for a loop blocked on a session
// nobody closes, and the child would run on.
func TestSetAfterStop(t *testing.T) {
	prog := testenv.GoBuild(t, testkit.ModuleRoot(t), "./internal/agents/mcpagent/testdata/mcpserver")
	log := slog.New(slog.DiscardHandler)
	o := Options{Command: []string{prog}, Logger: log, StartTimeout: 30 * time.Second, StopGrace: time.Second}
	s := &supervisor{o: o, client: mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil), log: log}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.start(ctx); err != nil {
		t.Fatal(err)
	}
	late, err := s.connect(ctx) // the loop's next session, started before Close
	if err != nil {
		t.Fatal(err)
	}
	defer late.sess.Close()
	done := make(chan struct{})
	go func() { s.shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not return")
	}
	if s.set(late) {
		t.Fatal("a session was made live after shutdown")
	}
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == late {
		t.Fatal("the supervisor holds a session started after shutdown")
	}
}

// TestProgressKeepsLatest: progress notifications that come faster than
// they are shown are coalesced: the oldest are dropped, and the latest,
// which says how far the tool got, is kept.
func TestProgressKeepsLatest(t *testing.T) {
	c := newCall(nil, "task", nil, invocation{}, "tok")
	for i := 1; i <= 3*progressQueue; i++ {
		c.notify(&mcp.ProgressNotificationParams{Progress: float64(i)})
	}
	var got []float64
	for len(c.progressed) > 0 {
		got = append(got, (<-c.progressed).Progress)
	}
	if len(got) != progressQueue || got[0] != float64(2*progressQueue+1) || got[len(got)-1] != float64(3*progressQueue) {
		t.Errorf("queued progress %v, want the latest %d, in order", got, progressQueue)
	}
}
