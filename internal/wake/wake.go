// Package wake is the cross-process wake bus: every process that opens a
// data dir joins it, and after a journal commit it sends one tiny datagram
// to every other member, so their journal hubs read the new events within
// milliseconds instead of at their next poll.
//
// Members find each other through marker files in <data-dir>/wake, one per
// process, naming its unixgram socket. On Linux the socket lives in the
// abstract namespace: no path-length limit, and it disappears with the
// process, so a crashed member is recognised by a refused send and its
// marker is removed. Elsewhere the socket is a file next to the marker.
//
// The bus is an accelerator, never the only path: a member in another
// network namespace or one not found yet gets no datagram, and the hub's
// poll of the store catches up. (A datagram to a peer whose queue is full
// is dropped on purpose: that peer has wake-ups still to read.) Idle, it
// costs nothing: no timers, two goroutines parked in the runtime.
//
// Wiring, per process:
//
//	bus, err := wake.Open(filepath.Join(dataDir, "wake"), log)
//	if err != nil {
//		log.Warn("no cross-process wake-ups; polling only", "err", err)
//		bus = nil // a nil *Bus is inert
//	}
//	w := journal.NewWriter(st, func() { hub.Poke(); bus.Notify() }, log)
//	go func() {
//		for {
//			select {
//			case <-bus.C():
//				hub.Poke()
//			case <-ctx.Done():
//				return
//			}
//		}
//	}()
//	defer bus.Close()
package wake

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// rescanAfter bounds how long a member can go unnoticed when its hello
	// was lost: the peer list is re-read at most this often, and only when
	// there is something to send.
	rescanAfter = time.Second
	// retryRead is the pause after an unexpected receive error, so a
	// persistent one cannot spin a core.
	retryRead = 100 * time.Millisecond

	msgNotify byte = 'n'
	msgHello  byte = 'h' // a new member: rescan before the next send

	idBytes       = 8
	abstractPref  = "@caduceus-wake-"
	socketSuffix  = ".sock"
	markerTmpPref = "."
)

// ErrPathTooLong is returned by Open when the socket file's path does not
// fit a unix socket address; the caller then relies on polling.
var ErrPathTooLong = errors.New("wake: socket path too long")

// options are the knobs tests turn; Open uses defaultOptions.
type options struct {
	abstract bool          // abstract namespace (Linux) instead of a socket file
	rescan   time.Duration // peer list age that triggers a rescan
}

func defaultOptions() options {
	return options{abstract: runtime.GOOS == "linux", rescan: rescanAfter}
}

// Bus is one process's membership of the wake bus of a data dir. A nil
// *Bus is a valid member of no bus: Notify does nothing, C never fires,
// Peers is 0 and Close returns nil, so a process that could not join (see
// Open) runs on polling without special cases.
type Bus struct {
	dir  string
	id   string
	self marker
	opts options
	log  *slog.Logger
	conn *net.UnixConn // where peers' datagrams arrive

	c    chan struct{} // capacity 1: coalesced wake-ups for the consumer
	kick chan struct{} // capacity 1: coalesced Notify calls for the sender
	quit chan struct{}
	wg   sync.WaitGroup

	dirty     atomic.Bool  // a hello arrived: rescan before the next send
	dropped   atomic.Int64 // datagrams not sent because a peer's queue was full
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	notifyMsg, helloMsg []byte  // the datagrams, allocated once
	roundPeers          []*peer // reused by round, which never runs concurrently

	mu      sync.Mutex
	peers   map[string]*peer // reachable members by id, each with a connected socket
	ignored map[string]bool  // markers of members this process cannot reach
	scanned time.Time
}

type peer struct {
	id   string
	conn *net.UnixConn
	out  *sender
}

// Open joins the wake bus in dir (normally <data-dir>/wake), creating dir
// if needed. log may be nil.
func Open(dir string, log *slog.Logger) (*Bus, error) {
	return open(dir, log, defaultOptions())
}

