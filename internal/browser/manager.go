package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/internal/netguard"
)

// Defaults for Config's zero values.
const (
	DefaultIdleTimeout   = 10 * time.Minute
	DefaultActionTimeout = 30 * time.Second
	DefaultWidth         = 1280
	DefaultHeight        = 800
)

// Config configures the browsers of a Manager.
type Config struct {
	// ExecPath is the Chromium binary.
	ExecPath string
	// Guard confines every connection of every browser; required.
	Guard *netguard.Guard
	// IdleTimeout closes a session's browser after this long without a
	// call.
	IdleTimeout time.Duration
	// ActionTimeout bounds one tool call's work in the page.
	ActionTimeout time.Duration
	// Sandbox keeps Chromium's sandbox on. Off by default: it fails to
	// start as root or in a container without user namespaces; the
	// network guard confines the page either way.
	Sandbox bool
	// Width and Height are the window's size in CSS pixels.
	Width, Height int
	Log           *slog.Logger
}

// FindChromium returns the first Chromium binary among the usual Debian
// places, or "".
func FindChromium() string {
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser",
		"/usr/bin/google-chrome"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// Manager owns the sessions' browsers; safe for concurrent use.
type Manager struct {
	cfg  Config
	log  *slog.Logger
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

// ErrClosed is returned by calls after Close.
var ErrClosed = errors.New("browser: shut down")

// New returns a Manager and starts its idle reaper; Close stops both.
func New(cfg Config) (*Manager, error) {
	if cfg.ExecPath == "" {
		return nil, errors.New("browser: no Chromium binary")
	}
	if cfg.Guard == nil {
		return nil, errors.New("browser: no network guard")
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = DefaultActionTimeout
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		cfg.Width, cfg.Height = DefaultWidth, DefaultHeight
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg, log: log, stop: make(chan struct{}), done: make(chan struct{}), sessions: map[string]*session{}}
	go m.reap()
	return m, nil
}

// reap closes browsers idle for longer than IdleTimeout.
func (m *Manager) reap() {
	defer close(m.done)
	tick := time.NewTicker(min(m.cfg.IdleTimeout/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-tick.C:
			m.closeIdle(now)
		}
	}
}

func (m *Manager) closeIdle(now time.Time) {
	var idle []*session
	m.mu.Lock()
	for id, s := range m.sessions {
		if s.idleSince(now) > m.cfg.IdleTimeout {
			idle = append(idle, s)
			delete(m.sessions, id)
		}
	}
	m.mu.Unlock()
	for _, s := range idle {
		m.log.Info("browser closed after idling", "session", s.id)
		s.close()
	}
}

// session returns the session's browser, starting it if there is none or
// if the one it had stopped (crashed, killed), counted busy (the caller
// ends it): it is marked under the lock the reaper holds, so a browser
// that just started, or idled until now, is not closed under the call.
// Chromium starts outside the lock, so other sessions' calls do not wait.
func (m *Manager) session(id string) (*session, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	if s, ok := m.sessions[id]; ok && s.alive() {
		s.begin()
		m.mu.Unlock()
		return s, nil
	}
	m.mu.Unlock()
	m.drop(id)
	s, err := m.start(id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		s.close()
		return nil, ErrClosed
	}
	if other, ok := m.sessions[id]; ok && other.alive() {
		// Another call of the session started one meanwhile: keep that.
		other.begin()
		s.close() // rare: two first calls of one session raced
		return other, nil
	}
	m.sessions[id] = s
	s.begin()
	return s, nil
}

// drop forgets the session's browser if it stopped, and closes what is
// left of it (proxy, profile).
func (m *Manager) drop(id string) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	if ok && !s.alive() {
		delete(m.sessions, id)
	} else {
		s = nil
	}
	m.mu.Unlock()
	if s != nil {
		m.log.Warn("browser had stopped", "session", id)
		s.close()
	}
}

// existing returns the session's browser if one runs, counted busy like
// session's.
func (m *Manager) existing(id string) *session {
	m.drop(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if s != nil {
		s.begin()
	}
	return s
}

// CloseSession closes the session's browser; false if none ran.
func (m *Manager) CloseSession(id string) bool {
	m.mu.Lock()
	s, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if ok {
		s.close()
	}
	return ok
}

// Running lists the sessions whose browser runs.
func (m *Manager) Running() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	return ids
}

// Close closes every browser and stops the reaper.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	all := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	for _, s := range all {
		s.close()
	}
	return nil
}

// start launches a Chromium for one session, behind its own proxy.
func (m *Manager) start(id string) (*session, error) {
	s := &session{id: id, used: time.Now()}
	proxy, err := netguard.NewProxy(m.cfg.Guard, s.noteRefused, m.log)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "caduceus-browser-")
	if err != nil {
		proxy.Close()
		return nil, fmt.Errorf("browser profile: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(m.cfg.ExecPath),
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(m.cfg.Width, m.cfg.Height),
		chromedp.ProxyServer("http://"+proxy.Addr()),
		// Chromium sends loopback straight out unless told not to; the
		// guard must see those requests too.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// No calls home: they would only be refused or leak the session.
		chromedp.Flag("disable-features", "HttpsUpgrades,AutofillServerCommunication,OptimizationHints,MediaRouter,Translate"),
	)
	if !m.cfg.Sandbox {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	// The first Run starts the browser, with the tab's own context (a
	// deadline here would end the browser with it).
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		cancelAlloc()
		proxy.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	s.tab, s.proxy, s.dir = tab, proxy, dir
	s.cancel = func() { cancelTab(); cancelAlloc() }
	m.log.Info("browser started", "session", id)
	return s, nil
}
