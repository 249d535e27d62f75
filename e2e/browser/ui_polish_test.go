package browser

// Workbench polish (issue 11): sidebar row actions on hover, focus and
// behind a "⋯" menu on touch screens; New session reusing a blank one;
// aligned table columns; removed images without a broken icon; a send
// error said once; Copy on every message; the theme switch; one status
// colour per status; tool cards showing the tool's output once. Plus
// screenshots at 1280x800 and 375x812, light and dark.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

const polishTable = "Results by service:\n\n" +
	"| Service | Region | Requests |\n" +
	"|:--|:-:|--:|\n" +
	"| api | eu-west | 1,204 |\n" +
	"| worker | us-east | 87 |\n\n" +
	"A remote chart: ![chart](https://example.invalid/chart.png) and a local one that is missing: ![diagram](/assets/no-such-image.png)"

func polishScript() demo.Script {
	return e2etest.Scenarios(
		e2etest.Scenario("show the table", e2etest.Turn(e2etest.Text(polishTable))),
		e2etest.Scenario("list the files",
			e2etest.Turn(e2etest.Text("Looking at the workspace."), e2etest.Call("list_dir", `{"path":"."}`)),
			e2etest.Turn(e2etest.Text("There are two files."))),
		e2etest.Scenario("long job", e2etest.Turn(e2etest.Text("Starting the long job…"), e2etest.Delay(60000))),
		e2etest.Scenario("flaky", e2etest.Turn(e2etest.Text("Calling the model…"), demo.Step{Kind: demo.KindError, Code: "overloaded", Message: "the provider is overloaded"})),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Hello from the agent."))),
	)
}

func polishWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range map[string]string{"alpha-notes.txt": "alpha\n", "beta-config.yaml": "port: 8080\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// seedPolish leaves a session with a table, a list_dir call, a stopped run
// and a failed run.
func seedPolish(t *testing.T, s *e2etest.Server) string {
	t.Helper()
	sid := s.NewSession(t)
	r := s.Send(t, sid, "Please show the table")
	s.WaitStatus(t, r.ID, "completed")
	r = s.Send(t, sid, "Now list the files")
	s.WaitStatus(t, r.ID, "completed")
	r = s.Send(t, sid, "Run the long job")
	s.WaitStatus(t, r.ID, "running")
	e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, nil)
	s.WaitStatus(t, r.ID, "cancelled")
	r = s.Send(t, sid, "Try the flaky call")
	s.WaitStatus(t, r.ID, "failed")
	return sid
}

// cssColor is the computed colour of a CSS colour expression in the page's
// theme (e.g. "var(--ok)"), for comparing with an element's colour.
func cssColor(b *browser, expr string) string {
	b.t.Helper()
	return eval[string](b, `(() => { const d = document.createElement("div"); d.style.color = `+js(expr)+`;
		document.body.appendChild(d); const c = getComputedStyle(d).color; d.remove(); return c; })()`)
}

func computed(b *browser, sel, prop string) string {
	b.t.Helper()
	return eval[string](b, "(() => { const e = "+q(sel)+"; return e ? getComputedStyle(e)["+js(prop)+"] : '<none>'; })()")
}

// emulateTouch makes the page a touch screen without hover ((hover: none)).
func (b *browser) emulateTouch() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5}); err != nil {
		b.t.Fatalf("touch emulation: %v", err)
	}
}

