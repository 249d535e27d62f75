package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/caduceus-dev/caduceus/internal/proctrack"
)

// Errors of the Manager.
var (
	ErrNotFound = errors.New("terminal: no such terminal")
	ErrTooMany  = errors.New("terminal: too many terminals")
	ErrEnded    = errors.New("terminal: the terminal has ended")
	ErrClosed   = errors.New("terminal: the manager is closed")
)

// Defaults of Config.
const (
	DefaultScrollback  = 256 << 10
	DefaultIdle        = 30 * time.Minute
	DefaultMaxPerOwner = 4
)

// Tracker records terminals' shells so that a sweep finds those a crashed
// server left behind (*proctrack.Registry).
type Tracker interface {
	Env(processID string) string
	Prepare(p proctrack.Process) error
	Track(p proctrack.Process) error
	Kill(processID string) int
	Untrack(processID string) error
}

// Config configures a Manager. Zero values mean the defaults.
type Config struct {
	// Shell is the program run; "" picks bash if present, else $SHELL,
	// else /bin/sh (Shell).
	Shell string
	// Environ is the shell's environment, without TERM (set here); build
	// it with tool.CommandEnv so no secret of the server's reaches it.
	Environ []string
	// Scrollback is how many bytes of output a terminal keeps for a
	// client that reattaches.
	Scrollback int
	// Idle closes a terminal no client is attached to and that wrote
	// nothing for this long.
	Idle time.Duration
	// MaxPerOwner bounds the terminals one person holds in one session.
	MaxPerOwner int
	// Tracker records shells; nil records nothing.
	Tracker Tracker
	Log     *slog.Logger
	Now     func() time.Time
}

// Manager holds the running terminals.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	terms  map[string]*Terminal
	closed bool
}

// New returns a Manager; Run closes its idle terminals.
func New(cfg Config) *Manager {
	if cfg.Shell == "" {
		cfg.Shell = Shell(os.Getenv("SHELL"))
	}
	if cfg.Scrollback <= 0 {
		cfg.Scrollback = DefaultScrollback
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.MaxPerOwner <= 0 {
		cfg.MaxPerOwner = DefaultMaxPerOwner
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, log: cfg.Log, terms: map[string]*Terminal{}}
}

// Shell picks the shell: bash where installed (the shell people expect,
// with line editing), else the user's login shell, else /bin/sh.
func Shell(userShell string) string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	if userShell != "" {
		if _, err := os.Stat(userShell); err == nil {
			return userShell
		}
	}
	return "/bin/sh"
}

func (m *Manager) now() time.Time { return m.cfg.Now() }

// Spec is what Open needs.
type Spec struct {
	SessionID string
	// Owner is who the terminal belongs to; only they reattach to it.
	Owner      string
	Dir        string // the session's workspace
	Cols, Rows int    // 0 means 80x24
}

// Open starts a shell in spec.Dir.
func (m *Manager) Open(ctx context.Context, spec Spec) (*Terminal, error) {
	if spec.Cols <= 0 || spec.Rows <= 0 {
		spec.Cols, spec.Rows = 80, 24
	}
	if spec.Cols > maxDim || spec.Rows > maxDim {
		return nil, fmt.Errorf("terminal: size %dx%d out of range (1..%d)", spec.Cols, spec.Rows, maxDim)
	}
	if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("terminal: workspace %q is not a directory: %w", spec.Dir, errors.Join(err, syscall.ENOTDIR))
	}
	t := &Terminal{ID: newID(), SessionID: spec.SessionID, Owner: spec.Owner, Dir: spec.Dir, Shell: m.cfg.Shell,
		m: m, done: make(chan struct{}), ring: newRing(m.cfg.Scrollback), lastActive: m.now(), Started: m.now()}
	// The place is taken before the shell starts, so concurrent opens
	// cannot exceed the cap.
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return nil, ErrClosed
	case m.countLocked(spec.SessionID, spec.Owner) >= m.cfg.MaxPerOwner:
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: %d open in this session (the limit)", ErrTooMany, m.cfg.MaxPerOwner)
	}
	m.terms[t.ID] = t
	m.mu.Unlock()
	if err := m.start(ctx, t, spec); err != nil {
		m.forget(t)
		return nil, err
	}
	return t, nil
}

func (m *Manager) countLocked(sessionID, owner string) int {
	n := 0
	for _, t := range m.terms {
		if t.SessionID == sessionID && t.Owner == owner {
			n++
		}
	}
	return n
}

