package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/proctrack"
	"github.com/caduceus-dev/caduceus/internal/terminal"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// screen collects a client's output.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.buf.String() }

func watch(c *terminal.Client, s *screen) {
	go func() {
		for b := range c.Out {
			s.mu.Lock()
			s.buf.Write(b)
			s.mu.Unlock()
		}
	}()
}

// waitFor waits until the screen holds want.
func waitFor(t *testing.T, s *screen, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newManager(t *testing.T, cfg terminal.Config) *terminal.Manager {
	t.Helper()
	if cfg.Environ == nil {
		cfg.Environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh" // quiet and the same everywhere
	}
	m := terminal.New(cfg)
	t.Cleanup(m.Close)
	return m
}

func open(t *testing.T, m *terminal.Manager, dir string) *terminal.Terminal {
	t.Helper()
	tm, err := m.Open(context.Background(), terminal.Spec{SessionID: "ses_1", Owner: "usr_1", Dir: dir, Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestEchoInWorkspace(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, terminal.Config{})
	tm := open(t, m, dir)
	_, c := tm.Attach()
	var s screen
	watch(c, &s)
	fmt.Fprintf(tm, "echo hello-$((6*7)); pwd\n")
	waitFor(t, &s, "hello-42")
	real, _ := filepath.EvalSymlinks(dir)
	waitFor(t, &s, real)
}

func TestResizeReachesStty(t *testing.T) {
	m := newManager(t, terminal.Config{})
	tm := open(t, m, t.TempDir())
	_, c := tm.Attach()
	var s screen
	watch(c, &s)
	fmt.Fprintf(tm, "stty size\n")
	waitFor(t, &s, "30 100")
	if err := tm.Resize(132, 43); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(tm, "stty size\n")
	waitFor(t, &s, "43 132")
	for _, bad := range [][2]int{{0, 10}, {10, 0}, {-1, 5}, {1001, 5}} {
		if err := tm.Resize(bad[0], bad[1]); err == nil {
			t.Errorf("Resize(%d, %d) was accepted", bad[0], bad[1])
		}
	}
}

func TestReattachSeesScrollback(t *testing.T) {
	m := newManager(t, terminal.Config{Scrollback: 4096})
	tm := open(t, m, t.TempDir())
	_, c := tm.Attach()
	var s screen
	watch(c, &s)
	fmt.Fprintf(tm, "echo first-$((1+1))\n")
	waitFor(t, &s, "first-2")
	c.Detach()
	// Output while nobody watches is kept too.
	fmt.Fprintf(tm, "echo second-$((2+1))\n")
	var snap []byte
	deadline := time.Now().Add(10 * time.Second)
	var c2 *terminal.Client
	for {
		snap, c2 = tm.Attach()
		if bytes.Contains(snap, []byte("second-3")) || time.Now().After(deadline) {
			break
		}
		c2.Detach()
		time.Sleep(20 * time.Millisecond)
	}
	if !bytes.Contains(snap, []byte("first-2")) || !bytes.Contains(snap, []byte("second-3")) {
		t.Fatalf("the scrollback lacks the earlier output:\n%s", snap)
	}
	// A second attach takes the terminal over; the first is told why.
	_, c3 := tm.Attach()
	for range c2.Out {
	}
	if got := c2.Taken(); got != terminal.DetachTaken {
		t.Errorf("the replaced client was told %q, want %q", got, terminal.DetachTaken)
	}
	var s3 screen
	watch(c3, &s3)
	fmt.Fprintf(tm, "echo third-$((3+1))\n")
	waitFor(t, &s3, "third-4")

	// The ring is bounded: a flood leaves at most the scrollback's size.
	fmt.Fprintf(tm, "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done; echo flood-$((9*9))\n")
	waitFor(t, &s3, "flood-81")
	snap, _ = tm.Attach()
	if len(snap) > 4096 || !bytes.Contains(snap, []byte("flood-81")) || bytes.Contains(snap, []byte("first-2")) {
		t.Fatalf("scrollback of %d bytes (limit 4096), newest kept: %v, oldest dropped: %v",
			len(snap), bytes.Contains(snap, []byte("flood-81")), !bytes.Contains(snap, []byte("first-2")))
	}
}

func TestIdleClose(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	m := newManager(t, terminal.Config{Idle: time.Minute, Now: clock})
	watched := open(t, m, t.TempDir())
	_, c := watched.Attach()
	alone := open(t, m, t.TempDir())
	_, c2 := alone.Attach()
	c2.Detach()
	advance(30 * time.Second)
	if n := m.CloseIdle(); n != 0 {
		t.Fatalf("closed %d terminals before they were idle", n)
	}
	advance(31 * time.Second)
	if n := m.CloseIdle(); n != 1 {
		t.Fatalf("closed %d terminals, want the one nobody watches", n)
	}
	<-alone.Done()
	if _, why := alone.Exit(); why != "idle" {
		t.Errorf("the idle terminal ended because %q", why)
	}
	if _, err := m.Get(alone.ID, "ses_1", "usr_1"); !errors.Is(err, terminal.ErrNotFound) {
		t.Errorf("an idle-closed terminal is still found: %v", err)
	}
	select {
	case <-watched.Done():
		t.Fatal("a terminal with a client attached was closed as idle")
	default:
	}
	c.Detach()
}

// TestCloseKillsEverything: closing a terminal kills its shell, a job in
// the background and a process that moved to a session of its own.
func TestCloseKillsEverything(t *testing.T) {
	reg, err := proctrack.Open(filepath.Join(t.TempDir(), "procs"), "web_test", slog.New(slog.DiscardHandler))
	if errors.Is(err, proctrack.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, terminal.Config{Tracker: reg})
	dir := t.TempDir()
	tm := open(t, m, dir)
	if recs, _ := reg.Records(); len(recs) != 1 || recs[0].PID == 0 {
		t.Fatalf("the shell is not recorded: %+v", recs)
	}
	_, c := tm.Attach()
	var s screen
	watch(c, &s)
	fmt.Fprintf(tm, "sleep 300 & echo $! > bg.pid; setsid sleep 301 & echo $! > escaped.pid; echo started\n")
	waitFor(t, &s, "started")
	pids := []int{readPID(t, filepath.Join(dir, "bg.pid")), readPID(t, filepath.Join(dir, "escaped.pid"))}
	tm.Close("closed by test")
	for _, pid := range pids {
		waitGone(t, pid)
	}
	if recs, _ := reg.Records(); len(recs) != 0 {
		t.Errorf("records left after close: %+v", recs)
	}
	if code, why := tm.Exit(); why != "closed by test" || code != -1 {
		t.Errorf("Exit() = %d, %q", code, why)
	}
	if _, err := tm.Write([]byte("x")); !errors.Is(err, terminal.ErrEnded) {
		t.Errorf("writing to a closed terminal: %v", err)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// Gone, or a zombie waiting for its reaper.
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived its terminal", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestShellExitEndsTerminal(t *testing.T) {
	m := newManager(t, terminal.Config{})
	tm := open(t, m, t.TempDir())
	_, c := tm.Attach()
	fmt.Fprintf(tm, "exit 7\n")
	select {
	case <-tm.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not end when its shell exited")
	}
	for range c.Out {
	}
	if code, why := tm.Exit(); code != 7 || why != "exited" {
		t.Errorf("Exit() = %d, %q; want 7, exited", code, why)
	}
	if got := m.List("ses_1", "usr_1"); len(got) != 0 {
		t.Errorf("an ended terminal is still listed")
	}
}

// TestNoSecretEnv: the shell gets the agent's command environment, which
// never holds the server's secrets.
func TestNoSecretEnv(t *testing.T) {
	server := []string{"PATH=" + os.Getenv("PATH"), "HOME=/tmp", "CADUCEUS_TOKEN=tok-supersecret-123",
		"OPENAI_API_KEY=sk-supersecret-456", "DATABASE_URL=postgres://u:p@h/db", "LANG=C.UTF-8"}
	m := newManager(t, terminal.Config{Environ: tool.CommandEnv(server, nil)})
	tm := open(t, m, t.TempDir())
	_, c := tm.Attach()
	var s screen
	watch(c, &s)
	fmt.Fprintf(tm, "env; echo env-$((4+5))\n")
	waitFor(t, &s, "env-9\r\n")
	out := s.String()
	for _, leak := range []string{"supersecret", "CADUCEUS_TOKEN", "OPENAI_API_KEY", "DATABASE_URL"} {
		if strings.Contains(out, leak) {
			t.Errorf("the terminal's environment holds %q", leak)
		}
	}
	for _, want := range []string{"LANG=C.UTF-8", "TERM=xterm-256color"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal's environment lacks %q", want)
		}
	}
}

func TestCapAndOwners(t *testing.T) {
	m := newManager(t, terminal.Config{MaxPerOwner: 2})
	dir := t.TempDir()
	a := open(t, m, dir)
	open(t, m, dir)
	if _, err := m.Open(context.Background(), terminal.Spec{SessionID: "ses_1", Owner: "usr_1", Dir: dir}); !errors.Is(err, terminal.ErrTooMany) {
		t.Fatalf("a third terminal: %v, want ErrTooMany", err)
	}
	// Another person, or another session, has places of their own.
	if _, err := m.Open(context.Background(), terminal.Spec{SessionID: "ses_1", Owner: "usr_2", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(a.ID, "ses_1", "usr_2"); !errors.Is(err, terminal.ErrNotFound) {
		t.Errorf("another person reached usr_1's terminal: %v", err)
	}
	if _, err := m.Get(a.ID, "ses_2", "usr_1"); !errors.Is(err, terminal.ErrNotFound) {
		t.Errorf("another session reached the terminal: %v", err)
	}
	a.Close("test")
	if _, err := m.Open(context.Background(), terminal.Spec{SessionID: "ses_1", Owner: "usr_1", Dir: dir}); err != nil {
		t.Errorf("a closed terminal still counts: %v", err)
	}
	if _, err := m.Open(context.Background(), terminal.Spec{SessionID: "ses_1", Owner: "usr_3", Dir: filepath.Join(dir, "nope")}); err == nil {
		t.Error("a missing workspace was accepted")
	}
}

// TestPasswordPromptIsHidden: a prompt that turns echo off in line mode
// (a password) hides its input; a line editor's raw mode does not.
func TestPasswordPromptIsHidden(t *testing.T) {
	shells := []string{"/bin/sh"}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash)
	}
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			m := newManager(t, terminal.Config{Shell: sh})
			tm := open(t, m, t.TempDir())
			_, c := tm.Attach()
			var s screen
			watch(c, &s)
			fmt.Fprintf(tm, "echo ready-$((1+1))\n")
			waitFor(t, &s, "ready-2\r\n")
			// At the prompt: sh reads in line mode with echo, bash's
			// readline in raw mode echoing itself; neither hides.
			waitState(t, tm, false)
			fmt.Fprintf(tm, "stty -echo; echo hidden-$((2+2)); read -r secret; stty echo; echo shown-$((3+3))\n")
			waitFor(t, &s, "hidden-4\r\n")
			waitState(t, tm, true)
			fmt.Fprintf(tm, "hunter2\n")
			waitFor(t, &s, "shown-6\r\n")
			waitState(t, tm, false)
		})
	}
}

