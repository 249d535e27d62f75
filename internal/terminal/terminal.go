package terminal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Terminal is one shell on a pseudo-terminal. Its methods are safe for
// concurrent use.
type Terminal struct {
	ID        string
	SessionID string
	Owner     string
	Dir       string
	Shell     string
	Started   time.Time

	m    *Manager
	pty  *os.File
	cmd  *exec.Cmd
	done chan struct{} // closed once the terminal has ended

	mu         sync.Mutex
	ring       *ring
	client     *Client
	lastActive time.Time // the last output, attach or detach
	code       int       // the shell's exit status; -1 when it was killed
	reason     string    // why it ended
	ended      bool
	closeOnce  sync.Once
}

// Client is one attachment of a browser to a terminal. Out carries the
// terminal's output after the scrollback Attach returned; it is closed
// when the client is detached (Detach, another client attached, the
// client fell behind) or the terminal ended.
type Client struct {
	Out <-chan []byte
	out chan []byte
	t   *Terminal
	// taken tells why Out closed while the terminal still runs.
	taken string
}

// Why Out closed while the terminal still runs.
const (
	DetachTaken = "attached elsewhere" // another client attached
	DetachSlow  = "too slow"           // the client fell behind its output
)

// clientBuffer is how many output chunks a client may fall behind before
// it is detached (it reattaches and gets the scrollback).
const clientBuffer = 256

// Taken tells why Out closed while the terminal still runs ("" when it
// did not, or the terminal ended).
func (c *Client) Taken() string {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.taken
}

// Detach ends the attachment; the terminal keeps running.
func (c *Client) Detach() {
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client == c {
		t.client = nil
		close(c.out)
		t.lastActive = t.m.now()
	}
}

// Attach returns the scrollback and a client that receives everything
// written after it: nothing is lost or repeated between the two. A client
// already attached is detached (DetachTaken). On an ended terminal the
// client's Out is closed at once.
func (t *Terminal) Attach() ([]byte, *Client) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &Client{out: make(chan []byte, clientBuffer), t: t}
	c.Out = c.out
	if old := t.client; old != nil {
		old.taken = DetachTaken
		close(old.out)
		t.client = nil
	}
	snap := t.ring.Bytes()
	if t.ended {
		close(c.out)
		return snap, c
	}
	t.client = c
	t.lastActive = t.m.now()
	return snap, c
}

// Write sends input to the shell.
func (t *Terminal) Write(p []byte) (int, error) {
	select {
	case <-t.done:
		return 0, ErrEnded
	default:
	}
	return t.pty.Write(p)
}

// Resize sets the terminal's size; the shell gets SIGWINCH.
func (t *Terminal) Resize(cols, rows int) error {
	if cols < 1 || rows < 1 || cols > maxDim || rows > maxDim {
		return fmt.Errorf("terminal: size %dx%d out of range (1..%d)", cols, rows, maxDim)
	}
	return t.control(func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

// Size returns the terminal's columns and rows.
func (t *Terminal) Size() (cols, rows int, err error) {
	err = t.control(func(fd int) error {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		if err == nil {
			cols, rows = int(ws.Col), int(ws.Row)
		}
		return err
	})
	return cols, rows, err
}

// control runs f on the pty's descriptor without File.Fd, which would
// put it in blocking mode: Close could then no longer interrupt a Read.
func (t *Terminal) control(f func(fd int) error) error {
	sc, err := t.pty.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// maxDim bounds columns and rows.
const maxDim = 1000

// InputHidden reports whether what is typed now is meant to stay unseen:
// the terminal is in canonical (line) mode with echo off, as getpass,
// sudo, ssh and `read -s` set it for a password. A line editor (bash's
// readline, vim) also turns echo off, but in raw mode, echoing itself:
// that input is seen. Unknown counts as hidden, so nothing secret is
// logged. On Linux the master side reports the terminal's modes.
func (t *Terminal) InputHidden() bool {
	hidden := true
	_ = t.control(func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		hidden = err != nil || (tio.Lflag&unix.ECHO == 0 && tio.Lflag&unix.ICANON != 0)
		return err
	})
	return hidden
}

// Done is closed once the terminal has ended.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Exit returns the shell's exit status (-1 when it was killed) and why the
// terminal ended; valid once Done is closed.
func (t *Terminal) Exit() (code int, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.code, t.reason
}

// Close ends the terminal: its shell and everything it started are
// killed. Close waits until the shell has been reaped.
func (t *Terminal) Close(reason string) {
	t.kill(reason)
	<-t.done
}

// kill signals the shell's process group (and, when tracked, every
// process carrying its mark) and records why.
func (t *Terminal) kill(reason string) {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		if t.reason == "" {
			t.reason = reason
		}
		t.mu.Unlock()
		t.m.killGroup(t)
	})
}

// pump copies the shell's output into the scrollback and to the attached
// client until the terminal's pty reports the end.
func (t *Terminal) pump() {
	buf := make([]byte, 32<<10)
	for {
		n, err := t.pty.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			t.mu.Lock()
			t.ring.Write(chunk)
			t.lastActive = t.m.now()
			if c := t.client; c != nil {
				select {
				case c.out <- chunk:
				default:
					// It fell behind: it reattaches and gets the
					// scrollback rather than the server buffering for it.
					c.taken = DetachSlow
					close(c.out)
					t.client = nil
				}
			}
			t.mu.Unlock()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
				t.m.log.Warn("terminal output", "terminal_id", t.ID, "err", err)
			}
			return
		}
	}
}

// wait reaps the shell, then kills what it left behind and closes the
// pty, which ends pump.
func (t *Terminal) wait(pumped <-chan struct{}) {
	err := t.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode() // -1 when killed by a signal
	case err != nil:
		code = -1
	}
	t.kill("exited")
	// What the shell printed last is read before the pty closes, unless
	// something it left behind still holds the terminal open.
	select {
	case <-pumped:
	case <-time.After(500 * time.Millisecond):
	}
	_ = t.pty.Close()
	<-pumped
	t.mu.Lock()
	t.code = code
	t.ended = true
	if c := t.client; c != nil {
		close(c.out)
		t.client = nil
	}
	t.mu.Unlock()
	t.m.forget(t)
	close(t.done)
}
