//go:build !linux

package pgstore

import (
	"net"
	"testing"
)

// userTimeoutOf: TCP_USER_TIMEOUT is Linux's only.
func userTimeoutOf(*testing.T, net.Conn) (int, bool) { return 0, false }
