package browser

// The Terminal tab: a shell in the session's workspace through the real
// server (guard, sign-in, telemetry wrapper, server timeouts), typed into
// from the browser; a reload reattaches to the same shell and shows its
// screen again; a shell that exits offers a new terminal.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
)

const termRows = ".xterm-rows"

// termText is what the terminal shows (xterm's DOM renderer).
func (b *browser) termText() string {
	return eval[string](b, "("+q(termRows)+"?.textContent ?? '').replace(/\\u00a0/g, ' ')")
}

func (b *browser) waitTermShows(what string) {
	b.t.Helper()
	b.waitJS("the terminal to show "+what, "("+q(termRows)+"?.textContent ?? '').replace(/\\u00a0/g, ' ').includes("+js(what)+")")
}

// typeTerm types a line into the terminal as a person would (text, then
// Enter).
func (b *browser) typeTerm(line string) {
	b.t.Helper()
	b.typeInto(".xterm-helper-textarea", line)
	b.press("Enter")
}

func (b *browser) openTerminalTab() {
	b.t.Helper()
	// The pane remembers its tab: it may open on the terminal already.
	if !b.visible("[data-testid=pane-tab-terminal]") {
		b.click("[data-testid=activity-toggle]")
	}
	b.click("[data-testid=pane-tab-terminal]")
	b.waitJS("the terminal to open", q("[data-testid=terminal-status][data-state=open]"))
	b.waitVisible(termRows)
}

func (b *browser) terminalID(sid string) string {
	return eval[string](b, "sessionStorage.getItem("+js("caduceus.terminal."+sid)+") ?? ''")
}

func TestUITerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "marker-file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A short read timeout: the terminal must outlive it (the handler
	// clears the hijacked connection's deadlines).
	s := e2etest.StartServer(t, e2etest.Scenarios(), e2etest.WithWorkspace(ws),
		func(c *config.Config) { c.ReadTimeout, c.WriteTimeout = 2*time.Second, 2*time.Second })
	sid := s.NewSession(t)
	b := openBrowser(t, s, withWindow(1280, 800))
	b.navigate("/s/" + sid)
	b.openTerminalTab()
	b.typeTerm("echo hello-$((6*7)); ls")
	b.waitTermShows("hello-42")
	b.waitTermShows("marker-file.txt")
	id := b.terminalID(sid)
	if !strings.HasPrefix(id, "term_") {
		t.Fatalf("no terminal id kept for the session: %q", id)
	}

	// Past the server's read and write timeouts, the shell still answers.
	time.Sleep(2500 * time.Millisecond)
	b.typeTerm("echo still-$((10+1))")
	b.waitTermShows("still-11")

	// A reload: the same terminal, its screen repainted from the server.
	b.navigate("/s/" + sid)
	b.waitJS("the terminal to reattach", q("[data-testid=terminal-status][data-state=open]"))
	b.waitTermShows("hello-42")
	if got := b.terminalID(sid); got != id {
		t.Fatalf("after the reload the terminal is %q, want %q", got, id)
	}
	b.typeTerm("echo again-$((7*3))")
	b.waitTermShows("again-21")

	dir := screenshotDir(t)
	phone := openBrowser(t, s, withWindow(375, 812))
	for _, v := range []struct {
		name string
		b    *browser
	}{{"desktop", b}, {"phone", phone}} {
		for _, scheme := range []string{"light", "dark"} {
			v.b.setColorScheme(scheme)
			v.b.navigate("/s/" + sid)
			v.b.openTerminalTab()
			// The phone is another browser: a terminal of its own.
			v.b.typeTerm("echo " + v.name + "-" + scheme + "; ls")
			v.b.waitTermShows(v.name + "-" + scheme)
			v.b.frames(3)
			t.Logf("screenshot: %s", v.b.screenshot(dir, "terminal-"+v.name+"-"+scheme))
		}
	}
	b.navigate("/s/" + sid)
	b.waitJS("the terminal to reattach", q("[data-testid=terminal-status][data-state=open]"))
	b.waitTermShows("again-21")

	// The shell exits: the tab says so and offers a new terminal.
	b.typeTerm("exit 3")
	b.waitJS("the terminal closed state", q("[data-testid=terminal-status][data-state=closed]"))
	if got := b.text("[data-testid=terminal-status]"); !strings.Contains(got, "status 3") {
		t.Errorf("closed state says %q", got)
	}
	b.click("[data-testid=terminal-new]")
	b.waitJS("a new terminal", q("[data-testid=terminal-status][data-state=open]"))
	if got := b.terminalID(sid); got == id || !strings.HasPrefix(got, "term_") {
		t.Fatalf("the new terminal is %q (the old one was %q)", got, id)
	}
	b.typeTerm("echo fresh-$((2+2))")
	b.waitTermShows("fresh-4")
	if v := b.cspViolations(); len(v) > 0 {
		t.Errorf("CSP violations: %v", v)
	}
	if !strings.Contains(s.Logs.String(), "terminal input") || !strings.Contains(s.Logs.String(), "echo hello-$((6*7)); ls") {
		t.Errorf("the typed line is not in the server log:\n%s", s.Logs.String())
	}
}

// TestUITerminalRoles: a signed-in operator gets a shell; a viewer gets a
// note and no connection is made for them.
func TestUITerminalRoles(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios())
	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	sid := op.newSessionUI()
	op.openTerminalTab()
	op.typeTerm("echo otto-$((40+2))")
	op.waitTermShows("otto-42")

	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	if !vw.visible("[data-testid=pane-tab-terminal]") {
		vw.click("[data-testid=activity-toggle]")
	}
	vw.click("[data-testid=pane-tab-terminal]")
	vw.waitVisible("[data-testid=terminal-viewer]")
	if n := vw.count(termRows) + vw.count("[data-testid=terminal-screen]"); n != 0 {
		t.Errorf("a viewer sees a terminal (%d elements)", n)
	}
	if strings.Count(s.Logs.String(), `msg="terminal opened"`) != 1 {
		t.Errorf("terminals opened: want only the operator's:\n%s", s.Logs.String())
	}
}
