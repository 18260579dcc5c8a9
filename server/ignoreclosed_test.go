package server_test

import (
	"errors"
	"fmt"
	"testing"

	"parley.dev/parley/server"
)

// TestIgnoreClosed: only the two errors that say the task is closed to the
// agent (wrapped or not) are dropped; any other error is kept as it is.
func TestIgnoreClosed(t *testing.T) {
	other := errors.New("upstream broke off")
	for _, c := range []struct {
		err, want error
	}{
		{nil, nil},
		{server.ErrTaskClosed, nil},
		{server.ErrExecutionEnded, nil},
		{fmt.Errorf("emit: %w", server.ErrTaskClosed), nil},
		{server.ErrReplyNotFirst, server.ErrReplyNotFirst},
		{other, other},
	} {
		if got := server.IgnoreClosed(c.err); got != c.want {
			t.Errorf("IgnoreClosed(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
