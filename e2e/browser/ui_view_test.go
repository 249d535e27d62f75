package browser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// Issue 15, what a person sees follows the version on screen: the
// Activity panel lists only the runs of the visible version path (live,
// after a switch, after a reload), and a branch taken after an edit shows
// the edited conversation only. Screenshots: desktop and 375 px, light
// and dark.
func TestUIViewActivityFollowsVersions(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("red", e2etest.Turn(e2etest.Text("Red it is."))),
		e2etest.Scenario("blue", e2etest.Turn(e2etest.Text("Blue it is."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted."))),
	))
	dir := screenshotDir(t)
	b := openBrowser(t, s)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("pick red")
	b.waitJSFor("the first answer", q(itemSel("assistant"))+"?.textContent.includes('Red it is.')", 30*time.Second)
	b.waitIdle()

	b.hover(itemSel("user"))
	b.click(itemSel("user") + " [data-testid=edit-message]")
	b.waitVisible("[data-testid=message-edit] textarea")
	b.clearInput("[data-testid=message-edit] textarea")
	b.typeInto("[data-testid=message-edit] textarea", "pick blue")
	b.click("[data-testid=edit-save]")
	b.waitJSFor("2 / 2 with the blue answer", q("[data-testid=version-label]")+"?.textContent === '2 / 2' && "+
		q(itemSel("assistant"))+"?.textContent.includes('Blue it is.')", 30*time.Second)
	b.waitIdle()

	b.openActivity()
	b.waitJS("the activity of version 2 only", activityRunsAre("pick blue"))
	b.click("[data-testid=version-prev]")
	b.waitJS("the activity of version 1 only, live", q("[data-testid=version-label]")+"?.textContent === '1 / 2' && "+activityRunsAre("pick red"))
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.openActivity()
	b.waitJS("the activity of version 1 only, after a reload", activityRunsAre("pick red"))
	shootView(t, b, dir, "view-activity-v1-desktop-light")

	b.click("[data-testid=version-next]")
	b.waitJS("version 2 again", q("[data-testid=version-label]")+"?.textContent === '2 / 2' && "+activityRunsAre("pick blue"))
	b.sendMessage("and then")
	b.waitJSFor("the next answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Noted.'))", 30*time.Second)
	b.waitIdle()
	b.waitJS("the activity of the path", activityRunsAre("pick blue", "and then"))
	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.openActivity()
		p.waitJS("the activity of the path on a phone", activityRunsAre("pick blue", "and then"))
		shootView(t, p, dir, "view-activity-phone-"+scheme)
	}

	// A branch at the last answer holds the edited conversation only.
	last := "[data-testid=item][data-kind=assistant]:last-of-type"
	b.hover(last)
	b.click(last + " [data-testid=branch-message]")
	b.waitJS("the branch opened", "location.pathname !== '/s/"+sid+"'")
	b.waitSessionLoaded()
	b.waitJS("the branch's transcript: the visible path", qa(itemSel("user"))+".map(e => e.querySelector('.bubble')?.textContent).join('|') === 'pick blue|and then' && "+
		"!document.body.textContent.includes('Red it is.')")
	b.setColorScheme("dark")
	shootView(t, b, dir, "view-branch-desktop-dark")
}

// activityRunsAre is a JS expression true when the Activity panel lists
// exactly runs labelled labels, in order; it opens "Earlier runs" first.
func activityRunsAre(labels ...string) string {
	want, _ := json.Marshal(labels)
	return `(() => {
  const g = document.querySelector('[data-testid=activity] .act-group-row[aria-expanded=false]');
  if (g) { g.click(); return false; }
  const got = Array.from(document.querySelectorAll('[data-testid=activity] [data-testid=activity-node][data-type=run] > .act-row .act-label')).map(e => e.textContent.trim());
  return JSON.stringify(got) === ` + js(string(want)) + `;
})()`
}

// A steer shows at once as pending, last; once delivered it stands where
// the run read it; a steer whose run ends first shows as the next
// message. A reload at each stage shows the same.
func TestUIViewSteerPending(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("use tabs", e2etest.Turn(e2etest.Text("Understood, using tabs."))),
		e2etest.Scenario("keep it short", e2etest.Turn(e2etest.Text("Short it is."))),
		e2etest.Scenario("story", e2etest.Turn(e2etest.Text("Once upon a time "), e2etest.SlowText(60, 50))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Call("run_command", `{"command":"while [ ! -f go.flag ]; do sleep 0.05; done; echo waited"}`)))),
		e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	dir := screenshotDir(t)
	b := openBrowser(t, s)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("format the files")
	// Steer once the command runs: a steer sent before the model's first
	// step reaches it with the prompt, and no command runs at all.
	b.waitVisible("[data-testid=item][data-kind=tool_call]")
	b.waitVisible("[data-testid=steer]")
	b.typeInto(composerSel, "use tabs, not spaces")
	b.click("[data-testid=steer]")
	order := func(p *browser) string {
		return eval[string](p, qa("[data-testid=item]")+".map(e => e.querySelector('[data-pending=true]') || e.matches('[data-pending=true]') ? 'pending' : "+
			"e.querySelector('[data-testid=steer-note]') ? 'steer' : e.dataset.kind).join(' ')")
	}
	pendingJS := q("[data-pending=true] [data-testid=steer-note]") + "?.textContent.includes('will reach the agent after the current step')"
	b.waitJS("the steer pending at once", pendingJS)
	if got := order(b); got != "user tool_call pending" {
		t.Fatalf("while pending the transcript is %q, want the steer last", got)
	}
	shootView(t, b, dir, "view-steer-pending-desktop-light")
	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.waitJS("the steer pending after a reload", pendingJS)
		if got := order(p); got != "user tool_call pending" {
			t.Errorf("pending after a reload: %q", got)
		}
		shootView(t, p, dir, "view-steer-pending-phone-"+scheme)
	}

	if err := os.WriteFile(filepath.Join(ws, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.waitJSFor("the steer delivered", "!"+q("[data-pending=true]")+" && "+qa(itemSel("assistant"))+".some(e => e.textContent.includes('using tabs'))", 30*time.Second)
	b.waitIdle()
	const delivered = "user tool_call steer assistant"
	if got := order(b); got != delivered {
		t.Fatalf("delivered: %q, want %q", got, delivered)
	}
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the delivered steer after a reload", q("[data-testid=steer-note]"))
	if got := order(b); got != delivered {
		t.Errorf("delivered, after a reload: %q", got)
	}

	// The run ends (no tool call, no step boundary) before the steer
	// reaches it: the steer becomes the next message and is answered.
	b.sendMessage("tell a story")
	b.waitJSFor("the story under way", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Once upon a time')", 30*time.Second)
	b.typeInto(composerSel, "keep it short")
	b.click("[data-testid=steer]")
	b.waitJS("the second steer pending while the story streams", pendingJS)
	b.waitJSFor("the steer answered as the next message", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Short it is.')", 60*time.Second)
	b.waitIdle()
	const queued = delivered + " user assistant user assistant"
	if got := order(b); got != queued {
		t.Fatalf("after the run ended first: %q, want %q", got, queued)
	}
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the queued steer after a reload", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Short it is.')")
	if got := order(b); got != queued {
		t.Errorf("after a reload: %q, want %q", got, queued)
	}
	b.setColorScheme("dark")
	shootView(t, b, dir, "view-steer-delivered-desktop-dark")
}

func shootView(t *testing.T, b *browser, dir, name string) {
	t.Helper()
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, name))
	if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
		t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", name, w[0], w[1])
	}
}
