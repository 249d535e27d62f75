package e2etest

import (
	"net"
	"syscall"
	"time"
)

// LoopbackClient is the i-th of many client addresses on this machine:
// 127.0.0.2, 127.0.0.3, ... (i from 0 to 62,000). All of 127.0.0.0/8 is
// local on Linux, so a test can be many clients, as on a network, and
// stay clear of the server's per-address limits.
func LoopbackClient(i int) net.IP {
	n := i + 2
	return net.IPv4(127, byte(n>>16), byte(n>>8), byte(n))
}

// DialFrom connects to addr ("127.0.0.1:port") from the local address
// from (nil: any). A positive rcvbuf sets the socket's receive buffer
// before it connects, which also keeps the window it advertises small,
// as on a slow link.
func DialFrom(addr string, from net.IP, rcvbuf int) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if from != nil {
		d.LocalAddr = &net.TCPAddr{IP: from}
	}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return d.Dial("tcp", addr)
}