func open(dir string, log *slog.Logger, o options) (*Bus, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.rescan <= 0 {
		o.rescan = rescanAfter
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("wake: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("wake: %w", err)
	}
	var raw [idBytes]byte
	_, _ = rand.Read(raw[:]) // never fails on supported platforms
	id := hex.EncodeToString(raw[:])
	b := &Bus{
		dir: abs, id: id, opts: o, log: log,
		self:    localMarker(id, o.abstract),
		c:       make(chan struct{}, 1),
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		peers:   map[string]*peer{},
		ignored: map[string]bool{},
	}
	b.notifyMsg, b.helloMsg = []byte{msgNotify}, []byte{msgHello}
	addr, ok := b.resolve(b.self.Addr)
	if !ok {
		return nil, fmt.Errorf("wake: bad own address %q", b.self.Addr)
	}
	if limit := maxSocketPath(); !o.abstract && len(addr.Name) >= limit {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d; use a shorter data dir",
			ErrPathTooLong, addr.Name, len(addr.Name), limit-1)
	}
	b.conn, err = net.ListenUnixgram("unixgram", addr)
	if err != nil {
		return nil, fmt.Errorf("wake: %w", err)
	}
	// Receive before announcing, so a hello answered at once is not missed.
	b.wg.Add(1)
	go b.receive()
	if err := writeMarker(b.dir, b.id, b.self); err != nil {
		b.closed.Store(true)
		close(b.quit)
		_ = b.conn.Close()
		b.wg.Wait()
		b.removeSocketFile(b.id)
		return nil, err
	}
	b.round(b.helloMsg)
	b.wg.Add(1)
	go b.sendLoop()
	return b, nil
}

// Notify wakes every other member. It never blocks: the datagrams are sent
// by the Bus's own goroutine, and Notify calls made while a round of sends
// is under way are merged into one more round.
func (b *Bus) Notify() {
	if b == nil || b.closed.Load() {
		return
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// C receives a value after datagrams from other members arrive; several
// arrivals may yield one value. It is never closed: select on it together
// with the consumer's own context.
func (b *Bus) C() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.c
}

// Peers reports how many other members the Bus can reach, rescanning the
// dir if the list is stale.
func (b *Bus) Peers() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return 0
	}
	b.refreshLocked(time.Now())
	return len(b.peers)
}

// Close leaves the bus: it removes the marker, closes the sockets and stops
// the goroutines. It is idempotent.
func (b *Bus) Close() error {
	if b == nil {
		return nil
	}
	b.closeOnce.Do(func() {
		b.closed.Store(true)
		// Under mu: a rescan in progress would otherwise see the marker
		// gone and put it back.
		b.mu.Lock()
		rmErr := os.Remove(filepath.Join(b.dir, b.id))
		b.mu.Unlock()
		if errors.Is(rmErr, fs.ErrNotExist) {
			rmErr = nil // a peer took us for dead; nothing left to clean
		}
		close(b.quit)
		connErr := b.conn.Close()
		b.wg.Wait()
		b.mu.Lock()
		for _, p := range b.peers {
			_ = p.conn.Close()
		}
		b.peers = nil
		b.removeSocketFile(b.id)
		b.mu.Unlock()
		b.closeErr = errors.Join(rmErr, connErr)
	})
	return b.closeErr
}

func (b *Bus) receive() {
	defer b.wg.Done()
	buf := make([]byte, 16)
	for {
		n, err := b.conn.Read(buf)
		if err != nil {
			if b.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			b.log.Warn("wake: receive failed", "err", err)
			select {
			case <-b.quit:
				return
			case <-time.After(retryRead):
			}
			continue
		}
		if n > 0 && buf[0] == msgHello {
			b.dirty.Store(true) // before signalling: whoever wakes sees it
		}
		select {
		case b.c <- struct{}{}:
		default:
		}
	}
}

func (b *Bus) sendLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.quit:
			return
		case <-b.kick:
		}
		b.round(b.notifyMsg)
	}
}

// round sends msg once to every reachable member. Only one goroutine runs
// rounds at a time: Open before starting sendLoop, then sendLoop.
func (b *Bus) round(msg []byte) {
	b.mu.Lock()
	b.refreshLocked(time.Now())
	peers := b.roundPeers[:0]
	for _, p := range b.peers {
		peers = append(peers, p)
	}
	b.mu.Unlock()
	for _, p := range peers {
		b.sent(p, p.out.send(msg))
	}
	clear(peers) // let forgotten peers go
	b.roundPeers = peers
}

// sent records the outcome of one send.
func (b *Bus) sent(p *peer, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err == nil:
	case isFull(err):
		// Its queue holds datagrams it has not read yet, so it is about
		// to wake up anyway; waiting for room would only delay the rest.
		b.dropped.Add(1)
	case errors.Is(err, net.ErrClosed):
		// Dropped by a concurrent rescan or Close.
	case isDead(err):
		b.forgetLocked(p)
		b.removeMarkerLocked(p.id, err)
	default:
		// Unknown trouble: drop the connection and dial afresh at the
		// next round; the dial tells whether the peer is still there.
		b.log.Debug("wake: send failed", "peer", p.id, "err", err)
		b.forgetLocked(p)
		b.dirty.Store(true)
	}
}