func TestUIPolishSidebar(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript())
	long := "A very long session title that does not fit in the sidebar row at all, really"
	ids := []string{s.NewSession(t), s.NewSession(t)}
	for i, title := range []string{"Short one", long} {
		if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+ids[i], map[string]any{"title": title}, nil); c != 200 {
			t.Fatalf("rename: %d", c)
		}
	}
	row := sessionItemSel(ids[1])
	other := sessionItemSel(ids[0])

	t.Run("desktop", func(t *testing.T) {
		b := openBrowser(t, s)
		b.navigate("/s/" + ids[1])
		b.waitVisible(row)
		// Park the mouse away from the list: no row is hovered.
		b.must("mouse away", chromedp.MouseEvent(chromedp.MouseMoved, 700, 400))
		b.waitJS("actions hidden on the active row without hover or focus", "getComputedStyle("+q(row+" .sb-actions")+").opacity === '0'")
		if op := computed(b, other+" .sb-actions", "opacity"); op != "0" {
			t.Errorf("actions of an idle row: opacity %s, want 0", op)
		}
		if b.visible(row + " [data-testid=session-menu]") {
			t.Errorf("the touch menu shows on a desktop with hover")
		}
		// The title runs to the row's end (under where the actions appear).
		w := eval[[]float64](b, `(() => { const t = `+q(row+" .sb-title")+`.getBoundingClientRect(), r = `+q(row)+`.getBoundingClientRect(),
			a = `+q(row+" .sb-actions")+`.getBoundingClientRect(); return [t.right, r.right, a.left]; })()`)
		if w[0] <= w[2] {
			t.Errorf("title ends at %.0f, before the actions' place at %.0f: it does not use the row's width (row ends at %.0f)", w[0], w[2], w[1])
		}
		// Hover shows them.
		b.hover(row)
		b.waitJS("actions shown on hover", "getComputedStyle("+q(row+" .sb-actions")+").opacity === '1'")
		b.must("mouse away", chromedp.MouseEvent(chromedp.MouseMoved, 700, 400))
		b.waitJS("actions hidden again", "getComputedStyle("+q(row+" .sb-actions")+").opacity === '0'")
		// Keyboard focus shows them, and Tab reaches rename and delete.
		eval[any](b, q(other+" a.sb-link")+".focus()")
		b.waitJS("actions shown on keyboard focus", "getComputedStyle("+q(other+" .sb-actions")+").opacity === '1'")
		b.must("Tab", chromedp.KeyEvent("\t"))
		b.waitJS("Tab reaches rename", "document.activeElement === "+q(other+" [data-testid=session-rename]"))
		b.must("Tab", chromedp.KeyEvent("\t"))
		b.waitJS("Tab reaches delete", "document.activeElement === "+q(other+" [data-testid=session-delete]"))
	})

	t.Run("touch", func(t *testing.T) {
		b := openBrowser(t, s, withWindow(375, 812))
		b.emulateTouch()
		b.navigate("/s/" + ids[1])
		if !eval[bool](b, "matchMedia('(hover: none) and (pointer: coarse)').matches") {
			t.Fatalf("touch emulation did not give (hover: none) and (pointer: coarse)")
		}
		b.click("[data-testid=sidebar-toggle]")
		b.waitVisible(row)
		b.waitJS("the drawer slid in", "getComputedStyle(document.getElementById('sidebar')).transform === 'none'")
		if d := computed(b, row+" .sb-actions", "display"); d != "none" {
			t.Errorf("hover actions on a touch screen: display %s, want none", d)
		}
		b.waitVisible(row + " [data-testid=session-menu]")
		b.click(row + " [data-testid=session-menu]")
		b.waitVisible("[data-testid=session-menu-list]")
		if got := b.attr(row+" [data-testid=session-menu]", "aria-expanded"); got != "true" {
			t.Errorf("menu button aria-expanded = %q", got)
		}
		b.screenshot(screenshotDir(t), "polish-phone-light-session-menu")
		// Rename from the menu.
		b.click("[data-testid=session-menu-rename]")
		b.waitVisible(row + " [data-testid=session-rename-input]")
		b.clearInput("[data-testid=session-rename-input]")
		b.typeInto("[data-testid=session-rename-input]", "Renamed on a phone")
		b.press("Enter")
		b.waitJS("the new title", q(row)+"?.textContent.includes('Renamed on a phone')")
		// Esc closes the menu.
		b.click(other + " [data-testid=session-menu]")
		b.waitVisible("[data-testid=session-menu-list]")
		b.waitJS("focus in the menu", "document.activeElement?.dataset.testid === 'session-menu-rename'")
		b.press("Escape")
		b.waitGone("[data-testid=session-menu-list]")
		b.waitJS("focus back on the menu button", "document.activeElement === "+q(other+" [data-testid=session-menu]"))
		if !b.visible("#sidebar.open") {
			t.Errorf("Esc in the menu closed the drawer too")
		}
		// Delete from the menu hides the row at once, with Undo.
		b.click(other + " [data-testid=session-menu]")
		b.click("[data-testid=session-menu-delete]")
		b.waitGone(other)
		b.click("[data-testid=undo-delete]")
		b.waitVisible(other)
	})
}

