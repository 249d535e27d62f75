package browser

// Search filters (issue 15): the project, model, date and archived
// controls above the sidebar's message hits narrow them; the address keeps
// them over a reload; Clear filters is one click; a hit deep in a long,
// archived session still opens scrolled to it.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
)

func TestUISearchFilters(t *testing.T) {
	t.Parallel()
	llm := openaitest.NewServer()
	t.Cleanup(llm.Close)
	llm.SetModels("gpt-4o", "tiny")
	// With a provider configured, sessions that name no model run on it
	// (the default is "openai"): a reply for each of the 27 runs.
	for range 27 {
		llm.Enqueue(openaitest.Stream(textSSE("Noted, with a longer answer so that the transcript grows well past one screen of text.")))
	}
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("demo"))), e2etest.WithEnv(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.BaseURL()}))

	project := func(name string) string {
		var p struct{ ID string }
		if c := e2etest.Do(t, "POST", s.URL+"/api/projects", map[string]string{"name": name}, &p); c != http.StatusCreated {
			t.Fatalf("project %s: %d", name, c)
		}
		return p.ID
	}
	session := func(body map[string]string) string {
		var got e2etest.SessionJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", body, &got); c != http.StatusCreated {
			t.Fatalf("session %v: %d", body, c)
		}
		return got.ID
	}
	send := func(sid, text string) {
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]string{"content": text, "if_busy": "enqueue"}, nil); c != http.StatusAccepted {
			t.Fatalf("send %q: %d", text, c)
		}
	}
	alpha, beta := project("Alpha"), project("Beta")
	// a: Alpha, no model (the default); b: Beta, openai/tiny; c: Alpha, the
	// platypus message buried under many later turns, then archived.
	a := session(map[string]string{"project_id": alpha})
	b := session(map[string]string{"project_id": beta, "model": "openai/tiny"})
	c := session(map[string]string{"project_id": alpha})
	names := map[string]string{a: "a", b: "b", c: "c"}
	send(a, "platypus notes for alpha")
	send(b, "platypus notes for beta")
	send(c, "platypus notes, archived")
	for i := range 24 {
		send(c, fmt.Sprintf("filler message %d", i))
	}
	for id := range names {
		waitAPI(t, "the session's runs to finish", func() bool {
			var got struct {
				Status     string `json:"status"`
				QueuedRuns int    `json:"queued_runs"`
			}
			e2etest.Do(t, "GET", s.URL+"/api/sessions/"+id, nil, &got)
			return got.Status == "idle" && got.QueuedRuns == 0
		})
	}
	if code := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+c, map[string]any{"archived": true}, nil); code != http.StatusOK {
		t.Fatalf("archive: %d", code)
	}
	var meta struct {
		DefaultModel string `json:"default_model"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/meta", nil, &meta)

	dir := screenshotDir(t)
	br := openBrowser(t, s)
	br.navigate("/s/" + a)
	br.typeInto("[data-testid=session-search]", "platypus")

	// found waits until the hits settle on the sessions want (sorted
	// names) and fails the test if they never do.
	hitSessions := `[...new Set(` + qa("[data-testid=search-hit]") + `.map(e => e.dataset.sessionId))].map(id => (` +
		fmt.Sprintf(`{%q: "a", %q: "b", %q: "c"}`, a, b, c) + `)[id] || id).sort().join(" ")`
	found := func(what, want string) {
		t.Helper()
		br.waitJS(what+": hits of "+want, `!`+q("[data-testid=search-hits] .sb-empty:not([role=alert])")+`?.textContent.startsWith("Searching") && `+hitSessions+` === `+js(want))
	}
	found("default: archived left out", "a b")
	br.waitVisible("[data-testid=search-filters]")
	if br.visible("[data-testid=search-filter-clear]") {
		t.Error("Clear filters shows with no filter set")
	}

	br.setSelect("[data-testid=search-filter-project]", alpha)
	found("project Alpha", "a")
	br.click("[data-testid=search-filter-archived]")
	found("project Alpha, archived included", "a c")
	br.screenshot(dir, "searchfilters-desktop-light")
	br.setColorScheme("dark")
	br.screenshot(dir, "searchfilters-desktop-dark")
	br.setColorScheme("light")

	// The address holds the filters; a reload shows the same hits.
	search := eval[string](br, "location.search")
	for _, want := range []string{"q=platypus", "project=" + alpha, "archived=all"} {
		if !strings.Contains(search, want) {
			t.Errorf("address query %q lacks %q", search, want)
		}
	}
	br.must("reload", chromedp.Reload())
	br.waitMounted()
	br.waitSessionLoaded()
	found("after a reload", "a c")
	if v := eval[string](br, q("[data-testid=search-filter-project]")+".value"); v != alpha {
		t.Errorf("project filter after reload = %q, want %q", v, alpha)
	}
	if v := eval[string](br, q("[data-testid=session-search]")+".value"); v != "platypus" {
		t.Errorf("search box after reload = %q, want platypus", v)
	}

	// One click clears every filter.
	br.click("[data-testid=search-filter-clear]")
	found("cleared", "a b")
	if v := eval[string](br, "location.search"); v != "?q=platypus" {
		t.Errorf("address after clearing = %q, want ?q=platypus", v)
	}

	// Model: the run's model, the session's for its title.
	br.setSelect("[data-testid=search-filter-model]", "openai/tiny")
	found("model openai/tiny", "b")
	br.setSelect("[data-testid=search-filter-model]", meta.DefaultModel)
	found("the default model", "a")
	br.setSelect("[data-testid=search-filter-model]", "")

	// Dates: everything was written today; a custom range in the past
	// finds nothing; a range the wrong way round says so.
	br.setSelect("[data-testid=search-filter-range]", "today")
	found("today", "a b")
	br.setSelect("[data-testid=search-filter-range]", "custom")
	br.setSelect("[data-testid=search-filter-from]", "2020-01-01")
	br.setSelect("[data-testid=search-filter-to]", "2020-01-31")
	br.waitVisible("[data-testid=search-no-hits]")
	found("January 2020", "")
	br.setSelect("[data-testid=search-filter-from]", "2020-02-01")
	br.waitVisible("[data-testid=search-hits] [role=alert]")
	br.click("[data-testid=search-filter-clear]")
	found("cleared again", "a b")

	// A hit deep in the archived session opens it scrolled to the message.
	br.click("[data-testid=search-filter-archived]")
	found("archived included", "a b c")
	hit := "[data-testid=search-hit][data-session-id=" + c + "][data-kind='message.user']"
	br.waitVisible(hit)
	itemID := br.attr(hit, "data-item-id")
	br.click(hit + " a")
	br.waitJS("the archived session in the address", fmt.Sprintf("location.pathname.endsWith(%s)", js(c)))
	br.waitSessionLoaded()
	br.waitJS("the message scrolled into view", inViewJS(itemID))
	// The header names the archived session (it is in no list page).
	br.waitJS("the header names the archived session", "document.querySelector('.hdr-title')?.textContent === 'platypus notes, archived'")
	if last := lastItemID(br); last != itemID && eval[bool](br, inViewJS(last)) {
		t.Errorf("the view shows the transcript's end, not the message")
	}
	if v := eval[string](br, "location.search"); !strings.Contains(v, "archived=all") {
		t.Errorf("address after opening a hit = %q, want the filters kept", v)
	}

	// The palette's message hits take the same filters, says which, and
	// clears them in one click.
	br.setSelect("[data-testid=search-filter-project]", beta)
	found("project Beta", "b")
	br.pressCtrlK()
	br.typeInto("[data-testid=palette-input]", "platypus")
	paletteHits := qa("[data-testid=palette-hit]") + `.map(e => e.textContent).join(" | ")`
	br.waitJS("the palette's hits in Beta only", paletteHits+`.includes("for beta") && !`+paletteHits+`.includes("for alpha")`)
	if got := br.text("[data-testid=palette-filters]"); !strings.Contains(got, "Beta") || !strings.Contains(got, "archived included") {
		t.Errorf("palette filters say %q, want Beta and archived included", got)
	}
	br.screenshot(dir, "searchfilters-palette-desktop-light")
	br.click("[data-testid=palette-filters] button")
	br.waitGone("[data-testid=palette-filters]")
	br.waitJS("the palette's hits unfiltered", paletteHits+`.includes("for alpha")`)
	br.press("Escape")
	br.waitGone("[data-testid=palette]")
	found("cleared from the palette", "a b")
	br.checkExceptions()

	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + a + "?q=platypus&project=" + alpha + "&archived=all")
		p.click("[data-testid=sidebar-toggle]")
		p.waitVisible("[data-testid=search-filters]")
		p.waitVisible("[data-testid=search-hit][data-session-id=" + c + "]")
		got := eval[[]string](p, `[...new Set(`+qa("[data-testid=search-hit]")+`.map(e => e.dataset.sessionId))]`)
		slices.Sort(got)
		want := []string{a, c}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s phone, filters from the address: hits in %v, want %v", scheme, got, want)
		}
		p.screenshot(dir, "searchfilters-phone-"+scheme)
		p.checkExceptions()
	}
}
