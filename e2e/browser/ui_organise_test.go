package browser

// Organising sessions (issue 15): pin, archive and the Archived view,
// projects and their defaults, the date groups, multi-select archive, and
// delete with a few seconds to undo.

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// organisedJSON is a session's organising fields as the API shows them.
type organisedJSON struct {
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	Pinned     bool    `json:"pinned"`
	ArchivedAt *string `json:"archived_at"`
	ProjectID  *string `json:"project_id"`
}

func getOrganised(t *testing.T, s *e2etest.Server, sid string) (organisedJSON, int) {
	t.Helper()
	var out organisedJSON
	c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid, nil, &out)
	return out, c
}

// seedDated writes sessions whose last activity lies days back, before the
// server starts (the API stamps every change with now).
func seedDated(t *testing.T, dataDir string, titles map[string]time.Time) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := map[string]string{}
	for title, at := range titles {
		sess := store.Session{ID: id.New("ses"), Title: title, Workspace: dataDir, CreatedAt: at, UpdatedAt: at}
		if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertSession(ctx, sess) }); err != nil {
			t.Fatal(err)
		}
		ids[title] = sess.ID
	}
	return ids
}

func (b *browser) organiseMenu(sid, item string) {
	b.t.Helper()
	row := sessionItemSel(sid)
	b.hover(row)
	b.click(row + " [data-testid=session-organise]")
	b.click(row + " [data-testid=session-organise-list] [data-testid=" + item + "]")
}

func (b *browser) chooseFilter(value string) {
	b.t.Helper()
	eval[any](b, `(() => { const s = `+q("[data-testid=session-filter]")+`; s.value = `+js(value)+`; s.dispatchEvent(new Event("change", {bubbles: true})); })()`)
}

func (b *browser) groups() []string {
	return eval[[]string](b, qa("[data-testid=session-group]")+".map(e => e.dataset.group)")
}

