package pgstore

import (
	"net"
	"syscall"
	"testing"
)

// userTimeoutOf reads TCP_USER_TIMEOUT (milliseconds) of a TCP connection.
func userTimeoutOf(t *testing.T, c net.Conn) (int, bool) {
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v, true
}
