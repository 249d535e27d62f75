package browser

// Browser tests of steering a running agent, denying with a note, and
// goals (issue 15): each shows where it happened, live and after a reload.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// shootGoals screenshots the page and fails if it scrolls sideways.
func shootGoals(t *testing.T, b *browser, dir, name string) {
	t.Helper()
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, name))
	if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
		t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", name, w[0], w[1])
	}
}

// /goal set starts the goal; the scripted model reports met in its third
// run. The goal bar says met with 3 runs, each goal run's prompt is marked,
// and a reload shows the same.
func TestUIGoal(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("Continuation 3 of the goal",
			e2etest.Turn(e2etest.Call("update_goal", `{"status":"met","note":"all three parts written"}`)),
			e2etest.Turn(e2etest.Text("The goal is met."))),
		e2etest.Scenario("Continuation 2 of the goal",
			e2etest.Turn(e2etest.Call("update_goal", `{"status":"in_progress","note":"part two written"}`)),
			e2etest.Turn(e2etest.Text("Part two written."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Part one written."))),
	))
	b := openBrowser(t, s)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.typeInto(composerSel, "/goal set write the three parts")
	b.press("Escape") // close the slash menu: Enter runs the line as typed
	b.press("Enter")
	b.waitJS("the goal met", q("[data-testid=goal-bar][data-status=met]"))
	if u := b.text("[data-testid=goal-usage]"); !strings.Contains(u, "3 / 10 runs") {
		t.Errorf("goal usage = %q, want 3 / 10 runs", u)
	}
	b.waitJS("three goal runs marked", qa("[data-testid=continuation-note]")+".length === 3")
	if got := b.text("[data-testid=goal-text]"); got != "write the three parts" {
		t.Errorf("goal text = %q", got)
	}
	live := b.text("[data-testid=transcript]")
	shootGoals(t, b, dir, "goal-met-desktop-light")

	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the goal bar after reload", q("[data-testid=goal-bar][data-status=met]"))
	if got := b.text("[data-testid=transcript]"); got != live {
		t.Errorf("transcript after reload = %q, live it was %q", got, live)
	}
	b.setColorScheme("dark")
	shootGoals(t, b, dir, "goal-met-desktop-dark")
	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.waitJS("the goal bar", q("[data-testid=goal-bar][data-status=met]"))
		shootGoals(t, p, dir, "goal-met-phone-"+scheme)
	}
	// Clear takes the bar away.
	b.click("[data-testid=goal-clear]")
	b.waitGone("[data-testid=goal-bar]")
}

// Steer while a command runs: the Steer button delivers it, and it shows
// between the command and the answer, live and after a reload.
func TestUISteer(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	// The demo model answers the last user message: the steer's scenario
	// answers it, which shows the steer reached the model.
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("use tabs", e2etest.Turn(e2etest.Text("Understood, using tabs."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Call("run_command", `{"command":"while [ ! -f go.flag ]; do sleep 0.05; done; echo waited"}`)))),
		e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("format the files")
	// Steer once the command runs: a steer sent before the model's first
	// step reaches it with the prompt, and no command runs at all.
	b.waitVisible("[data-testid=item][data-kind=tool_call]")
	b.waitVisible("[data-testid=steer]")
	b.typeInto(composerSel, "use tabs, not spaces")
	b.click("[data-testid=steer]")
	b.waitJS("the composer to clear after steering", q(composerSel)+".value === ''")
	// While the command still runs, a phone's composer offers Stop and
	// Steer without scrolling sideways.
	phone := openBrowser(t, s, withWindow(375, 812))
	phone.navigate("/s/" + sid)
	phone.waitSessionLoaded()
	phone.waitVisible("[data-testid=steer]")
	phone.typeInto(composerSel, "and keep lines short")
	shootGoals(t, phone, dir, "steer-busy-phone-light")
	if err := os.WriteFile(filepath.Join(ws, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.waitJS("the steer in the transcript", q("[data-testid=steer-note]"))
	b.waitIdle()
	order := func(p *browser) string {
		return eval[string](p, qa("[data-testid=item]")+".map(e => e.querySelector('[data-testid=steer-note]') ? 'steer' : e.dataset.kind).join(' ')")
	}
	live := order(b)
	if live != "user tool_call steer assistant" {
		t.Fatalf("transcript order %q: want the steer between the command and the answer", live)
	}
	shootGoals(t, b, dir, "steer-desktop-light")
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the steer after reload", q("[data-testid=steer-note]"))
	if got := order(b); got != live {
		t.Errorf("after reload %q, live %q", got, live)
	}
	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.waitJS("the steer", q("[data-testid=steer-note]"))
		shootGoals(t, p, dir, "steer-phone-"+scheme)
	}
	b.setColorScheme("dark")
	shootGoals(t, b, dir, "steer-desktop-dark")
}

// Deny with a note from the approval card: the tool card says who denied
// it and what they said.
func TestUIDenyWithNote(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"rm -rf build"}`)),
		e2etest.Turn(e2etest.Text("OK, I will use make clean."))))
	b := openBrowser(t, s)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("clean the build")
	b.waitVisible("[data-testid=deny-note-open]")
	b.click("[data-testid=deny-note-open]")
	b.waitVisible("[data-testid=deny-note-input]")
	b.typeInto("[data-testid=deny-note-input]", "use make clean instead")
	shootGoals(t, b, dir, "deny-note-desktop-light")
	b.click("[data-testid=deny-note-send]")
	b.waitJS("the note on the tool card", qa("[data-testid=tool-approval]")+".some(e => e.textContent.includes('use make clean instead'))")
	b.waitIdle()
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the note after reload", qa("[data-testid=tool-approval]")+".some(e => e.textContent.includes('use make clean instead'))")
	b.setColorScheme("dark")
	shootGoals(t, b, dir, "deny-note-desktop-dark")
}
