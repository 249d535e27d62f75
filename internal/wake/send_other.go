//go:build !unix

package wake

import (
	"errors"
	"net"
	"os"
	"time"
)

// sendTimeout bounds one send where a single non-blocking attempt is not
// available. Platforms without unix datagram sockets fail in Open, so this
// only keeps the package building; it is not a tested path.
const sendTimeout = 2 * time.Millisecond

type sender struct{ c *net.UnixConn }

func newSender(c *net.UnixConn) (*sender, error) { return &sender{c: c}, nil }

func (s *sender) send(b []byte) error {
	if err := s.c.SetWriteDeadline(time.Now().Add(sendTimeout)); err != nil {
		return err
	}
	_, err := s.c.Write(b)
	return err
}

func isFull(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
