package browser

// Subagents (issue 18, h18-delegate): the delegate call's card lists its
// child runs with their state and links to each child session, live and
// after a reload; the activity tree nests them under the call.

import (
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUIDelegateCard(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(e2etest.Call("delegate",
			`{"tasks":[{"prompt":"task alpha: read the parser","title":"Read the parser"},{"prompt":"task beta: check the tests","title":"Check the tests"}]}`)),
			e2etest.Turn(e2etest.Text("Both subagents are done."))),
		e2etest.Scenario("task alpha", e2etest.Turn(e2etest.Delay(300), e2etest.Text("The parser drops trailing commas."))),
		e2etest.Scenario("task beta", e2etest.Turn(e2etest.Delay(300), e2etest.Text("Two tests fail on Windows paths."))),
	))
	b := openBrowser(t, s)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("please delegate the review")
	card := "[data-testid=tool-card][data-tool=delegate]"
	done := card + " [data-testid=subagent][data-status=completed]"
	b.waitJSFor("two finished subagents on the card", "document.querySelectorAll("+js(done)+").length === 2", 30e9)
	b.waitIdle()
	links := func(p *browser) []string {
		return eval[[]string](p, qa(card+" [data-testid=subagent-link]")+".map(a => a.textContent + ' ' + a.getAttribute('href'))")
	}
	live := links(b)
	if len(live) != 2 || !strings.HasPrefix(live[0], "Read the parser /s/ses_") || !strings.HasPrefix(live[1], "Check the tests /s/ses_") {
		t.Fatalf("subagent links %q", live)
	}
	if sum := b.text(card + " [data-testid=subagent]"); !strings.Contains(sum, "The parser drops trailing commas.") {
		t.Errorf("first subagent line %q lacks its answer", sum)
	}
	// The session list tells the two children from the parent.
	b.waitJS("two subagent sessions in the list", "document.querySelectorAll('[data-testid=session-subagent]').length === 2")
	// The activity tree nests both child runs under the call, with links.
	b.waitJS("two subagent links in the activity tree", "document.querySelectorAll('[data-testid=activity] [data-testid=activity-subagent-link]').length === 2")
	shootGoals(t, b, dir, "delegate-desktop-light")

	// After a reload the card has the same links, from the call's result.
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the subagents after reload", "document.querySelectorAll("+js(done)+").length === 2")
	if got := links(b); strings.Join(got, "|") != strings.Join(live, "|") {
		t.Errorf("links after reload %q, live %q", got, live)
	}
	b.setColorScheme("dark")
	shootGoals(t, b, dir, "delegate-desktop-dark")
	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.waitJS("the subagents", "document.querySelectorAll("+js(done)+").length === 2")
		shootGoals(t, p, dir, "delegate-phone-"+scheme)
	}

	// A link opens the child session, with the child's answer.
	b.click(card + " [data-testid=subagent-link]")
	b.waitJS("the child session", "location.pathname !== "+js("/s/"+sid)+" && location.pathname.startsWith('/s/ses_')")
	b.waitSessionLoaded()
	b.waitJS("the child's answer", q("[data-testid=transcript]")+"?.textContent.includes('The parser drops trailing commas.')")
}

// A child's approval is in the needs-you panel, naming the parent session
// with a link to it.
func TestUIDelegateNeedsYouNamesParent(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("please delegate", e2etest.Turn(e2etest.Call("delegate", `{"tasks":[{"prompt":"list the files","title":"List the files"}]}`)),
			e2etest.Turn(e2etest.Text("Listed."))),
		e2etest.Scenario("list the files", e2etest.Turn(e2etest.Call("run_command", `{"command":"ls"}`)), e2etest.Turn(e2etest.Text("Two files."))),
	))
	b := openBrowser(t, s)
	b.navigate("/")
	b.newSessionUI()
	b.sendMessage("please delegate the listing")
	b.waitJSFor("the child's approval waits", q("[data-testid=needs-you]")+" && "+q("[data-testid=tool-card][data-tool=delegate] [data-testid=subagent]"), 30e9)
	b.waitJS("a pending request", "document.querySelectorAll('[data-testid=session-needs-you]').length >= 1")
	b.click("[data-testid=needs-you]")
	b.waitVisible("[data-testid=needs-you-parent]")
	if got := b.text("[data-testid=needs-you-parent]"); !strings.Contains(got, "subagent of please delegate the listing") {
		t.Errorf("needs-you parent line %q", got)
	}
	shootGoals(t, b, screenshotDir(t), "delegate-needs-you-desktop-light")
}
