package browser

// Scheduled jobs (issue 17, h17-jobs): the Scheduled section of Settings.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// setField sets an input's value as typing would end up and tells the page.
func setField(b *browser, sel, v string) {
	b.t.Helper()
	b.waitVisible(sel)
	eval[chromedp.Void](b, "(() => { const e = "+q(sel)+"; e.value = "+js(v)+"; e.dispatchEvent(new Event('input', {bubbles: true})); })()")
}

func TestUIScheduledJobs(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("report done"))), e2etest.WithApprovalMode("off"))
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "Morning report", "prompt": "report",
		"schedule": map[string]any{"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Berlin"}}, nil); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	b := openBrowser(t, s)
	b.navigate("/#settings/scheduled")
	b.waitVisible("[data-testid=job-row][data-name='Morning report']")
	if got := b.text("[data-testid=job-schedule]"); got != "every weekday at 09:00, Europe/Berlin" {
		t.Errorf("schedule in words %q", got)
	}
	b.click("[data-testid=job-pause]")
	b.waitVisible("[data-testid=job-resume]")
	if got := b.text("[data-testid=job-schedule]"); !strings.Contains(got, "paused") {
		t.Errorf("paused job reads %q", got)
	}
	b.click("[data-testid=job-run]")
	b.click("[data-testid=job-history]")
	b.waitJS("the history to list the run", q("[data-testid=job-history-table]")+"?.querySelectorAll('tbody tr').length === 1")

	// The editor validates and previews the schedule as it is typed.
	b.click("[data-testid=job-new]")
	setField(b, "[data-testid=job-expr]", "61 * * * *")
	b.waitVisible("[data-testid=job-preview-error]")
	setField(b, "[data-testid=job-expr]", "30 2 * * *")
	b.waitJS("five fire times", q("[data-testid=job-preview]")+"?.querySelectorAll('li').length === 5")
	b.typeInto("[data-testid=job-name]", "Nightly")
	b.typeInto("[data-testid=job-prompt]", "check the dependencies")
	b.click("[data-testid=job-save]")
	b.waitVisible("[data-testid=job-row][data-name='Nightly']")
	if n := b.count("[data-testid=job-row]"); n != 2 {
		t.Fatalf("%d job rows, want 2", n)
	}

	dir := screenshotDir(t)
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		p := openBrowser(t, s, withWindow(w.w, w.h))
		for _, scheme := range []string{"light", "dark"} {
			p.setColorScheme(scheme)
			p.navigate("/#settings/scheduled")
			p.waitVisible("[data-testid=job-row][data-name='Nightly']")
			p.frames(3)
			t.Logf("screenshot: %s", p.screenshot(dir, "scheduled-"+w.name+"-"+scheme))
			if sw := eval[[]int](p, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}
}
