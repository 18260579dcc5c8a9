package testkit

import (
	"context"
	"testing"
	"time"
)

// BoundedWorkCtx returns the context for a call whose work is bounded but
// heavy (megabytes to inflate or move, slowed by -race and a loaded
// machine), in a test whose proof does not rest on time: the call may take
// as long as the test binary has (go test -timeout), less a margin for the
// test to report, so load alone cannot fail it, and a call that hangs still
// ends in the test's own error rather than the binary's timeout panic.
// Without a binary deadline (-timeout 0) it ends with the test.
func BoundedWorkCtx(t *testing.T) context.Context {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		margin := min(30*time.Second, time.Until(d)/10)
		c, cancel := context.WithDeadline(ctx, d.Add(-margin))
		t.Cleanup(cancel)
		ctx = c
	}
	return ctx
}
