//go:build !linux

package pgstore

import (
	"syscall"
	"time"
)

// userTimeout is Linux's only: elsewhere the keepalive probes alone find a
// silent peer.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error { return nil }
