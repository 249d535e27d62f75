package pgtest

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tcpListen is what ListenTCP asked for: by default a cluster has no TCP
// at all, so clusters of test binaries running side by side never collide
// on a port.
type tcpListen struct {
	host netip.Addr
	nets []netip.Prefix
	port int // chosen when the server starts
}

// ListenTCP makes the cluster listen on host too, at a port free when it
// starts, and trust clients from nets (as it trusts its socket and
// loopback; initdb's pg_hba.conf already trusts 127.0.0.1). It is for
// tests whose clients cannot reach the socket: processes in another
// network namespace, standing for other hosts. host must be an address of
// this machine by the time the server starts, on the first Database; call
// ListenTCP before that.
func (c *Cluster) ListenTCP(host netip.Addr, nets ...netip.Prefix) *Cluster {
	c.tcp = &tcpListen{host: host, nets: nets}
	return c
}

// DatabaseTCP is Database with a URL over TCP (host:port of ListenTCP),
// the kind of URL a process on another host is given.
func (c *Cluster) DatabaseTCP(t testing.TB) string {
	t.Helper()
	if c.tcp == nil {
		t.Fatal("pgtest: DatabaseTCP without ListenTCP")
	}
	sock := c.Database(t)
	u, err := url.Parse(sock)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable",
		net.JoinHostPort(c.tcp.host.String(), strconv.Itoa(c.tcp.port)), strings.TrimPrefix(u.Path, "/"))
}

// trust picks the port and adds a pg_hba.conf line per network. A nil
// receiver (no ListenTCP) does nothing.
func (l *tcpListen) trust(dataDir string) error {
	if l == nil {
		return nil
	}
	// A port free now on host; the server binds it moments later.
	ln, err := net.Listen("tcp", net.JoinHostPort(l.host.String(), "0"))
	if err != nil {
		return fmt.Errorf("pgtest: listen on %s: %w", l.host, err)
	}
	l.port = ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dataDir, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	for _, n := range l.nets {
		if _, err := fmt.Fprintf(f, "host all all %s trust\n", n.Masked()); err != nil {
			f.Close()
			return fmt.Errorf("pgtest: pg_hba.conf: %w", err)
		}
	}
	return f.Close()
}

// args are the server's options for TCP; none without ListenTCP.
func (l *tcpListen) args() []string {
	if l == nil {
		return nil
	}
	return []string{"-c", "listen_addresses=" + l.host.String(), "-p", strconv.Itoa(l.port)}
}

// query adds the port to a socket URL's query: the server's one port names
// its socket file too (.s.PGSQL.<port>).
func (l *tcpListen) query(q url.Values) {
	if l != nil {
		q.Set("port", strconv.Itoa(l.port))
	}
}