func TestUIPolishNewSessionReuse(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript())
	b := openBrowser(t, s)
	b.navigate("/")
	countSessions := func() int { return len(s.Sessions(t)) }

	a := b.newSessionUI()
	b.waitJS("the composer focused after New session", "document.activeElement?.dataset.testid === 'composer'")
	eval[any](b, "document.activeElement.blur()")

	// The current session is blank: New session stays on it.
	b.click("[data-testid=new-session]")
	b.waitJS("the composer focused", "document.activeElement?.dataset.testid === 'composer'")
	if p := eval[string](b, "location.pathname"); p != "/s/"+a {
		t.Errorf("New session on a blank session went to %s, want /s/%s", p, a)
	}
	if n := countSessions(); n != 1 {
		t.Errorf("%d sessions after New session on a blank one, want 1", n)
	}

	// From the start page the most recent blank session is reused too.
	b.navigate("/")
	b.waitVisible(sessionItemSel(a))
	b.click("[data-testid=new-session]")
	b.waitJS("the blank session opened", "location.pathname === "+js("/s/"+a))
	if n := countSessions(); n != 1 {
		t.Errorf("%d sessions after New session from the start page, want 1", n)
	}

	// Once it has a message, New session makes a new one.
	b.waitSessionLoaded()
	b.sendMessage("hello there")
	b.waitJS("the answer", q(itemSel("assistant"))+"?.textContent.includes('Hello from the agent')")
	b.waitIdle()
	c := b.newSessionUI()
	if c == a {
		t.Fatalf("New session reopened the used session")
	}
	if n := countSessions(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
}

func TestUIPolishTranscript(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript(), e2etest.WithWorkspace(polishWorkspace(t)), e2etest.WithApprovalMode("smart"))
	sid := seedPolish(t, s)
	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	b.waitVisible("[data-testid=run-end][data-status=failed]")

	t.Run("table alignment", func(t *testing.T) {
		b.waitJS("the table", q(".md table td"))
		got := eval[[]string](b, qa(".md table tr:nth-child(1) td")+".map(e => getComputedStyle(e).textAlign)")
		want := []string{"left", "center", "right"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("cell alignment = %v, want %v", got, want)
		}
		head := eval[[]string](b, qa(".md table th")+".map(e => getComputedStyle(e).textAlign)")
		if strings.Join(head, ",") != strings.Join(want, ",") {
			t.Errorf("header alignment = %v, want %v", head, want)
		}
		if n := b.count(".md [align], .md [style]"); n != 0 {
			t.Errorf("%d elements keep an align or style attribute", n)
		}
	})

	t.Run("removed images", func(t *testing.T) {
		b.waitJS("two image notes", qa("[data-testid=image-removed]")+".length === 2")
		if n := eval[int](b, qa(".md img")+".filter(i => !i.getAttribute('src') || (i.complete && i.naturalWidth === 0)).length"); n != 0 {
			t.Errorf("%d broken images left in the transcript", n)
		}
		notes := b.text(itemSel("assistant") + " .md")
		for _, w := range []string{"image removed: chart", "image removed: diagram"} {
			if !strings.Contains(notes, w) {
				t.Errorf("no %q note in %q", w, notes)
			}
		}
	})

	t.Run("list_dir output once", func(t *testing.T) {
		card := "[data-testid=tool-card][data-tool=list_dir]"
		b.click(card + " [data-testid=tool-toggle]")
		b.waitVisible(card + " [data-testid=tool-details]")
		details := b.text(card + " [data-testid=tool-details]")
		if n := strings.Count(details, "alpha-notes.txt"); n != 1 {
			t.Errorf("the listing shows alpha-notes.txt %d times, want once: %q", n, details)
		}
		if strings.Contains(details, `"entries"`) || strings.Contains(details, `\n`) {
			t.Errorf("the expanded card shows raw JSON: %q", details)
		}
		b.click(card + " [data-testid=tool-raw-toggle]")
		b.waitVisible(card + " [data-testid=tool-raw]")
		raw := b.text(card + " [data-testid=tool-raw]")
		if !strings.Contains(raw, `"path": "."`) || !strings.Contains(raw, `"entries"`) {
			t.Errorf("details do not show the raw arguments and result: %.300q", raw)
		}
	})

	t.Run("copy message", func(t *testing.T) {
		eval[any](b, `(() => { window.__copied = []; navigator.clipboard.writeText = async (t) => { window.__copied.push(t); }; })()`)
		// Keyboard: focus reaches the button, which shows with the time.
		btn := qa(itemSel("user")+" [data-testid=copy-message]") + "[0]"
		eval[any](b, btn+".focus()")
		b.waitJS("the actions shown on focus", "getComputedStyle("+btn+".closest('.msg-actions')).opacity === '1'")
		if !eval[bool](b, btn+".closest('.msg-actions').querySelector('[data-testid=message-time]')?.textContent.trim().length > 0") {
			t.Errorf("no time beside the user message")
		}
		b.pressTyping("Enter", "\r")
		b.waitJS("the user message copied", "window.__copied.length === 1")
		if got := eval[string](b, "window.__copied[0]"); got != "Please show the table" {
			t.Errorf("copied %q, want the user's message", got)
		}
		// The agent's message copies its markdown source.
		b.click(itemSel("assistant") + " [data-testid=copy-message]")
		b.waitJS("the assistant message copied", "window.__copied.length === 2")
		if got := eval[string](b, "window.__copied[1]"); got != polishTable {
			t.Errorf("copied %q, want the markdown source", got)
		}
		if n := b.count("[data-testid=item][data-kind=user]"); n != b.count(itemSel("user")+" [data-testid=copy-message]") {
			t.Errorf("not every user message has a copy button")
		}
	})

	t.Run("status colours", func(t *testing.T) {
		ok, err, muted := cssColor(b, "var(--ok)"), cssColor(b, "var(--err)"), cssColor(b, "var(--fg-muted)")
		cancelled := computed(b, "[data-testid=run-end][data-status=cancelled]", "color")
		if cancelled == ok {
			t.Errorf("a stopped run reads green (%s)", cancelled)
		}
		if cancelled != muted {
			t.Errorf("a stopped run is %s, want the neutral grey %s", cancelled, muted)
		}
		if c := computed(b, "[data-testid=run-end][data-status=failed]", "color"); c != err {
			t.Errorf("a failed run is %s, want red %s", c, err)
		}
		if c := computed(b, "[data-testid=tool-card][data-tool=list_dir] [data-testid=tool-status]", "color"); c != ok {
			t.Errorf("a finished tool is %s, want green %s", c, ok)
		}
	})
}

