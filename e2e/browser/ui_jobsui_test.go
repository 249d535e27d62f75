package browser

// The scheduled jobs' editor and result delivery (issue 17, h17-jobsui):
// one editor creates and edits a job in place, previewing the schedule as
// it is typed; a job whose delivery says notify tells every open tab when
// one of its runs ends.

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

type jobJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Prompt   string `json:"prompt"`
	Schedule struct {
		Kind  string `json:"kind"`
		Expr  string `json:"expr"`
		TZ    string `json:"tz"`
		Words string `json:"words"`
	} `json:"schedule"`
	Overlap       string `json:"overlap"`
	RunExpirySecs int64  `json:"run_expiry_seconds"`
	LastRunID     string `json:"last_run_id"`
	LastRunStatus string `json:"last_run_status"`
	Delivery      *struct {
		Notify     bool     `json:"notify"`
		WebhookIDs []string `json:"webhook_ids"`
	} `json:"delivery"`
}

func getJobs(t *testing.T, s *e2etest.Server) []jobJSON {
	t.Helper()
	var out struct {
		Jobs []jobJSON `json:"jobs"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/jobs", nil, &out); c != http.StatusOK {
		t.Fatalf("list jobs: %d", c)
	}
	return out.Jobs
}

func jobNamed(t *testing.T, s *e2etest.Server, name string) jobJSON {
	t.Helper()
	for _, j := range getJobs(t, s) {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job named %q", name)
	return jobJSON{}
}

// clickInForm clicks sel inside the long editor form: brought to the
// middle of the view and left a couple of frames first, so that the
// harness's own scroll (to the nearest edge) has nothing left to move
// between where it measures and where it clicks on a loaded machine.
func clickInForm(b *browser, sel string) {
	b.t.Helper()
	b.waitVisible(sel)
	eval[chromedp.Void](b, q(sel)+".scrollIntoView({block: 'center'})")
	b.frames(2)
	b.click(sel)
}

// openEditor opens the editor of the job in row and waits until it has
// taken the keyboard: its focus() scrolls the page, which would otherwise
// move the next click's target away on a loaded machine.
func openEditor(b *browser, row string) {
	b.t.Helper()
	b.click(row + " [data-testid=job-edit]")
	b.waitJS("the editor to take the keyboard", "document.activeElement === "+q(row+" [data-testid=job-name]"))
}

// jobRowSel is the row of the job named name.
func jobRowSel(name string) string { return "[data-testid=job-row][data-name='" + name + "']" }

func TestUIJobEditor(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("done"))), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	b.navigate("/#settings/scheduled")

	// Create: the preview and the words follow the schedule as it is typed.
	b.click("[data-testid=job-new]")
	b.waitJS("the keyboard on the editor's first field", "document.activeElement === "+q("[data-testid=job-name]"))
	b.typeInto("[data-testid=job-name]", "Nightly")
	b.typeInto("[data-testid=job-prompt]", "check the dependencies")
	setField(b, "[data-testid=job-tz]", "UTC")
	setField(b, "[data-testid=job-expr]", "30 2 * * *")
	b.waitJS("the words for 02:30", q("[data-testid=job-preview-words]")+"?.textContent.includes('02:30')")
	b.waitJS("five fire times", q("[data-testid=job-preview]")+"?.querySelectorAll('li').length === 5")
	if eval[bool](b, q("[data-testid=job-webhook]")+" !== null") || !b.visible("[data-testid=job-no-webhooks] a[href='#settings/webhooks']") {
		t.Errorf("with no webhook configured the delivery should link to the Webhooks section")
	}
	clickInForm(b, "[data-testid=job-save]")
	b.waitVisible(jobRowSel("Nightly"))
	b.waitGone("[data-testid=job-form]")
	b.waitJS("the row's words", q(jobRowSel("Nightly")+" [data-testid=job-schedule]")+"?.textContent.includes('02:30')")
	j := jobNamed(t, s, "Nightly")
	if j.Schedule.Expr != "30 2 * * *" || j.Schedule.TZ != "UTC" || j.Prompt != "check the dependencies" {
		t.Fatalf("created job %+v", j)
	}

	// Edit in place: filled with the job; an invalid expression shows the
	// error and disables Save; a valid one changes preview and words.
	row := jobRowSel("Nightly")
	openEditor(b, row)
	if got := eval[string](b, q("[data-testid=job-name]")+".value"); got != "Nightly" {
		t.Errorf("the editor's name reads %q, want the job's", got)
	}
	if got := eval[string](b, q("[data-testid=job-expr]")+".value"); got != "30 2 * * *" {
		t.Errorf("the editor's expression reads %q, want the job's", got)
	}
	setField(b, "[data-testid=job-expr]", "61 * * * *")
	b.waitVisible("[data-testid=job-preview-error]")
	if !eval[bool](b, q("[data-testid=job-save]")+".disabled") {
		t.Errorf("Save is enabled with an invalid schedule")
	}
	if eval[string](b, q("[data-testid=job-expr]")+".getAttribute('aria-invalid')") != "true" {
		t.Errorf("the invalid expression is not marked aria-invalid")
	}
	setField(b, "[data-testid=job-expr]", "15 7 * * 1-5")
	b.waitJS("the words for 07:15", q("[data-testid=job-preview-words]")+"?.textContent.includes('07:15')")
	b.waitJS("five fire times again", q("[data-testid=job-preview]")+"?.querySelectorAll('li').length === 5")
	if eval[bool](b, q("[data-testid=job-save]")+".disabled") {
		t.Fatalf("Save stays disabled with a valid schedule")
	}
	eval[chromedp.Void](b, q("[data-testid=job-expiry]")+".value = '1800'; "+q("[data-testid=job-expiry]")+".dispatchEvent(new Event('change', {bubbles: true}))")
	clickInForm(b, "[data-testid=job-save]")
	b.waitGone("[data-testid=job-form]")
	words := row + " [data-testid=job-schedule]"
	b.waitJS("the row's new words", q(words)+"?.textContent.includes('07:15')")
	saved := b.text(words)
	j = jobNamed(t, s, "Nightly")
	if j.Schedule.Expr != "15 7 * * 1-5" || j.RunExpirySecs != 1800 || j.Prompt != "check the dependencies" {
		t.Fatalf("edited job %+v", j)
	}
	if !strings.Contains(saved, "weekday") {
		t.Errorf("the row reads %q, want the weekday schedule in words", saved)
	}

	// A reload shows the same.
	b.navigate("/#settings/scheduled")
	b.waitVisible(row)
	if got := b.text(words); got != saved {
		t.Errorf("after a reload the row reads %q, before %q", got, saved)
	}

	// Cancel restores: what was typed is gone when the editor opens again.
	openEditor(b, row)
	setField(b, "[data-testid=job-name]", "Renamed")
	setField(b, "[data-testid=job-expr]", "0 0 * * *")
	clickInForm(b, "[data-testid=job-cancel]")
	b.waitGone("[data-testid=job-form]")
	b.waitJS("the keyboard back on Edit", "document.activeElement === "+q(row+" [data-testid=job-edit]"))
	openEditor(b, row)
	if got := eval[string](b, q("[data-testid=job-name]")+".value"); got != "Nightly" {
		t.Errorf("after Cancel the editor's name reads %q", got)
	}
	if got := eval[string](b, q("[data-testid=job-expr]")+".value"); got != "15 7 * * 1-5" {
		t.Errorf("after Cancel the editor's expression reads %q", got)
	}
	if j := jobNamed(t, s, "Nightly"); j.Schedule.Expr != "15 7 * * 1-5" {
		t.Errorf("Cancel changed the job: %+v", j)
	}
	// A refusal from the server shows beside its field, and changes nothing.
	setField(b, "[data-testid=job-name]", "")
	eval[chromedp.Void](b, q("[data-testid=job-name]")+".removeAttribute('required')")
	clickInForm(b, "[data-testid=job-save]")
	b.waitVisible("[data-testid=job-error-name]")
	b.waitJS("the keyboard on the refused field", "document.activeElement === "+q("[data-testid=job-name]"))
	b.press("Escape")
	b.waitGone("[data-testid=job-form]")
	if j := jobNamed(t, s, "Nightly"); j.Name != "Nightly" {
		t.Errorf("a refused save changed the job: %+v", j)
	}

	// Screenshots: the list, and the editor open, at both widths and in
	// both schemes; nothing scrolls sideways.
	dir := screenshotDir(t)
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 900}, {"phone", 375, 812}} {
		p := openBrowser(t, s, withWindow(w.w, w.h))
		for _, scheme := range []string{"light", "dark"} {
			p.setColorScheme(scheme)
			p.navigate("/#settings/scheduled")
			p.waitVisible(row)
			for _, shot := range []string{"list", "editor"} {
				if shot == "editor" {
					openEditor(p, row)
					p.waitJS("the preview", q("[data-testid=job-preview]")+"?.querySelectorAll('li').length === 5")
				}
				p.frames(3)
				t.Logf("screenshot: %s", p.screenshot(dir, "jobs-"+shot+"-"+w.name+"-"+scheme))
				if sw := eval[[]int](p, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
					t.Errorf("%s %s %s: the page scrolls sideways (%d px in %d)", shot, w.name, scheme, sw[0], sw[1])
				}
				if wide := eval[[]string](p, qa(".scheduled-page *")+".filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(e => e.className || e.tagName)"); len(wide) > 0 {
					t.Errorf("%s %s %s: sticking out on the right: %v", shot, w.name, scheme, wide)
				}
			}
			clickInForm(p, "[data-testid=job-cancel]")
			p.waitGone("[data-testid=job-form]")
		}
	}
}

// A job with delivery.notify: when its run ends the page says so in a
// toast linking to the run's session, once per run; a job without notify
// never does.
func TestUIJobResultToast(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("report done"))), e2etest.WithApprovalMode("off"))
	var j jobJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "Ticker", "prompt": "report",
		"schedule": map[string]any{"kind": "interval", "expr": "every 2s"}}, &j); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	b := openBrowser(t, s)
	b.navigate("/#settings/scheduled")
	// Every toast the page shows, in order, by run; and every system
	// notification, through a stand-in for the browser's (headless
	// chromium grants none): permission granted, nothing muted.
	eval[chromedp.Void](b, `(() => {
		window.__notes = [];
		window.Notification = class { static permission = "granted"; constructor(title, o) { window.__notes.push([title, o.tag]); } close() {} };
		window.__jobToasts = []; let cur = null;
		new MutationObserver(() => {
			const now = document.querySelector('[data-testid=job-toast]')?.dataset.run ?? null;
			if (now && now !== cur) window.__jobToasts.push(now);
			cur = now;
		}).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-run']});
	})()`)
	b.waitVisible(jobRowSel("Ticker"))

	// A run of the job without notify ends: no toast.
	waitAPI(t, "a run of Ticker to end", func() bool { return jobNamed(t, s, "Ticker").LastRunStatus == "completed" })
	quiet := jobNamed(t, s, "Ticker").LastRunID
	openEditor(b, jobRowSel("Ticker"))
	clickInForm(b, "[data-testid=job-notify]")
	clickInForm(b, "[data-testid=job-save]")
	b.waitGone("[data-testid=job-form]")
	if d := jobNamed(t, s, "Ticker").Delivery; d == nil || !d.Notify {
		t.Fatalf("the saved job's delivery is %+v, want notify", d)
	}
	b.waitJS("the delivery in short", q(jobRowSel("Ticker")+" [data-testid=job-delivery-short]")+"?.textContent === 'notify'")

	b.waitJSFor("the toast of Ticker's run", q("[data-testid=job-toast]")+"?.textContent.includes('Scheduled job “Ticker” completed')", 20*time.Second)
	run := b.attr("[data-testid=job-toast]", "data-run")
	b.frames(20) // past the toast's slide-in
	t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "jobs-result-toast"))
	b.click("[data-testid=job-toast-open]")
	b.waitGone("[data-testid=job-toast]")
	var rv struct {
		SessionID string `json:"session_id"`
		JobID     string `json:"job_id"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/runs/"+run, nil, &rv); c != http.StatusOK || rv.JobID != j.ID {
		t.Fatalf("the toast's run %s: %d %+v, want a run of job %s", run, c, rv, j.ID)
	}
	b.waitJS("Open to show the run's session", "location.pathname === "+js("/s/"+rv.SessionID))

	// Stop the job, let what is under way end, then read the log.
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+j.ID+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause: %d", c)
	}
	time.Sleep(1500 * time.Millisecond)
	toasts := eval[[]string](b, "window.__jobToasts")
	seen := map[string]bool{}
	for _, id := range toasts {
		if seen[id] {
			t.Errorf("run %s was told twice: %v", id, toasts)
		}
		seen[id] = true
	}
	if seen[quiet] {
		t.Errorf("run %s ended before notify was on, yet was told: %v", quiet, toasts)
	}
	if !seen[run] {
		t.Errorf("the log %v misses the toast's run %s", toasts, run)
	}
	// A system notification for each run told, tagged by its run (so two
	// tabs make one), and none other.
	notes := eval[[][]string](b, "window.__notes")
	if len(notes) != len(toasts) {
		t.Errorf("%d notifications for %d toasts: %v", len(notes), len(toasts), notes)
	}
	for i, n := range notes {
		if i < len(toasts) && (n[1] != "job-result-"+toasts[i] || !strings.Contains(n[0], "“Ticker” completed")) {
			t.Errorf("notification %d is %v, want Ticker's result tagged by run %s", i, n, toasts[i])
		}
	}

	// Muted (the bell's switch), the page still shows the toast, and the
	// system stays quiet.
	eval[chromedp.Void](b, "localStorage.setItem('caduceus.notifications.muted', '1')")
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+j.ID+"/resume", nil, nil); c != http.StatusOK {
		t.Fatalf("resume: %d", c)
	}
	b.waitJSFor("a toast of a later run", "window.__jobToasts.length > "+strconv.Itoa(len(toasts)), 20*time.Second)
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+j.ID+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause: %d", c)
	}
	if got := eval[int](b, "window.__notes.length"); got != len(notes) {
		t.Errorf("muted, the page still raised system notifications: %v", eval[[][]string](b, "window.__notes"))
	}
}

