package netlimit

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Listener closes, as soon as it accepts them, the connections of a client
// address that already holds the limit, so the server never reads a byte
// from them nor keeps a goroutine for them.
type Listener struct {
	net.Listener
	lim *PerAddr
	log *slog.Logger

	refused atomic.Int64
	mu      sync.Mutex
	logged  time.Time // last time refusals were logged
	unseen  int64     // refusals since then
}

// refusalLogEvery spaces the log lines about refused connections: a client
// hammering the server must not fill the log too.
const refusalLogEvery = 10 * time.Second

// NewListener wraps ln: each client address (Key) may hold limit open
// connections; limit < 1 means no limit.
func NewListener(ln net.Listener, limit int, log *slog.Logger) *Listener {
	return &Listener{Listener: ln, lim: NewPerAddr(limit), log: log}
}

// Accept returns the next connection within the limit.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := Key(c.RemoteAddr().String())
		if l.lim.Acquire(key) {
			return &conn{Conn: c, release: func() { l.lim.Release(key) }}, nil
		}
		// Counted before the close: whoever sees the close may read the count.
		l.refuse(key)
		c.Close()
	}
}

// Refused counts the connections closed for being over the limit.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Held is the number of open connections of the client at remote.
func (l *Listener) Held(remote string) int { return l.lim.Held(Key(remote)) }

func (l *Listener) refuse(key string) {
	l.refused.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unseen++
	if now := time.Now(); now.Sub(l.logged) >= refusalLogEvery {
		l.log.Warn("connections refused: the client holds the most connections one address may",
			"client", key, "limit", l.lim.Limit(), "refused", l.unseen)
		l.logged, l.unseen = now, 0
	}
}

// conn gives its unit back when it is closed, once however often Close is
// called (the server and a handler may both close it).
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
