package pgstore

import (
	"strings"
	"syscall"
	"time"
)

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option (not named by
// package syscall on every architecture).
const tcpUserTimeout = 0x12

// userTimeout returns a dialer's Control that sets TCP_USER_TIMEOUT: data
// sent and not acknowledged for d fails the connection, as does a
// keepalive probe left unanswered that long.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil // a Unix socket
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
