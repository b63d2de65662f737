//go:build linux

package fcm

import (
	"net"

	"golang.org/x/sys/unix"
)

// unacked returns the bytes written on nc that its peer has not yet
// acknowledged (SIOCOUTQ); ok is false when it cannot tell.
func unacked(nc net.Conn) (n int, ok bool) {
	tc, isTCP := nc.(*net.TCPConn)
	if !isTCP {
		return 0, false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
