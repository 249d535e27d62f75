package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// TestUIVersions (issue 15): a person retries an answer and edits their
// message from the transcript's hover actions; the message shows "3 / 3"
// and its arrows switch between versions, each showing its own answer; a
// reload shows the version last chosen; /undo takes the turn out and
// /undo restore brings it back. Screenshots: desktop and 375 px, light and
// dark.
func TestUIVersions(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("red", e2etest.Turn(e2etest.Text("Red it is."))),
		e2etest.Scenario("blue", e2etest.Turn(e2etest.Text("Blue it is."))),
		e2etest.Scenario("story", e2etest.Turn(e2etest.Text("Once upon a time "), e2etest.SlowText(2000, 50)), e2etest.Turn(e2etest.Text("The end."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted."))),
	))
	dir := screenshotDir(t)
	b := openBrowser(t, s)
	b.navigate("/")
	sid := b.newSessionUI()

	b.sendMessage("pick red")
	b.waitJSFor("the first answer", q(itemSel("assistant"))+"?.textContent.includes('Red it is.')", 30*time.Second)
	b.waitIdle()

	// Retry from the message's hover actions: a second version.
	b.hover(itemSel("user"))
	b.click(itemSel("user") + " [data-testid=retry-message]")
	b.waitJSFor("2 / 2", q("[data-testid=version-label]")+"?.textContent === '2 / 2'", 30*time.Second)
	// The retry's answer streams in after the switch: wait for it, then
	// it alone shows.
	b.waitJSFor("the retry's answer, alone", qa(itemSel("assistant"))+".length === 1", 30*time.Second)
	b.waitIdle()
	if n := b.count(itemSel("assistant")); n != 1 {
		t.Errorf("after a retry %d answers show, want the newest only", n)
	}

	// Edit in place: Save & regenerate makes the third version.
	b.hover(itemSel("user"))
	b.click(itemSel("user") + " [data-testid=edit-message]")
	b.waitVisible("[data-testid=message-edit] textarea")
	b.clearInput("[data-testid=message-edit] textarea")
	b.typeInto("[data-testid=message-edit] textarea", "pick blue")
	shootVersions(t, b, dir, "versions-edit-desktop")
	b.click("[data-testid=edit-save]")
	b.waitJSFor("3 / 3 with the blue answer", q("[data-testid=version-label]")+"?.textContent === '3 / 3' && "+
		q(itemSel("assistant"))+"?.textContent.includes('Blue it is.')", 30*time.Second)
	b.waitIdle()
	if got := b.text(itemSel("user") + " .bubble"); got != "pick blue" {
		t.Errorf("the edited message shows %q", got)
	}
	shootVersions(t, b, dir, "versions-3-of-3-desktop")

	// Back to the first version, then reload: the same one shows.
	b.click("[data-testid=version-prev]")
	b.waitJS("2 / 3", q("[data-testid=version-label]")+"?.textContent === '2 / 3'")
	b.click("[data-testid=version-prev]")
	b.waitJS("1 / 3 with the red answer", q("[data-testid=version-label]")+"?.textContent === '1 / 3' && "+
		q(itemSel("assistant"))+"?.textContent.includes('Red it is.')")
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("1 / 3 after a reload", q("[data-testid=version-label]")+"?.textContent === '1 / 3'")
	if got := b.text(itemSel("user") + " .bubble"); got != "pick red" {
		t.Errorf("after a reload the message shows %q", got)
	}
	if n := b.count(itemSel("assistant")); n != 1 || !strings.Contains(b.text(itemSel("assistant")), "Red it is.") {
		t.Errorf("after a reload: %d answers, %q", n, b.text(itemSel("assistant")))
	}

	// Undo the turn, then restore it.
	b.sendMessage("/undo 1")
	b.waitGone(itemSel("user"))
	b.waitJS("the undone note", q("[data-testid=undone-note]")+"?.textContent.includes('1 turn undone')")
	shootVersions(t, b, dir, "versions-undone-desktop")
	b.click("[data-testid=undo-restore]")
	b.waitJS("the turn restored", q(itemSel("user"))+"?.textContent.includes('pick red') && "+q("[data-testid=version-label]")+"?.textContent === '1 / 3'")
	b.waitGone("[data-testid=undone-note]")

	// Stop a long answer part-way; Continue goes on from it.
	b.sendMessage("tell a story")
	b.waitJSFor("the story under way", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Once upon a time')", 30*time.Second)
	b.click("[data-testid=stop]")
	b.waitVisible("[data-testid=continue-answer]")
	shootVersions(t, b, dir, "versions-continue-desktop")
	b.click("[data-testid=continue-answer]")
	b.waitJSFor("the continued answer", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('The end.')", 30*time.Second)
	b.waitIdle()
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the continued answer after a reload", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('The end.')")
	b.sendMessage("/undo 1")
	b.waitJS("the story undone", "!"+qa(itemSel("user"))+".some(e => e.textContent.includes('tell a story'))")
	// The undo stays restorable after a reload, and /undo restore does it.
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitVisible("[data-testid=undone-note]")
	b.sendMessage("/undo restore")
	b.waitJS("the story back", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('The end.')")
	b.waitGone("[data-testid=undone-note]")

	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.waitVisible("[data-testid=version-label]")
		shootVersions(t, p, dir, "versions-phone-"+scheme)
	}
	b.setColorScheme("dark")
	b.click("[data-testid=version-next]")
	b.waitJS("2 / 3", q("[data-testid=version-label]")+"?.textContent === '2 / 3'")
	shootVersions(t, b, dir, "versions-desktop-dark")
}

func shootVersions(t *testing.T, b *browser, dir, name string) {
	t.Helper()
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, name))
	if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
		t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", name, w[0], w[1])
	}
}

// TestUIVersionsViewer: a viewer sees the versions of a message and follows
// an operator's switch live, with no Retry, Edit or switch of their own.
func TestUIVersionsViewer(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted.")))))
	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	sid := op.newSessionUI()
	op.sendMessage("remember this")
	op.waitJSFor("the answer", q(itemSel("assistant"))+"?.textContent.includes('Noted.')", 30*time.Second)
	op.waitIdle()
	op.hover(itemSel("user"))
	op.click(itemSel("user") + " [data-testid=retry-message]")
	op.waitJSFor("2 / 2", q("[data-testid=version-label]")+"?.textContent === '2 / 2'", 30*time.Second)
	op.waitIdle()

	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	vw.waitJS("2 / 2 for the viewer", q("[data-testid=version-label]")+"?.textContent === '2 / 2'")
	for _, sel := range []string{"[data-testid=retry-message]", "[data-testid=edit-message]"} {
		if n := vw.count(sel); n != 0 {
			t.Errorf("the viewer has %d %s", n, sel)
		}
	}
	if !eval[bool](vw, q("[data-testid=version-prev]")+".disabled") {
		t.Error("the viewer can switch versions")
	}
	op.click("[data-testid=version-prev]")
	vw.waitJS("the viewer follows to 1 / 2", q("[data-testid=version-label]")+"?.textContent === '1 / 2'")
}