func (m *Manager) start(ctx context.Context, t *Terminal, spec Spec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("terminal: open a pty: %w", err)
	}
	defer tty.Close()
	// pty.Open's ioctls left the master in blocking mode: a duplicate in
	// non-blocking mode is pollable, so closing it interrupts a Read.
	master, err := pollable(ptmx)
	if err != nil {
		return err
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(spec.Cols), Row: uint16(spec.Rows)}); err != nil {
		master.Close()
		return fmt.Errorf("terminal: size: %w", err)
	}
	env := append(append([]string(nil), m.cfg.Environ...), "TERM=xterm-256color", "COLORTERM=truecolor")
	if m.cfg.Tracker != nil {
		env = append(env, m.cfg.Tracker.Env(t.ID))
	}
	cmd := exec.Command(t.Shell)
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A session of its own with the pty as its controlling terminal: the
	// shell leads its process group, which Close kills.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	proc := proctrack.Process{ProcessID: t.ID, SessionID: t.SessionID, Command: "terminal: " + t.Shell, StartedAt: t.Started, Kind: proctrack.KindTerminal}
	if m.cfg.Tracker != nil {
		if err := m.cfg.Tracker.Prepare(proc); err != nil {
			master.Close()
			return fmt.Errorf("terminal: record: %w", err)
		}
	}
	if err := cmd.Start(); err != nil {
		master.Close()
		m.untrack(t)
		return fmt.Errorf("terminal: start %s: %w", t.Shell, err)
	}
	if m.cfg.Tracker != nil {
		proc.PID = cmd.Process.Pid
		if err := m.cfg.Tracker.Track(proc); err != nil {
			m.log.Warn("terminal not recorded for the sweep", "terminal_id", t.ID, "err", err)
		}
	}
	t.pty, t.cmd = master, cmd
	pumped := make(chan struct{})
	go func() { defer close(pumped); t.pump() }()
	go t.wait(pumped)
	return nil
}

// pollable returns a non-blocking duplicate of f and closes f.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("terminal: dup pty: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("terminal: pty: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// killGroup kills the shell's process group and, when tracked, whatever
// carries its mark elsewhere (a job moved to a session of its own).
func (m *Manager) killGroup(t *Terminal) {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	// The shell has not been reaped yet when this runs before wait (Close)
	// or is being waited for: its pid, leader of the group, is still its.
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	if m.cfg.Tracker != nil {
		m.cfg.Tracker.Kill(t.ID)
	}
}

func (m *Manager) untrack(t *Terminal) {
	if m.cfg.Tracker == nil {
		return
	}
	if err := m.cfg.Tracker.Untrack(t.ID); err != nil {
		m.log.Warn("terminal record not removed", "terminal_id", t.ID, "err", err)
	}
}

// forget drops an ended terminal.
func (m *Manager) forget(t *Terminal) {
	m.mu.Lock()
	delete(m.terms, t.ID)
	m.mu.Unlock()
	m.untrack(t)
}

// Get returns the running terminal id of owner in sessionID.
func (m *Manager) Get(id, sessionID, owner string) (*Terminal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[id]
	// Somebody else's terminal is as absent as one that never was.
	if !ok || t.SessionID != sessionID || t.Owner != owner {
		return nil, ErrNotFound
	}
	return t, nil
}

// List returns the running terminals of owner in sessionID.
func (m *Manager) List(sessionID, owner string) []*Terminal {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Terminal
	for _, t := range m.terms {
		if t.SessionID == sessionID && t.Owner == owner {
			out = append(out, t)
		}
	}
	return out
}

// CloseIdle closes the terminals no client is attached to that wrote
// nothing for Config.Idle, and returns how many.
func (m *Manager) CloseIdle() int {
	now := m.now()
	m.mu.Lock()
	var idle []*Terminal
	for _, t := range m.terms {
		t.mu.Lock()
		if t.client == nil && now.Sub(t.lastActive) >= m.cfg.Idle {
			idle = append(idle, t)
		}
		t.mu.Unlock()
	}
	m.mu.Unlock()
	for _, t := range idle {
		m.log.Info("terminal closed: idle", "terminal_id", t.ID, "session_id", t.SessionID, "idle", m.cfg.Idle)
		t.Close("idle")
	}
	return len(idle)
}

// CloseSession closes every terminal of sessionID, whoever owns it, and
// returns how many: a deleted session leaves no shell behind.
func (m *Manager) CloseSession(sessionID, reason string) int {
	m.mu.Lock()
	var those []*Terminal
	for _, t := range m.terms {
		if t.SessionID == sessionID {
			those = append(those, t)
		}
	}
	m.mu.Unlock()
	for _, t := range those {
		t.Close(reason)
	}
	return len(those)
}

// Run closes idle terminals until ctx ends, then closes every terminal.
func (m *Manager) Run(ctx context.Context) {
	every := min(m.cfg.Idle/4, time.Minute)
	tick := time.NewTicker(max(every, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			m.Close()
			return
		case <-tick.C:
			m.CloseIdle()
		}
	}
}

// Close closes every terminal and refuses new ones.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	all := make([]*Terminal, 0, len(m.terms))
	for _, t := range m.terms {
		all = append(all, t)
	}
	m.mu.Unlock()
	for _, t := range all {
		t.Close("server stopping")
	}
}

func newID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "term_" + hex.EncodeToString(b[:])
}
