package netlimit_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/netlimit"
)

func TestKey(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"127.0.0.1:5000", "127.0.0.1"},
		{"127.0.0.1:5001", "127.0.0.1"},
		{"10.1.2.3:80", "10.1.2.3"},
		{"[::ffff:10.1.2.3]:80", "10.1.2.3"},
		{"[::1]:80", "::/64"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:443", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"10.1.2.3", "10.1.2.3"},
		{"@unix-socket", "@unix-socket"},
	}
	for _, tc := range tests {
		if got := netlimit.Key(tc.remote); got != tc.want {
			t.Errorf("Key(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

func TestPerAddr(t *testing.T) {
	p := netlimit.NewPerAddr(2)
	for i, want := range []bool{true, true, false, false} {
		if got := p.Acquire("a"); got != want {
			t.Fatalf("acquire %d of a: %v, want %v", i+1, got, want)
		}
	}
	if !p.Acquire("b") {
		t.Fatal("b refused because of a")
	}
	p.Release("a")
	if !p.Acquire("a") || p.Acquire("a") {
		t.Fatal("a released one unit: exactly one more must fit")
	}
	p.Release("a")
	p.Release("a")
	if n := p.Held("a"); n != 0 {
		t.Fatalf("a holds %d after releasing everything", n)
	}

	for _, unlimited := range []*netlimit.PerAddr{nil, netlimit.NewPerAddr(0), netlimit.NewPerAddr(-1)} {
		for range 1000 {
			if !unlimited.Acquire("a") {
				t.Fatalf("limit %d refused", unlimited.Limit())
			}
		}
	}
}

// dialFrom connects from a loopback address of its own: the whole of
// 127.0.0.0/8 is local on Linux.
func dialFrom(t *testing.T, ln net.Listener, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedAtOnce reports whether the server closed c without sending
// anything.
func closedAtOnce(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// Over a real loopback listener: a client address beyond its limit has
// its next connection closed at once, other addresses are unaffected, and
// closing a connection (once or twice) frees exactly one place.
func TestListenerLimitsEachAddress(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := netlimit.NewListener(raw, 3, slog.New(slog.DiscardHandler))
	defer ln.Close()
	accepted := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
			// The server answers every connection it keeps, so a client
			// can tell kept from closed.
			_, _ = c.Write([]byte("k"))
		}
	}()
	kept := func(c net.Conn) bool {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1)
		_, err := io.ReadFull(c, b)
		return err == nil && b[0] == 'k'
	}
	var server []net.Conn
	for i := range 3 {
		if c := dialFrom(t, ln, "127.0.0.1"); !kept(c) {
			t.Fatalf("connection %d within the limit was not kept", i+1)
		}
		server = append(server, <-accepted)
	}
	over := dialFrom(t, ln, "127.0.0.1")
	if !closedAtOnce(t, over) {
		t.Fatal("the fourth connection of 127.0.0.1 was not closed")
	}
	if ln.Refused() != 1 {
		t.Fatalf("refused %d, want 1", ln.Refused())
	}
	if c := dialFrom(t, ln, "127.0.0.2"); !kept(c) {
		t.Fatal("127.0.0.2 refused because of 127.0.0.1")
	}
	<-accepted

	server[0].Close()
	server[0].Close() // a second Close must not free a second place
	if c := dialFrom(t, ln, "127.0.0.1"); !kept(c) {
		t.Fatal("a closed connection did not free its place")
	}
	<-accepted
	if !closedAtOnce(t, dialFrom(t, ln, "127.0.0.1")) {
		t.Fatal("closing one connection twice freed two places")
	}
	if n := ln.Held("127.0.0.1:1"); n != 3 {
		t.Fatalf("127.0.0.1 holds %d connections, want 3", n)
	}
}
