package browser

// Organising sessions, the gaps closed in wave 2 of issue 15: projects made,
// renamed and deleted in one tab (or through the API) show in another tab
// at once, and every delete of a session (the row's trash button, its menu,
// /delete) hides it with a few seconds to undo, by mouse or keyboard, and
// deletes it on the server only when that time is up or the page goes.

import (
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

type projectJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func projectIDByName(t *testing.T, s *e2etest.Server, name string) string {
	t.Helper()
	var out struct {
		Projects []projectJSON `json:"projects"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/projects", nil, &out)
	for _, p := range out.Projects {
		if p.Name == name {
			return p.ID
		}
	}
	return ""
}

// hasProjectJS is true when the sidebar's list picker offers a project
// named name.
func hasProjectJS(name string) string {
	return qa("[data-testid=session-filter] option") + ".some(o => o.textContent === " + js(name) + ")"
}

func TestUIOrganise2ProjectsLive(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))))
	var filed e2etest.SessionJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"title": "Filed later"}, &filed); c != http.StatusCreated {
		t.Fatalf("create: %d", c)
	}
	a := openBrowser(t, s)
	a.navigate("/")
	a.waitVisible(sessionItemSel(filed.ID))
	b := a.newTab()
	b.navigate("/")
	b.waitVisible(sessionItemSel(filed.ID))

	// A makes a project in its dialog; B's picker offers it.
	a.click("[data-testid=project-new]")
	a.typeInto("[data-testid=project-name]", "Alpha")
	a.click("[data-testid=project-save]")
	a.waitGone("[data-testid=project-dialog]")
	b.waitJS("A's new project in B", hasProjectJS("Alpha"))
	pid := projectIDByName(t, s, "Alpha")
	if pid == "" {
		t.Fatal("the project is not on the server")
	}

	// B shows the project; another client files the session in it.
	b.chooseFilter(pid)
	b.waitGone(sessionItemSel(filed.ID))
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+filed.ID, map[string]any{"project_id": pid}, nil); c != http.StatusOK {
		t.Fatalf("file: %d", c)
	}
	b.waitVisible(sessionItemSel(filed.ID))

	// A renames it; B's picker and its open list follow.
	a.click("[data-testid=project-edit]")
	a.clearInput("[data-testid=project-name]")
	a.typeInto("[data-testid=project-name]", "Beta")
	a.click("[data-testid=project-save]")
	a.waitGone("[data-testid=project-dialog]")
	b.waitJS("the rename in B", hasProjectJS("Beta")+" && !"+hasProjectJS("Alpha")+" && "+q("[data-testid=session-filter]")+".value === "+js(pid))
	b.waitVisible(sessionItemSel(filed.ID))

	// A project made through the API reaches both tabs.
	var gamma projectJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/projects", map[string]any{"name": "Gamma"}, &gamma); c != http.StatusCreated {
		t.Fatalf("create through the API: %d", c)
	}
	a.waitJS("the API's project in A", hasProjectJS("Gamma"))
	b.waitJS("the API's project in B", hasProjectJS("Gamma"))
	dir := screenshotDir(t)
	for _, scheme := range []string{"light", "dark"} {
		b.setColorScheme(scheme)
		b.frames(2)
		t.Logf("screenshot: %s", b.screenshot(dir, "organise2-project-live-desktop-"+scheme))
	}

	// A deletes the project B shows: B goes back to all sessions, where
	// the session is, in no project.
	a.click("[data-testid=project-edit]")
	a.click("[data-testid=project-delete]")
	a.waitGone("[data-testid=project-dialog]")
	b.waitJS("the delete in B", "!"+hasProjectJS("Beta")+" && "+q("[data-testid=session-filter]")+".value === ''")
	b.waitVisible(sessionItemSel(filed.ID))
	b.hover(sessionItemSel(filed.ID))
	b.click(sessionItemSel(filed.ID) + " [data-testid=session-organise]")
	b.waitVisible("[data-testid=session-organise-list]")
	if b.count("[data-testid=session-organise-list] [data-testid=session-unproject]") != 0 {
		t.Errorf("B still files the session in the deleted project")
	}
	b.press("Escape")

	// On a phone, the picker follows too.
	m := openBrowser(t, s, withWindow(375, 812))
	m.navigate("/")
	m.click("[data-testid=sidebar-toggle]")
	m.waitVisible("#sidebar.open")
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/projects/"+gamma.ID, map[string]any{"name": "Gamma prime"}, nil); c != http.StatusOK {
		t.Fatalf("rename through the API: %d", c)
	}
	m.waitJS("the API's rename on the phone", hasProjectJS("Gamma prime"))
	m.chooseFilter(gamma.ID)
	for _, scheme := range []string{"light", "dark"} {
		m.setColorScheme(scheme)
		m.frames(2)
		t.Logf("screenshot: %s", m.screenshot(dir, "organise2-project-live-375-"+scheme))
	}
	for _, x := range []*browser{a, b, m} {
		x.checkExceptions()
	}
}

func TestUIOrganise2DeleteUndo(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))))
	ids := map[string]string{}
	for _, title := range []string{"Kept", "Undone by keyboard", "Deleted after the wait", "Deleted by a reload", "Deleted by slash"} {
		var out e2etest.SessionJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"title": title}, &out); c != http.StatusCreated {
			t.Fatalf("create: %d", c)
		}
		ids[title] = out.ID
	}
	status := func(sid string) int { _, c := getOrganised(t, s, sid); return c }
	dir := screenshotDir(t)

	// By keyboard, on the session on screen: Enter on the trash button
	// hides it and shows its neighbour, focus lands on Undo, Enter there
	// brings it back (and on screen), and nothing is deleted.
	b := openBrowser(t, s)
	undone := ids["Undone by keyboard"]
	row := sessionItemSel(undone)
	b.navigate("/s/" + undone)
	b.waitSessionLoaded()
	b.waitVisible(row)
	eval[any](b, q(row+" [data-testid=session-delete]")+".focus()")
	b.pressTyping("Enter", "\r")
	b.waitGone(row)
	b.waitVisible("[data-testid=undo-toast]")
	b.waitJS("a neighbour on screen", "location.pathname !== "+js("/s/"+undone)+" && location.pathname.startsWith('/s/')")
	b.waitJS("focus on Undo", "document.activeElement?.dataset.testid === 'undo-delete'")
	for _, scheme := range []string{"light", "dark"} {
		b.setColorScheme(scheme)
		b.frames(2)
		t.Logf("screenshot: %s", b.screenshot(dir, "organise2-undo-desktop-"+scheme))
	}
	b.setColorScheme("light")
	if c := status(undone); c != http.StatusOK {
		t.Fatalf("deleted before the undo time was up: GET %d", c)
	}
	b.pressTyping("Enter", "\r")
	b.waitVisible(row)
	b.waitGone("[data-testid=undo-toast]")
	b.waitJS("the session back on screen", "location.pathname === "+js("/s/"+undone))
	b.waitJS("focus on the restored row", "document.activeElement === "+q(row+" .sb-link"))

	// By mouse: the row goes at once, the server deletes when the undo
	// time is up.
	waited := ids["Deleted after the wait"]
	b.hover(sessionItemSel(waited))
	b.click(sessionItemSel(waited) + " [data-testid=session-delete]")
	b.waitGone(sessionItemSel(waited))
	if c := status(waited); c != http.StatusOK {
		t.Fatalf("deleted before the undo time was up: GET %d", c)
	}
	waitAPI(t, "the delete after the undo time", func() bool { return status(waited) == http.StatusNotFound })
	b.waitGone("[data-testid=undo-toast]")

	// The undone one is still there after the time it would have taken.
	if c := status(undone); c != http.StatusOK {
		t.Fatalf("an undone delete deleted: GET %d", c)
	}

	// A reload within the undo time ends it: the delete goes out as the
	// page goes, and the reloaded list does not have the session.
	reloaded := ids["Deleted by a reload"]
	b.hover(sessionItemSel(reloaded))
	b.click(sessionItemSel(reloaded) + " [data-testid=session-delete]")
	b.waitGone(sessionItemSel(reloaded))
	b.navigate("/")
	waitAPI(t, "the delete sent as the page went", func() bool { return status(reloaded) == http.StatusNotFound })
	b.waitVisible(sessionItemSel(ids["Kept"]))
	if b.count(sessionItemSel(reloaded)) != 0 {
		t.Errorf("the reloaded list still has the deleted session")
	}

	// /delete in the composer, undone from the toast.
	slash := ids["Deleted by slash"]
	b.click(sessionItemSel(slash))
	b.waitSessionLoaded()
	b.typeInto("[data-testid=composer]", "/delete")
	b.press("Enter")
	b.waitGone(sessionItemSel(slash))
	b.click("[data-testid=undo-delete]")
	b.waitVisible(sessionItemSel(slash))

	// On a phone (touch): the row's "⋯" menu deletes with undo too.
	m := openBrowser(t, s, withWindow(375, 812))
	m.emulateTouch()
	m.navigate("/")
	m.click("[data-testid=sidebar-toggle]")
	m.waitJS("the drawer slid in", "getComputedStyle(document.getElementById('sidebar')).transform === 'none'")
	m.click(sessionItemSel(slash) + " [data-testid=session-menu]")
	m.click("[data-testid=session-menu-delete]")
	m.waitGone(sessionItemSel(slash))
	m.waitVisible("[data-testid=undo-toast]")
	for _, scheme := range []string{"light", "dark"} {
		m.setColorScheme(scheme)
		m.frames(2)
		t.Logf("screenshot: %s", m.screenshot(dir, "organise2-undo-375-"+scheme))
	}
	m.click("[data-testid=undo-delete]")
	m.waitVisible(sessionItemSel(slash))
	if c := status(slash); c != http.StatusOK {
		t.Fatalf("an undone delete deleted: GET %d", c)
	}
	if c := status(ids["Kept"]); c != http.StatusOK {
		t.Fatalf("a session never deleted is gone: GET %d", c)
	}
	b.checkExceptions()
	m.checkExceptions()
}

// The sidebar against issue 15: pinned first in their own group, then by
// date; a session waiting for a person marked in its row (with a name for
// screen readers); an archived one out of the default list, in the
// Archived view, and found by a search of its messages.
func TestUIOrganise2SidebarMarks(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("run a command",
			e2etest.Turn(e2etest.Text("I need to run something."), e2etest.Call("run_command", `{"command":"echo marks"}`)),
			e2etest.Turn(e2etest.Text("Done."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Filed under zanzibar."))),
	), e2etest.WithApprovalMode("manual"))
	ids := map[string]string{}
	for _, title := range []string{"Pinned one", "Archived one", "Plain one", "Waiting one"} {
		var out e2etest.SessionJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"title": title}, &out); c != http.StatusCreated {
			t.Fatalf("create: %d", c)
		}
		ids[title] = out.ID
	}
	r := s.Send(t, ids["Archived one"], "remember this")
	s.WaitStatus(t, r.ID, "completed")
	for title, patch := range map[string]map[string]any{"Pinned one": {"pinned": true}, "Archived one": {"archived": true}} {
		if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+ids[title], patch, nil); c != http.StatusOK {
			t.Fatalf("organise %s: %d", title, c)
		}
	}
	w := s.Send(t, ids["Waiting one"], "please run a command")
	s.WaitStatus(t, w.ID, "awaiting_approval")

	b := openBrowser(t, s)
	b.navigate("/")
	b.waitVisible(sessionItemSel(ids["Waiting one"]) + " [data-testid=session-needs-you]")
	if got := b.groups(); len(got) != 2 || got[0] != "pinned" || got[1] != "today" {
		t.Errorf("groups %v, want [pinned today]", got)
	}
	if first := eval[string](b, qa("[data-testid=session-item]")+"[0]?.dataset.sessionId"); first != ids["Pinned one"] {
		t.Errorf("first row %s, want the pinned session %s", first, ids["Pinned one"])
	}
	waiting := sessionItemSel(ids["Waiting one"])
	if label := b.attr(waiting+" [data-testid=session-needs-you]", "aria-label"); label != "Waits for you" {
		t.Errorf("the needs-you mark's name: %q", label)
	}
	if !eval[bool](b, q(waiting)+".classList.contains('needs-you')") {
		t.Errorf("the waiting row is not marked")
	}
	if b.count(sessionItemSel(ids["Plain one"])+" [data-testid=session-needs-you]") != 0 {
		t.Errorf("an idle session is marked as waiting for a person")
	}
	if b.count(sessionItemSel(ids["Archived one"])) != 0 {
		t.Errorf("the archived session is in the default list")
	}
	t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "organise2-sidebar-marks-desktop-light"))

	// Reachable: the Archived view, and a search of what was said in it.
	b.chooseFilter("archived")
	b.waitVisible(sessionItemSel(ids["Archived one"]))
	b.chooseFilter("")
	b.waitGone(sessionItemSel(ids["Archived one"]))
	// Search leaves archived sessions out as the list does, until asked.
	b.typeInto("[data-testid=session-search]", "zanzibar")
	b.click("[data-testid=search-filter-archived]")
	b.waitVisible("[data-testid=search-hit][data-session-id=" + ids["Archived one"] + "]")
	b.checkExceptions()
}
