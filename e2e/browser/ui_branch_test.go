package browser

// Browser test of branching (issue 15): "Branch from here" on a message
// opens a new session that shows the conversation up to that message and
// says where it came from, with a link back; /branch branches from the
// last message; the parent is unchanged.

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func getExport(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

func TestUIBranch(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("First", e2etest.Turn(e2etest.Text("First answer."))),
		e2etest.Scenario("Second", e2etest.Turn(e2etest.Text("Second answer."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Answer in the branch."))),
	))
	b := openBrowser(t, srv)
	dir := screenshotDir(t)
	b.navigate("/")
	parent := b.newSessionUI()
	b.sendMessage("First question")
	b.waitJS("the first answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('First answer.'))")
	b.waitIdle()
	b.sendMessage("Second question")
	b.waitJS("the second answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Second answer.'))")
	b.waitIdle()
	// Each answer shows its tokens on hover, live and after a reload.
	usageSel := itemSel("assistant") + " [data-testid=message-usage]"
	b.waitJS("tokens on both answers", qa(usageSel)+".length === 2 && "+qa(usageSel)+".every(e => / tok/.test(e.textContent))")
	b.hover(itemSel("assistant"))
	t.Logf("screenshot: %s", b.screenshot(dir, "branch-message-usage"))
	live := eval[[]string](b, qa(usageSel)+".map(e => e.textContent + '|' + e.title)")
	b.navigate("/s/" + parent)
	b.waitSessionLoaded()
	b.waitJS("tokens after the reload", qa(usageSel)+".length === 2")
	if got := eval[[]string](b, qa(usageSel)+".map(e => e.textContent + '|' + e.title)"); strings.Join(got, ";") != strings.Join(live, ";") {
		t.Fatalf("message usage after reload %q, live %q", got, live)
	}
	before := b.text("[data-testid=transcript]")

	// Branch from the first answer (the first assistant item): its hover
	// action.
	b.hover(itemSel("assistant"))
	b.click(itemSel("assistant") + " [data-testid=branch-message]")
	b.waitJS("a new session opened", "location.pathname !== '/s/"+parent+"'")
	branch := b.sessionIDFromURL()
	b.waitSessionLoaded()
	b.waitJS("the lineage line", q("[data-testid=lineage]")+" !== null && "+q("[data-testid=lineage]")+".textContent.includes('First answer.')")
	if got := b.count(itemSel("user")); got != 1 {
		t.Fatalf("the branch shows %d user messages, want 1\n%s", got, b.describe())
	}
	if txt := b.text("[data-testid=transcript]"); strings.Contains(txt, "Second") {
		t.Fatalf("the branch shows what came after the branch point: %q", txt)
	}
	for _, scheme := range []string{"light", "dark"} {
		b.setColorScheme(scheme)
		t.Logf("screenshot: %s", b.screenshot(dir, "branch-lineage-"+scheme))
	}
	b.setColorScheme("light")

	// The branch goes on by itself; the parent is unchanged.
	b.sendMessage("Go on in the branch")
	b.waitJS("the branch's answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Answer in the branch.'))")
	b.waitIdle()
	b.click("[data-testid=lineage-parent]")
	b.waitJS("back in the parent", "location.pathname === '/s/"+parent+"'")
	b.waitSessionLoaded()
	b.waitJS("the parent's second answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Second answer.'))")
	if got := b.text("[data-testid=transcript]"); got != before {
		t.Fatalf("the parent changed:\n%q\nwas\n%q", got, before)
	}

	// /branch: from the last message.
	b.sendMessage("/branch")
	b.waitJS("a second branch opened", "location.pathname !== '/s/"+parent+"' && location.pathname !== '/s/"+branch+"'")
	b.waitSessionLoaded()
	b.waitJS("the whole parent conversation in it", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Second answer.'))")

	// Import: the JSON export of the branch, picked in the sidebar, opens
	// a new session with the same conversation.
	raw := getExport(t, srv.URL+"/api/sessions/"+branch+"/export?format=json")
	file := filepath.Join(t.TempDir(), "branch.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	b.must("pick the export", chromedp.SetUploadFiles("[data-testid=import-file]", []string{file}))
	b.waitJS("the imported session opened", "!['/s/"+parent+"', '/s/"+branch+"'].includes(location.pathname) && "+
		qa(itemSel("assistant"))+".some(e => e.textContent.includes('Answer in the branch.'))")
	b.waitSessionLoaded()
	if got := b.count(itemSel("user")); got != 2 {
		t.Fatalf("the imported session shows %d user messages, want 2\n%s", got, b.describe())
	}
	row := "[data-testid=session-item][aria-current=page]"
	b.hover(row)
	b.click(row + " [data-testid=session-organise]")
	b.waitVisible("[data-testid=session-export-md]")
	b.waitVisible("[data-testid=session-export-json]")
	t.Logf("screenshot: %s", b.screenshot(dir, "branch-export-menu"))
	b.press("Escape")

	phone := openBrowser(t, srv, withWindow(375, 812))
	phone.navigate("/s/" + branch)
	phone.waitSessionLoaded()
	phone.waitJS("the lineage line on a phone", q("[data-testid=lineage]")+" !== null")
	for _, scheme := range []string{"light", "dark"} {
		phone.setColorScheme(scheme)
		t.Logf("screenshot: %s", phone.screenshot(dir, "branch-lineage-375-"+scheme))
	}
}