func TestUIOrganise(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	now := time.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	seeded := seedDated(t, dataDir, map[string]time.Time{
		"Yesterday's notes": midnight.Add(-12 * time.Hour),
		"Last week's plan":  midnight.Add(-3 * 24 * time.Hour),
		"An old question":   midnight.Add(-40 * 24 * time.Hour),
	})
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))), e2etest.WithDataDir(dataDir))
	var today []string
	for _, title := range []string{"Today one", "Today two", "Today three"} {
		var out e2etest.SessionJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"title": title}, &out); c != http.StatusCreated {
			t.Fatalf("create: %d", c)
		}
		today = append(today, out.ID)
	}
	b := openBrowser(t, s)
	b.navigate("/")
	b.waitJS("six sessions", "document.querySelectorAll('[data-testid=session-item]').length === 6")
	// Another tab follows pins and archives live (session.updated).
	other := openBrowser(t, s)
	other.navigate("/")
	other.waitJS("six sessions in the other tab", "document.querySelectorAll('[data-testid=session-item]').length === 6")

	// Grouped by date, newest first.
	if got, want := b.groups(), []string{"today", "yesterday", "week", "older"}; !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}

	// Pin the oldest: it leads, in its own group.
	old := seeded["An old question"]
	b.organiseMenu(old, "session-pin")
	b.waitJS("the pinned group first", qa("[data-testid=session-group]")+"[0]?.dataset.group === 'pinned' && "+
		qa("[data-testid=session-item]")+"[0]?.dataset.sessionId === "+js(old))
	if got, _ := getOrganised(t, s, old); !got.Pinned {
		t.Errorf("pinned on the server: %+v", got)
	}
	other.waitJS("the pin in the other tab", qa("[data-testid=session-group]")+"[0]?.dataset.group === 'pinned' && "+
		qa("[data-testid=session-item]")+"[0]?.dataset.sessionId === "+js(old))

	// Archive one: it leaves the list, the Archived view shows it, and
	// Unarchive there brings it back.
	week := seeded["Last week's plan"]
	b.organiseMenu(week, "session-archive")
	b.waitGone(sessionItemSel(week))
	if got, _ := getOrganised(t, s, week); got.ArchivedAt == nil {
		t.Errorf("archived on the server: %+v", got)
	}
	other.waitGone(sessionItemSel(week))
	b.chooseFilter("archived")
	b.waitVisible(sessionItemSel(week))
	if n := b.count("[data-testid=session-item]"); n != 1 {
		t.Errorf("Archived view lists %d sessions, want 1", n)
	}
	b.organiseMenu(week, "session-archive") // "Unarchive" here
	b.waitGone(sessionItemSel(week))
	b.chooseFilter("")
	b.waitVisible(sessionItemSel(week))
	other.waitVisible(sessionItemSel(week))

	// A project: created in the dialog, it becomes the list shown; New
	// session makes a session in it with its model.
	b.click("[data-testid=project-new]")
	b.waitVisible("[data-testid=project-dialog]")
	b.typeInto("[data-testid=project-name]", "Website")
	b.typeInto("[data-testid=project-model]", "demo/project-model")
	b.typeInto("[data-testid=project-instructions]", "Use British spelling.")
	b.click("[data-testid=project-save]")
	b.waitGone("[data-testid=project-dialog]")
	b.waitJS("the project's (empty) list", "document.querySelectorAll('[data-testid=session-item]').length === 0")
	b.click("[data-testid=new-session]")
	b.waitJS("a session in the project", "document.querySelectorAll('[data-testid=session-item]').length === 1")
	inProject := eval[string](b, q("[data-testid=session-item]")+".dataset.sessionId")
	got, _ := getOrganised(t, s, inProject)
	if got.ProjectID == nil || got.Model != "demo/project-model" {
		t.Errorf("session made in the project: %+v", got)
	}
	// Move another session into it from its menu.
	b.chooseFilter("")
	b.organiseMenu(today[0], "session-move")
	waitAPI(t, "the move to the project", func() bool {
		g, _ := getOrganised(t, s, today[0])
		return g.ProjectID != nil && *g.ProjectID == *got.ProjectID
	})
	b.chooseFilter(*got.ProjectID)
	b.waitJS("two sessions in the project", "document.querySelectorAll('[data-testid=session-item]').length === 2")
	b.chooseFilter("")

	// Multi-select: shift-click two rows, archive both.
	pick := []string{today[1], seeded["Yesterday's notes"]}
	for _, sid := range pick {
		eval[any](b, q(sessionItemSel(sid)+" .sb-link")+".dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, shiftKey: true, button: 0}))")
	}
	b.waitJS("two selected", q("[data-testid=bulk-count]")+"?.textContent === '2 selected'")
	dir := screenshotDir(t)
	t.Logf("screenshot: %s", b.screenshot(dir, "organise-select-desktop-light"))
	b.click("[data-testid=bulk-archive]")
	for _, sid := range pick {
		b.waitGone(sessionItemSel(sid))
		waitAPI(t, "the bulk archive", func() bool { g, _ := getOrganised(t, s, sid); return g.ArchivedAt != nil })
	}

	// Delete with undo: the row leaves at once and nothing is deleted
	// until the undo time is up; Undo brings it back.
	victim := today[2]
	b.organiseMenu(victim, "session-delete-undo")
	b.waitGone(sessionItemSel(victim))
	b.waitVisible("[data-testid=undo-toast]")
	t.Logf("screenshot: %s", b.screenshot(dir, "organise-undo-desktop-light"))
	if _, c := getOrganised(t, s, victim); c != http.StatusOK {
		t.Fatalf("deleted before the undo time was up: GET %d", c)
	}
	b.click("[data-testid=undo-delete]")
	b.waitVisible(sessionItemSel(victim))
	b.waitGone("[data-testid=undo-toast]")
	time.Sleep(6 * time.Second) // past the undo time: an undone delete stays undone
	if _, c := getOrganised(t, s, victim); c != http.StatusOK {
		t.Fatalf("an undone delete deleted: GET %d", c)
	}
	b.organiseMenu(victim, "session-delete-undo")
	b.waitGone(sessionItemSel(victim))
	waitAPI(t, "the delete after the undo time", func() bool { _, c := getOrganised(t, s, victim); return c == http.StatusNotFound })

	// /pin and /archive act on the session on screen, each a toggle.
	b.navigate("/s/" + today[0])
	b.waitSessionLoaded()
	for _, c := range []struct {
		cmd  string
		done func(organisedJSON) bool
	}{
		{"/pin", func(g organisedJSON) bool { return g.Pinned }},
		{"/archive", func(g organisedJSON) bool { return g.ArchivedAt != nil }},
		{"/archive", func(g organisedJSON) bool { return g.ArchivedAt == nil }},
	} {
		b.waitJS("an empty composer", q(composerSel)+".value === ''")
		b.typeInto(composerSel, c.cmd)
		b.press("Enter")
		waitAPI(t, c.cmd, func() bool { g, _ := getOrganised(t, s, today[0]); return c.done(g) })
	}

	// Screenshots: the grouped list with a pinned session and a project,
	// desktop and phone, light and dark.
	phone := openBrowser(t, s, withWindow(375, 812))
	phone.navigate("/")
	phone.click("[data-testid=sidebar-toggle]")
	phone.waitVisible(sessionItemSel(old))
	for _, v := range []struct {
		name string
		b    *browser
	}{{"desktop", b}, {"phone", phone}} {
		for _, scheme := range []string{"light", "dark"} {
			v.b.setColorScheme(scheme)
			v.b.frames(3)
			t.Logf("screenshot: %s", v.b.screenshot(dir, "organise-"+v.name+"-"+scheme))
			if w := eval[[]int](v.b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
				t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", v.name, w[0], w[1])
			}
		}
	}
}
