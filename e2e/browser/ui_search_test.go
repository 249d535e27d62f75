package browser

// Search (issue 15): the sidebar's box finds a word of an assistant answer
// in another session and opens it scrolled to that answer; Ctrl-K opens the
// command palette, which finds sessions, messages and slash commands.

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// pressCtrlK sends Ctrl-K as a keyboard does.
func (b *browser) pressCtrlK() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: "k", Code: "KeyK", WindowsVirtualKeyCode: 75, NativeVirtualKeyCode: 75, Modifiers: int64(chromedp.ModifierCtrl),
		}); err != nil {
			b.t.Fatalf("press Ctrl-K: %v", err)
		}
	}
}

// inView reports whether the transcript item is inside the transcript's
// visible area.
func inViewJS(itemID string) string {
	return fmt.Sprintf(`(() => { const s = %s, el = s && s.querySelector('[data-item-id="%s"]');
		if (!el) return false; const a = s.getBoundingClientRect(), r = el.getBoundingClientRect();
		return r.bottom > a.top + 8 && r.top < a.bottom - 8; })()`, q("[data-testid=transcript]"), itemID)
}

func TestUISearch(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("where is", e2etest.Turn(e2etest.Text("The answer: the ocelot sleeps in the server room."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted, and here is a longer answer so that the transcript grows well past one screen of text."))),
	))
	// The session with the answer, buried under many later turns.
	var target, other e2etest.SessionJSON
	e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]string{}, &target)
	e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]string{}, &other)
	send := func(sid, text string) {
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": text, "if_busy": "enqueue"}, nil); c != 202 {
			t.Fatalf("send %q: %d", text, c)
		}
	}
	send(target.ID, "where is the cat?")
	for i := range 24 {
		send(target.ID, fmt.Sprintf("filler message %d", i))
	}
	send(other.ID, "hello there")
	for _, id := range []string{target.ID, other.ID} {
		waitAPI(t, "the session's runs to finish", func() bool {
			var got struct {
				Status     string `json:"status"`
				QueuedRuns int    `json:"queued_runs"`
			}
			e2etest.Do(t, "GET", s.URL+"/api/sessions/"+id, nil, &got)
			return got.Status == "idle" && got.QueuedRuns == 0
		})
	}

	dir := screenshotDir(t)
	b := openBrowser(t, s)
	b.navigate("/s/" + other.ID)
	b.waitSessionLoaded()

	// The sidebar's box: titles still filter, and messages are searched.
	b.typeInto("[data-testid=session-search]", "ocelot")
	hit := "[data-testid=search-hit][data-session-id=" + target.ID + "][data-kind='message.done']"
	b.waitVisible(hit)
	if n := b.count("[data-testid=search-hit]"); n != 1 {
		t.Errorf("%d hits for ocelot, want 1", n)
	}
	if m := b.text(hit + " mark"); m != "ocelot" {
		t.Errorf("highlighted %q, want ocelot", m)
	}
	itemID := b.attr(hit, "data-item-id")
	if itemID == "" {
		t.Fatal("the hit names no transcript item")
	}
	b.screenshot(dir, "search-sidebar-desktop-light")

	// A click opens the session at the answer, not at its end.
	b.click(hit + " a")
	b.waitJS("the target session in the address", fmt.Sprintf("location.pathname.endsWith(%s)", js(target.ID)))
	b.waitSessionLoaded()
	b.waitJS("the answer scrolled into view", inViewJS(itemID))
	if last := lastItemID(b); last != itemID && eval[bool](b, inViewJS(last)) {
		t.Errorf("the view shows the transcript's end, not the answer")
	}
	b.clearInput("[data-testid=session-search]")
	b.typeInto("[data-testid=session-search]", `"; DROP TABLE (`)
	b.waitVisible("[data-testid=search-no-hits]")
	b.clearInput("[data-testid=session-search]")

	// Ctrl-K: the palette finds sessions, messages and commands.
	b.pressCtrlK()
	b.waitVisible("[data-testid=palette-input]")
	b.waitJS("focus in the palette", "document.activeElement === "+q("[data-testid=palette-input]"))
	b.typeInto("[data-testid=palette-input]", "ocelot")
	b.waitVisible("[data-testid=palette-hit]")
	b.screenshot(dir, "search-palette-desktop-light")
	b.setColorScheme("dark")
	b.screenshot(dir, "search-palette-desktop-dark")
	b.setColorScheme("light")
	b.press("Escape")
	b.waitGone("[data-testid=palette]")

	b.pressCtrlK()
	b.waitVisible("[data-testid=palette-input]")
	b.typeInto("[data-testid=palette-input]", "/help")
	b.waitVisible("[data-testid=palette-command]")
	b.press("Enter")
	b.waitGone("[data-testid=palette]")
	b.waitJS("the command in the composer", q(composerSel)+".value.startsWith('/help')")

	b.pressCtrlK()
	b.waitVisible("[data-testid=palette-input]")
	b.typeInto("[data-testid=palette-input]", "hello")
	b.waitVisible("[data-testid=palette-session]")
	b.press("Enter")
	b.waitJS("the other session in the address", fmt.Sprintf("location.pathname.endsWith(%s)", js(other.ID)))

	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + other.ID)
		p.waitSessionLoaded()
		p.click("[data-testid=sidebar-toggle]")
		p.typeInto("[data-testid=session-search]", "ocelot")
		p.waitVisible(hit)
		p.screenshot(dir, "search-sidebar-phone-"+scheme)
		p.click(hit + " a")
		p.waitJS("the answer scrolled into view", inViewJS(itemID))
		p.pressCtrlK()
		p.typeInto("[data-testid=palette-input]", "ocelot")
		p.waitVisible("[data-testid=palette-hit]")
		p.screenshot(dir, "search-palette-phone-"+scheme)
		p.checkExceptions()
	}
	b.checkExceptions()
}

func lastItemID(b *browser) string {
	return eval[string](b, qa("[data-testid=transcript] [data-item-id]")+".at(-1)?.dataset.itemId ?? ''")
}