func TestUIPolishSendErrorOnce(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript())
	sid := s.NewSession(t)
	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	// The next sends fail: first the server refuses (409), then the network.
	eval[any](b, `(() => { const real = window.fetch; window.__sendFails = "409";
		window.fetch = (url, opts) => {
			if (typeof url === "string" && /\/api\/sessions\/[^/]+\/messages$/.test(url) && opts?.method === "POST") {
				if (window.__sendFails === "409") return Promise.resolve(new Response(JSON.stringify({ error: { code: "session_busy", message: "Refused for the test" } }), { status: 409, headers: { "Content-Type": "application/json" } }));
				return Promise.reject(new TypeError("Failed to fetch"));
			}
			return real(url, opts);
		}; })()`)
	for _, c := range []struct{ mode, msg string }{{"409", "Refused for the test"}, {"network", "Cannot reach the Caduceus server"}} {
		eval[any](b, "window.__sendFails = "+js(c.mode))
		if eval[string](b, q(composerSel)+".value") == "" {
			b.typeInto(composerSel, "hello")
		}
		b.must("focus", chromedp.Focus(chromedp.CSS(composerSel)))
		b.press("Enter")
		b.waitVisible("[data-testid=composer-error]")
		b.waitJS("the error text", q("[data-testid=composer-error]")+".textContent.includes("+js(c.msg)+")")
		eval[any](b, "new Promise(r => setTimeout(r, 300))")
		b.frames(2)
		if n := eval[int](b, "document.body.innerText.split("+js(c.msg)+").length - 1"); n != 1 {
			t.Errorf("%s: the error shows %d times, want once (toast: %q)", c.mode, n, b.text("[data-testid=toast]"))
		}
		if b.count("[data-testid=toast]") != 0 {
			t.Errorf("%s: a toast repeats the composer's error", c.mode)
		}
		if v := eval[string](b, q(composerSel)+".value"); v != "hello" {
			t.Errorf("%s: the text was not given back: %q", c.mode, v)
		}
	}
}