func (b *Bus) forgetLocked(p *peer) {
	if b.peers[p.id] == p {
		delete(b.peers, p.id)
	}
	_ = p.conn.Close()
}

// refreshLocked re-reads the dir if a hello arrived or the list is older
// than the rescan interval. b.mu must be held.
func (b *Bus) refreshLocked(now time.Time) {
	if b.closed.Load() {
		return
	}
	if !b.dirty.Swap(false) && !b.scanned.IsZero() && now.Sub(b.scanned) < b.opts.rescan {
		return
	}
	b.scanned = now
	ents, err := os.ReadDir(b.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.log.Warn("wake: reading peers", "err", err)
		return
	}
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		id := e.Name()
		if !validID(id) {
			continue
		}
		seen[id] = true
		if id == b.id || b.peers[id] != nil || b.ignored[id] {
			continue
		}
		b.addPeerLocked(id)
	}
	for id, p := range b.peers {
		if !seen[id] {
			delete(b.peers, id)
			_ = p.conn.Close()
		}
	}
	for id := range b.ignored {
		if !seen[id] {
			delete(b.ignored, id)
		}
	}
	if !seen[b.id] {
		// Someone removed our marker (it took us for dead, or the dir was
		// wiped): without it, members that join later cannot find us.
		b.log.Warn("wake: own marker was missing; rewriting it")
		if err := writeMarker(b.dir, b.id, b.self); err != nil {
			b.log.Warn("wake: rewriting own marker", "err", err)
		}
	}
}

// addPeerLocked reads the marker of id and connects to the member it names.
func (b *Bus) addPeerLocked(id string) {
	m, err := readMarker(b.dir, id)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.log.Debug("wake: unreadable marker", "peer", id, "err", err)
			b.ignored[id] = true
		}
		return
	}
	addr, ok := b.resolve(m.Addr)
	if !ok || addrID(m.Addr) != id {
		b.log.Debug("wake: bad marker", "peer", id, "addr", m.Addr)
		b.ignored[id] = true
		return
	}
	switch b.self.reach(m) {
	case unreachable:
		b.ignored[id] = true
		return
	case leftover:
		b.removeMarkerLocked(id, errors.New("written before this host's last reboot"))
		return
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		if isDead(err) {
			b.removeMarkerLocked(id, err)
		} else {
			b.log.Debug("wake: dialing peer", "peer", id, "err", err)
		}
		return
	}
	out, err := newSender(conn)
	if err != nil {
		_ = conn.Close()
		b.log.Debug("wake: dialing peer", "peer", id, "err", err)
		return
	}
	b.peers[id] = &peer{id: id, conn: conn, out: out}
}

// removeMarkerLocked deletes the marker (and socket file) of a member that
// is gone, so no one else tries it again.
func (b *Bus) removeMarkerLocked(id string, why error) {
	err := os.Remove(filepath.Join(b.dir, id))
	b.removeSocketFile(id)
	if err == nil {
		b.log.Info("wake: removed the marker of a departed process", "peer", id, "why", why)
	}
}

func (b *Bus) removeSocketFile(id string) {
	_ = os.Remove(filepath.Join(b.dir, id+socketSuffix))
}

// resolve turns a marker address into a socket address. Only the two forms
// this package writes are accepted, so a marker cannot point elsewhere.
func (b *Bus) resolve(a string) (*net.UnixAddr, bool) {
	id := addrID(a)
	switch {
	case id == "":
		return nil, false
	case a[0] == '@':
		return &net.UnixAddr{Name: a, Net: "unixgram"}, true
	default:
		return &net.UnixAddr{Name: filepath.Join(b.dir, a), Net: "unixgram"}, true
	}
}

// addrID returns the member id an address names, or "" if it is not one of
// the forms this package writes.
func addrID(a string) string {
	var id string
	switch {
	case len(a) > len(abstractPref) && a[:len(abstractPref)] == abstractPref:
		id = a[len(abstractPref):]
	case len(a) > len(socketSuffix) && a[len(a)-len(socketSuffix):] == socketSuffix:
		id = a[:len(a)-len(socketSuffix)]
	}
	if !validID(id) {
		return ""
	}
	return id
}

func validID(s string) bool {
	if len(s) != 2*idBytes {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isDead reports whether a dial or send failed because nobody is bound to
// the address any more.
func isDead(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// maxSocketPath is the size of sun_path, which includes the terminating NUL
// on the platforms that need one.
func maxSocketPath() int {
	if runtime.GOOS == "linux" {
		return 108
	}
	return 104
}