// The editor's delivery: a checklist of the configured webhooks; the list
// says the delivery in short; a webhook deleted while the editor was open
// is refused beside the delivery and changes nothing.
func TestUIJobWebhookDelivery(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("done"))), e2etest.WithApprovalMode("off"))
	hook := func(name string) string {
		var h struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/webhooks", map[string]any{"name": name, "url": "https://example.com/" + name}, &h); c != http.StatusCreated {
			t.Fatalf("create webhook %s: %d", name, c)
		}
		return h.ID
	}
	ops, chat := hook("ops"), hook("chat")
	var j jobJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "Report", "prompt": "report",
		"schedule": map[string]any{"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"}}, &j); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	b := openBrowser(t, s)
	b.navigate("/#settings/scheduled")
	row := jobRowSel("Report")
	short := q(row + " [data-testid=job-delivery-short]")
	b.waitJS("no delivery in short", short+"?.textContent === 'no delivery'")

	openEditor(b, row)
	clickInForm(b, "[data-testid=job-notify]")
	clickInForm(b, "[data-testid=job-webhook][data-id='"+chat+"']")
	clickInForm(b, "[data-testid=job-webhook][data-id='"+ops+"']")
	clickInForm(b, "[data-testid=job-save]")
	b.waitGone("[data-testid=job-form]")
	b.waitJS("the delivery in short", short+"?.textContent === 'notify · 2 webhooks'")
	d := jobNamed(t, s, "Report").Delivery
	if d == nil || !d.Notify || strings.Join(d.WebhookIDs, ",") != chat+","+ops {
		t.Fatalf("delivery %+v, want notify and [%s %s] in the order checked", d, chat, ops)
	}

	// The editor opens with the job's delivery checked; a webhook deleted
	// meanwhile is refused beside the delivery.
	openEditor(b, row)
	b.waitJS("both webhooks checked", qa("[data-testid=job-webhook]:checked")+".length === 2")
	if !eval[bool](b, q("[data-testid=job-notify]")+".checked") {
		t.Errorf("the editor opened with notify unchecked")
	}
	clickInForm(b, "[data-testid=job-notify]")
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/webhooks/"+chat, nil, nil); c != http.StatusNoContent && c != http.StatusOK {
		t.Fatalf("delete webhook: %d", c)
	}
	clickInForm(b, "[data-testid=job-save]")
	b.waitVisible("[data-testid=job-error-delivery]")
	if d := jobNamed(t, s, "Report").Delivery; d == nil || !d.Notify {
		t.Errorf("a refused save changed the delivery: %+v", d)
	}
	clickInForm(b, "[data-testid=job-webhook][data-id='"+chat+"']")
	clickInForm(b, "[data-testid=job-save]")
	b.waitGone("[data-testid=job-form]")
	b.waitJS("the delivery in short", short+"?.textContent === '1 webhook'")
}