func TestUIPolishTheme(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript())
	b := openBrowser(t, s)
	b.setColorScheme("light")
	b.navigate("/")
	theme := func() string { return eval[string](b, "document.documentElement.dataset.theme || ''") }
	if got := theme(); got != "light" {
		t.Fatalf("theme %q with a light system, want light", got)
	}
	lightBg := computed(b, "body", "backgroundColor")

	b.click("[data-testid=theme-switch]")
	b.waitVisible("[data-testid=theme-menu]")
	b.click("[data-testid=theme-dark]")
	b.waitJS("dark theme", "document.documentElement.dataset.theme === 'dark'")
	darkBg := computed(b, "body", "backgroundColor")
	if darkBg == lightBg {
		t.Errorf("the page background did not change (%s)", darkBg)
	}
	if v := eval[string](b, "localStorage.getItem('caduceus.theme')"); v != "dark" {
		t.Errorf("saved theme %q, want dark", v)
	}

	// After a reload the dark theme is there from the first frame.
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `requestAnimationFrame(() => { window.__firstFrame = { theme: document.documentElement.getAttribute("data-theme"), bg: getComputedStyle(document.body || document.documentElement).backgroundColor }; });`,
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.navigate("/")
	b.waitJS("the first frame recorded", "window.__firstFrame")
	first := eval[map[string]string](b, "window.__firstFrame")
	if first["theme"] != "dark" || first["bg"] != darkBg {
		t.Errorf("first frame after reload: %v, want theme dark and background %s", first, darkBg)
	}
	if got := b.attr("[data-testid=theme-switch]", "aria-label"); got != "Theme: Dark" {
		t.Errorf("switch label %q", got)
	}

	// System follows the system setting live.
	b.click("[data-testid=theme-switch]")
	b.click("[data-testid=theme-system]")
	b.waitJS("light again (system is light)", "document.documentElement.dataset.theme === 'light'")
	b.setColorScheme("dark")
	b.waitJS("dark when the system turns dark", "document.documentElement.dataset.theme === 'dark'")
	b.setColorScheme("light")
	b.waitJS("light when it turns back", "document.documentElement.dataset.theme === 'light'")
	if v := eval[string](b, "localStorage.getItem('caduceus.theme')"); v != "system" {
		t.Errorf("saved theme %q, want system", v)
	}
	// Light overrides a dark system.
	b.click("[data-testid=theme-switch]")
	b.click("[data-testid=theme-light]")
	b.setColorScheme("dark")
	b.frames(2)
	if got := theme(); got != "light" {
		t.Errorf("theme %q with Light chosen and a dark system, want light", got)
	}
}

func TestUIPolishScreenshots(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, polishScript(), e2etest.WithWorkspace(polishWorkspace(t)), e2etest.WithApprovalMode("smart"))
	sid := seedPolish(t, s)
	for _, title := range []string{"Refactor the storage layer and move the migrations into their own package", "Short"} {
		id := s.NewSession(t)
		e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+id, map[string]any{"title": title}, nil)
	}
	e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+sid, map[string]any{"title": "Please fix the port clash in the proxy config"}, nil)
	dir := screenshotDir(t)
	for _, v := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		b := openBrowser(t, s, withWindow(v.w, v.h))
		if v.name == "phone" {
			b.emulateTouch()
		}
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.navigate("/s/" + sid)
			b.waitVisible("[data-testid=run-end][data-status=failed]")
			card := "[data-testid=tool-card][data-tool=list_dir]"
			if b.attr(card+" [data-testid=tool-toggle]", "aria-expanded") != "true" {
				b.click(card + " [data-testid=tool-toggle]")
			}
			b.waitVisible(card + " [data-testid=tool-details]")
			eval[any](b, q(card)+".scrollIntoView({block: 'center'})")
			b.hover(itemSel("assistant") + " .md")
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-transcript", v.name, scheme)))
			eval[any](b, q("[data-testid=transcript]")+".scrollTop = 1e9")
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-bottom", v.name, scheme)))
			eval[any](b, q("[data-testid=transcript]")+".scrollTop = 0")
			b.hover(itemSel("assistant") + " .md table")
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-top", v.name, scheme)))
			if v.name == "desktop" {
				b.hover("[data-testid=session-item]:last-child")
				b.frames(3)
				t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-sidebar-hover", v.name, scheme)))
				b.click("[data-testid=theme-switch]")
				b.waitVisible("[data-testid=theme-menu]")
				b.frames(3)
				t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-menu", v.name, scheme)))
				b.press("Escape")
			} else {
				b.click("[data-testid=sidebar-toggle]")
				b.waitVisible(sessionItemSel(sid))
				b.waitJS("the drawer slid in", "getComputedStyle(document.getElementById('sidebar')).transform === 'none'")
				b.frames(3)
				t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("polish-%s-%s-sidebar", v.name, scheme)))
			}
		}
	}
}
