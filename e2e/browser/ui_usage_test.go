package browser

// Usage and cost (issue 16, h16-usage): the Usage section of Settings
// shows the totals GET /api/usage gives, a bar per day with today's usage
// on today's bar, a breakdown by model and by session whose rows open the
// session, a custom period with nothing in it, and the CSV; on a phone and
// a desktop, light and dark.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// setDate sets a date input as a person picking a day does.
func setDate(b *browser, sel, day string) {
	b.t.Helper()
	eval[bool](b, fmt.Sprintf(`(() => { const el = %s;
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, %s);
		el.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`, q(sel), js(day)))
}

func TestUIUsage(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Done: the answer is long enough to count a few output tokens."))),
	))
	dir := screenshotDir(t)
	var sids []string
	for i := range 3 {
		sid := s.NewSession(t)
		if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+sid, map[string]string{"title": fmt.Sprintf("Usage session %d", i)}, nil); c != 200 {
			t.Fatalf("rename: %d", c)
		}
		for j := range i + 1 {
			r := s.Send(t, sid, fmt.Sprintf("please count message %d of session %d with some words in it", j, i))
			s.WaitStatus(t, r.ID, "completed")
		}
		sids = append(sids, sid)
	}
	var api struct {
		Total struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			Runs         int64 `json:"runs"`
		} `json:"total"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/usage?group_by=model", nil, &api); c != 200 || api.Total.Runs != 6 || api.Total.InputTokens == 0 {
		t.Fatalf("GET /api/usage: %d %+v", c, api)
	}

	b := openBrowser(t, s)
	b.navigate("/#settings/usage")
	b.waitVisible("[data-testid=usage-page]")
	b.waitJS("the totals", fmt.Sprintf(`%s?.dataset.value === "%d"`, q("[data-testid=usage-total-input]"), api.Total.InputTokens))
	if got := b.attr("[data-testid=usage-total-output]", "data-value"); got != fmt.Sprint(api.Total.OutputTokens) {
		t.Errorf("output tokens shown %s, API %d", got, api.Total.OutputTokens)
	}
	if got := b.text("[data-testid=usage-total-runs]"); got != "6" {
		t.Errorf("runs shown %q, want 6", got)
	}
	// Thirty bars, the last today's (the browser's day) with all of it.
	if n := b.count("[data-testid=usage-bar]"); n != 30 {
		t.Errorf("%d bars, want 30", n)
	}
	today := eval[string](b, `(() => { const d = new Date(), p = (n) => String(n).padStart(2, "0");
		return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()); })()`)
	last := "[data-testid=usage-bar]:last-of-type"
	if day, v := b.attr(last, "data-day"), b.attr(last, "data-value"); day != today || v != fmt.Sprint(api.Total.InputTokens+api.Total.OutputTokens) {
		t.Errorf("last bar %s = %s, want today %s = %d", day, v, today, api.Total.InputTokens+api.Total.OutputTokens)
	}
	b.waitVisible("[data-testid=usage-table][data-group=model] [data-testid=usage-row]")
	if n := b.count("[data-testid=usage-row]"); n != 1 {
		t.Errorf("%d model rows, want 1 (the demo model)", n)
	}

	// Shots of each layout and theme, the breakdown by session.
	b.click("[data-testid=usage-group-session]")
	b.waitJS("three session rows", qa("[data-testid=usage-table][data-group=session] [data-testid=usage-row]")+".length === 3")
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 1000}, {"phone", 375, 812}} {
		sb := openBrowser(t, s, withWindow(w.w, w.h))
		for _, scheme := range []string{"light", "dark"} {
			sb.setColorScheme(scheme)
			sb.navigate("/#settings/usage")
			sb.waitVisible("[data-testid=usage-table] [data-testid=usage-row]")
			sb.waitJS("the bars", qa("[data-testid=usage-bar]")+".length === 30")
			sb.click("[data-testid=usage-group-session]")
			sb.waitJS("three session rows", qa("[data-testid=usage-table][data-group=session] [data-testid=usage-row]")+".length === 3")
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "usage-"+w.name+"-"+scheme))
			if sw := eval[[]int](sb, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
			if w.name == "phone" && scheme == "light" {
				eval[bool](sb, "("+q("[data-testid=usage-table]")+".scrollIntoView(), true)")
				sb.frames(3)
				t.Logf("screenshot: %s", sb.screenshot(dir, "usage-phone-table-"+scheme))
			}
		}
	}

	// The CSV is the breakdown's rows.
	eval[bool](b, `(() => { window.__csv = null; const orig = URL.createObjectURL;
		URL.createObjectURL = (blob) => { blob.text().then((t) => (window.__csv = t)); return orig(blob); }; return true; })()`)
	b.click("[data-testid=usage-csv]")
	b.waitJS("the CSV", "typeof window.__csv === 'string'")
	csv := eval[string](b, "window.__csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "session,label,input_tokens") || !strings.Contains(csv, "Usage session 2") {
		t.Errorf("csv = %q", csv)
	}

	// A custom period before any of it is empty.
	b.click("[data-testid=usage-period-custom]")
	b.waitVisible("[data-testid=usage-from]")
	setDate(b, "[data-testid=usage-from]", "2020-01-01")
	setDate(b, "[data-testid=usage-to]", "2020-01-10")
	b.waitVisible("[data-testid=usage-empty]")
	b.waitJS("ten empty days", qa("[data-testid=usage-bar]")+".length === 10 && "+q("[data-testid=usage-total-runs]")+".textContent === '0'")

	// Back to 7 days; a session row opens its session.
	b.click("[data-testid=usage-period-7d]")
	b.waitJS("seven days", qa("[data-testid=usage-bar]")+".length === 7")
	b.waitVisible("[data-testid=usage-row][data-key=" + sids[1] + "] [data-testid=usage-session-link]")
	b.click("[data-testid=usage-row][data-key=" + sids[1] + "] [data-testid=usage-session-link]")
	b.waitVisible("[data-testid=composer]")
	b.waitJS("the session is open", fmt.Sprintf("location.pathname === '/s/%s'", sids[1]))
}