func waitState(t *testing.T, tm *terminal.Terminal, hidden bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for tm.InputHidden() != hidden {
		if time.Now().After(deadline) {
			t.Fatalf("InputHidden() stays %v", !hidden)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowClientDetached: a client that does not take its output is
// detached rather than buffered for; the terminal runs on and a reattach
// gets the newest output.
func TestSlowClientDetached(t *testing.T) {
	m := newManager(t, terminal.Config{Scrollback: 8192})
	tm := open(t, m, t.TempDir())
	_, c := tm.Attach()
	// Nobody reads c.Out (a stalled browser) while the shell floods it.
	fmt.Fprintf(tm, "yes flood-line | head -n 200000; echo flood-$((6*6))\n")
	deadline := time.Now().Add(30 * time.Second)
	for c.Taken() == "" {
		if time.Now().After(deadline) {
			t.Fatal("a client that never reads was never detached")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.Taken(); got != terminal.DetachSlow {
		t.Fatalf("detached because %q, want %q", got, terminal.DetachSlow)
	}
	select {
	case <-tm.Done():
		t.Fatal("the terminal ended with its slow client")
	default:
	}
	_, c2 := tm.Attach()
	var s screen
	watch(c2, &s)
	fmt.Fprintf(tm, "echo after-$((5+5))\n")
	waitFor(t, &s, "after-10")
}
