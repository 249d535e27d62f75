//go:build unix

package wake

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// sender makes exactly one non-blocking write per send. It sets no write
// deadline on purpose: a deadline can expire before the write is even tried
// when the sending goroutine is descheduled for a moment, and that failure
// would look like a full queue and drop the wake-up of an idle peer. It is
// used by one goroutine at a time (rounds never overlap) and does not
// allocate.
type sender struct {
	raw  syscall.RawConn
	buf  []byte
	werr error
	try  func(fd uintptr) bool
}

func newSender(c *net.UnixConn) (*sender, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	s := &sender{raw: raw}
	s.try = s.write
	return s, nil
}

func (s *sender) write(fd uintptr) bool {
	for {
		_, s.werr = syscall.Write(int(fd), s.buf)
		if s.werr != syscall.EINTR {
			return true // never wait for room
		}
	}
}

func (s *sender) send(b []byte) error {
	s.buf, s.werr = b, nil
	err := s.raw.Write(s.try)
	s.buf = nil
	if err != nil {
		return err
	}
	if s.werr != nil && !isFull(s.werr) {
		return os.NewSyscallError("write", s.werr)
	}
	return s.werr // a full queue is routine under load: no wrapping
}

// isFull reports whether a send failed only for want of room.
func isFull(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.ENOBUFS)
}
