package browser

// Web search (issue 18, h18-web): Settings → Web search configures a
// (fake, local) SearXNG and "Test" shows its results; a scripted model
// then calls web_search and the transcript shows the results card, titles
// as links that open apart (rel=noopener) and snippets as text.
// Screenshots of both at desktop and 375 px, light and dark; none scrolls
// sideways.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// searxngFake answers SearXNG's JSON API; the third result's javascript:
// URL must never become a link.
func searxngFake(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"query": %q, "results": [
		  {"url": "https://en.wikipedia.org/wiki/Caduceus", "title": "Caduceus - Wikipedia", "content": "The caduceus is the staff carried by Hermes in Greek mythology, entwined by two serpents and often surmounted by wings.", "engine": "wikipedia"},
		  {"url": "https://example.org/a/very/long/path/that/should/wrap/on/a/narrow/phone/screen/without/scrolling/sideways/at/all", "title": "<script>alert(1)</script>Symbols of medicine", "content": "Why the caduceus is often confused with the rod of Asclepius.", "engine": "duckduckgo"},
		  {"url": "javascript:alert(1)", "title": "evil", "content": "never a link", "engine": "x"}
		], "answers": [], "suggestions": [], "unresponsive_engines": []}`, r.URL.Query().Get("q"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUIWebSearch(t *testing.T) {
	t.Parallel()
	searx := searxngFake(t)
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("web_search", `{"query":"caduceus staff"}`)),
		e2etest.Turn(e2etest.Text("The caduceus is Hermes's staff.")))), e2etest.WithApprovalMode("off"))
	dir := screenshotDir(t)
	b := openBrowser(t, s)

	b.navigate("/#settings/web-search")
	b.waitVisible("[data-testid=websearch-state]")
	if got := b.attr("[data-testid=websearch-state]", "data-configured"); got != "false" {
		t.Fatalf("configured = %q before any back-end", got)
	}
	b.typeInto("[data-testid=websearch-url]", searx.URL)
	b.click("[data-testid=websearch-save]")
	b.waitVisible("[data-testid=websearch-saved]")
	b.waitJS("the state to say configured", q("[data-testid=websearch-state]")+".dataset.configured === 'true'")
	b.typeInto("[data-testid=websearch-test-query]", "caduceus")
	b.click("[data-testid=websearch-test]")
	b.waitVisible("[data-testid=websearch-test-results]")
	if n := b.count("[data-testid=websearch-test-results] [data-testid=web-result]"); n != 2 {
		t.Errorf("test shows %d results, want 2 (the javascript: one dropped)", n)
	}
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		for _, scheme := range []string{"light", "dark"} {
			p := openBrowser(t, s, withWindow(w.w, w.h))
			p.setColorScheme(scheme)
			p.navigate("/#settings/web-search")
			p.waitVisible("[data-testid=websearch-test-form]")
			p.typeInto("[data-testid=websearch-test-query]", "caduceus")
			p.click("[data-testid=websearch-test]")
			p.waitVisible("[data-testid=websearch-test-results]")
			shootGoals(t, p, dir, "websearch-settings-"+w.name+"-"+scheme)
		}
	}

	// The model searches; the card shows the results.
	sid := s.NewSession(t)
	run := s.Send(t, sid, "what is a caduceus?")
	s.WaitStatus(t, run.ID, "completed")
	card := "[data-testid=tool-card][data-tool=web_search]"
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		for _, scheme := range []string{"light", "dark"} {
			p := openBrowser(t, s, withWindow(w.w, w.h))
			p.setColorScheme(scheme)
			p.navigate("/s/" + sid)
			p.waitVisible(card + " [data-testid=web-results]")
			links := eval[[][]string](p, qa(card+" [data-testid=web-result-link]")+
				".map(a => [a.tagName, a.getAttribute('href') || '', a.getAttribute('rel') || '', a.getAttribute('target') || '', a.textContent])")
			if len(links) != 2 {
				t.Fatalf("%d results in the card, want 2: %v", len(links), links)
			}
			if l := links[0]; l[0] != "A" || l[1] != "https://en.wikipedia.org/wiki/Caduceus" || l[2] != "noopener noreferrer" || l[3] != "_blank" || l[4] != "Caduceus - Wikipedia" {
				t.Errorf("first link %v", l)
			}
			// Markup in a title is text, never markup.
			if l := links[1]; l[4] != "alert(1)Symbols of medicine" || p.count(card+" script") != 0 {
				t.Errorf("second result %v", l)
			}
			if got := p.text(card + " [data-testid=web-search-count]"); got != "2 results" {
				t.Errorf("count shows %q", got)
			}
			eval[any](p, q(card)+".scrollIntoView({block: 'center'})")
			shootGoals(t, p, dir, "websearch-card-"+w.name+"-"+scheme)
		}
	}
}
