package browser

// The sessions sidebar (create, rename, search, delete) and the badges and
// "needs you" list that bring a person to a waiting session.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func sessionItemSel(id string) string {
	return "[data-testid=session-item][data-session-id=" + id + "]"
}

func TestUISidebar(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("run a command",
		e2etest.Turn(e2etest.Text("I need to run something."), e2etest.Call("run_command", `{"command":"echo needs-you"}`)),
		e2etest.Turn(e2etest.Text("Done."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted."))),
	), e2etest.WithApprovalMode("manual"))
	b := openBrowser(t, s)
	b.navigate("/")

	// Three sessions from the sidebar's button; each becomes the active one.
	// Each gets a message (and so a title), or the next New session would
	// reopen it (a blank session is reused, see
	// TestUIPolishNewSessionReuse).
	var ids []string
	for i := 0; i < 3; i++ {
		id := b.newSessionUI()
		ids = append(ids, id)
		b.waitVisible(sessionItemSel(id))
		b.waitJS("the new session to be current", q(sessionItemSel(id))+"?.getAttribute('aria-current') === 'page'")
		b.sendMessage(fmt.Sprintf("Session %d notes", i+1))
		b.waitIdle()
		b.waitJS("the title in the sidebar", q(sessionItemSel(id))+fmt.Sprintf("?.textContent.includes('Session %d notes')", i+1))
	}
	if n := b.count("[data-testid=session-item][aria-current=page]"); n != 1 {
		t.Errorf("%d sessions marked current, want 1", n)
	}
	if n := b.count("[data-testid=session-item]"); n != 3 {
		t.Fatalf("%d session items, want 3", n)
	}
	// Newest first.
	order := eval[[]string](b, qa("[data-testid=session-item]")+".map(e => e.dataset.sessionId)")
	if order[0] != ids[2] || order[2] != ids[0] {
		t.Errorf("sidebar order = %v, want newest first (%v reversed)", order, ids)
	}

	// Rename the first one inline: Enter saves.
	first := sessionItemSel(ids[0])
	b.hover(first)
	b.click(first + " [data-testid=session-rename]")
	b.waitVisible("[data-testid=session-rename-input]")
	b.clearInput("[data-testid=session-rename-input]")
	b.typeInto("[data-testid=session-rename-input]", "Alpha project")
	b.press("Enter")
	b.waitGone("[data-testid=session-rename-input]")
	b.waitJS("the new title in the sidebar", q(first)+"?.textContent.includes('Alpha project')")
	var got e2etest.SessionJSON
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+ids[0], nil, &got)
	if got.Title != "Alpha project" {
		t.Errorf("title on the server = %q, want Alpha project", got.Title)
	}
	// Esc cancels a rename. Clicked in the page, not at coordinates: a
	// run of another session ending meanwhile moves the rows.
	b.hover(first)
	eval[any](b, q(first+" [data-testid=session-rename]")+".click()")
	b.waitVisible("[data-testid=session-rename-input]")
	b.typeInto("[data-testid=session-rename-input]", " (not saved)")
	b.press("Escape")
	b.waitGone("[data-testid=session-rename-input]")
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+ids[0], nil, &got)
	if got.Title != "Alpha project" {
		t.Errorf("Esc saved the title: %q", got.Title)
	}

	// Search filters by title.
	b.typeInto("[data-testid=session-search]", "alpha")
	b.waitJS("one session matching 'alpha'", visibleJS(first)+" && "+qa("[data-testid=session-item]")+".filter(e => e.getClientRects().length > 0).length === 1")
	b.clearInput("[data-testid=session-search]")
	b.typeInto("[data-testid=session-search]", "no such title")
	b.waitJS("no session matching", qa("[data-testid=session-item]")+".filter(e => e.getClientRects().length > 0).length === 0")
	b.clearInput("[data-testid=session-search]")
	b.waitJS("all three sessions back", qa("[data-testid=session-item]")+".filter(e => e.getClientRects().length > 0).length === 3")

	// Delete hides the row at once with Undo: undo keeps it, letting the
	// time run out deletes it.
	second := sessionItemSel(ids[1])
	b.hover(second)
	b.click(second + " [data-testid=session-delete]")
	b.waitGone(second)
	b.click("[data-testid=undo-delete]")
	b.waitVisible(second)
	b.hover(second)
	b.click(second + " [data-testid=session-delete]")
	b.waitJS("the deleted session to leave the sidebar", "!"+q(second))
	waitAPI(t, "the delete when the undo time is up", func() bool {
		return e2etest.Do(t, "GET", s.URL+"/api/sessions/"+ids[1], nil, nil) == http.StatusNotFound
	})

	// A session waiting for approval: badge in the sidebar, counted in
	// "needs you", answerable from there while another session is open.
	b.click(first)
	b.waitJS("the first session to be current", q(first)+"?.getAttribute('aria-current') === 'page'")
	waiting := ids[2]
	r := s.Send(t, waiting, "please run a command")
	s.WaitStatus(t, r.ID, "awaiting_approval")
	b.waitVisible(sessionItemSel(waiting) + " [data-testid=session-badge][data-status=awaiting_approval]")
	b.waitJS("needs-you count 1", q("[data-testid=needs-you]")+"?.dataset.count === '1'")
	if b.count(first+" [data-testid=session-badge]") != 0 {
		t.Errorf("the idle session shows a badge")
	}
	b.click("[data-testid=needs-you]")
	b.waitVisible("[data-testid=needs-you-panel]")
	panel := "[data-testid=needs-you-panel]"
	if p := b.text(panel); !strings.Contains(p, "echo needs-you") {
		t.Errorf("needs-you panel does not show the command: %.300q", p)
	}
	b.waitJS("a link to the waiting session", qa(panel+" a, "+panel+" [href]")+".some(e => (e.getAttribute('href') || '').includes("+js(waiting)+"))")
	b.click(panel + " button[data-choice=once]")
	b.waitJS("needs-you count 0", q("[data-testid=needs-you]")+"?.dataset.count === '0'")
	s.WaitStatus(t, r.ID, "completed")
	b.waitJS("the badge to clear", "!"+q(sessionItemSel(waiting)+" [data-testid=session-badge]"))
	var req struct {
		Requests []e2etest.RequestJSON `json:"requests"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/requests?session_id="+waiting, nil, &req)
	if len(req.Requests) != 1 || req.Requests[0].Status != "resolved" {
		t.Errorf("requests = %+v, want one resolved", req.Requests)
	}
	// The active session did not change under the person.
	if p := eval[string](b, "location.pathname"); p != "/s/"+ids[0] {
		t.Logf("note: answering from the panel navigated to %s", p)
	}
}
