package browser

// The approval-policy page (issue 16, h16-policy): a rule added in
// Settings → Approvals approves a run's call in the person's place, the
// decisions log shows that call decided by the rule (and the call before it
// by the mode), a row opens its session, and the rule is deleted after a
// confirmation. A viewer reads it all and is offered no change.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUIApprovalPolicy(t *testing.T) {
	t.Parallel()
	const ruled = "curl -s http://127.0.0.1:9/policy-e2e"
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo by-mode"}`)),
		e2etest.Turn(e2etest.Call("run_command", `{"command":"`+ruled+`"}`)),
		e2etest.Turn(e2etest.Text("done")))),
		e2etest.WithApprovalMode("smart"))
	dir := screenshotDir(t)

	b := openBrowser(t, s)
	b.signIn("ada", adminPW)
	b.navigate("/#settings/approvals")
	b.waitVisible("[data-testid=approvals-page]")
	b.waitJS("the default mode", q("[data-testid=default-mode]")+".textContent === 'smart'")
	b.waitVisible("[data-testid=rules-empty]")

	// A profile's mode, changed by an admin: stored, and shown after a reload.
	created := eval[int](b, `(async () => {
		const me = await (await fetch('/api/auth/me')).json();
		return (await fetch('/api/profiles', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf_token},
			body: JSON.stringify({name: 'Reviewer', color: '#2a9d8f'})})).status;
	})()`)
	if created != 201 {
		t.Fatalf("create a profile: %d", created)
	}
	b.must("reload", chromedp.Reload())
	b.waitMounted()
	mode := "[data-testid=profile-mode] [data-testid=profile-mode-select]"
	b.waitVisible(mode)
	eval[bool](b, "(() => { const s = "+q(mode)+"; s.value = 'manual'; return s.dispatchEvent(new Event('change', {bubbles: true})); })()")
	b.waitJS("the mode stored", `(async () => (await (await fetch('/api/profiles')).json()).profiles[0].approval_mode === 'manual')()`)
	// The page has its answer (it reloaded the modes) before the reload,
	// which would otherwise cancel the request it still waits on.
	b.waitJS("the page's PATCH answered", `performance.getEntriesByType('resource').some(e => /\/api\/profiles\/prf_[^/]+$/.test(new URL(e.name).pathname) && e.responseEnd > 0)`)
	b.must("reload", chromedp.Reload())
	b.waitMounted()
	b.waitJS("the mode shown after a reload", q(mode)+" && "+q(mode)+".value === 'manual'")
	b.clearInput("[data-testid=rule-tool]")
	b.typeInto("[data-testid=rule-tool]", "run_command")
	b.typeInto("[data-testid=rule-pattern]", "curl -s http://127.0.0.1:9/*")
	b.click("[data-testid=rule-add]")
	b.waitVisible("[data-testid=rule-row]")
	if got := b.text("[data-testid=rule-origin]"); !strings.Contains(got, "added by ada") {
		t.Errorf("rule origin %q, want added by ada", got)
	}

	// A run: its command to the private network would ask; the rule answers.
	b.click("[data-testid=page-back]")
	b.waitVisible("[data-testid=composer]")
	b.sendMessage("call it")
	b.waitJS("the run to finish", q(runStatusSel+"[data-status=idle]")+" && "+qa(itemSel("assistant"))+".length > 0")
	session := b.sessionIDFromURL()

	b.navigate("/#settings/approvals")
	byRule := "[data-testid=decision-row][data-by=rule]"
	b.waitVisible(byRule)
	if got := b.text(byRule + " code"); got != "$ "+ruled {
		t.Errorf("action by rule %q", got)
	}
	if got := b.text(byRule + " [data-testid=decision-by]"); !strings.Contains(got, "curl -s http://127.0.0.1:9/*") {
		t.Errorf("decided by %q, want the rule's pattern", got)
	}
	if got := b.text("[data-testid=decision-row][data-by=mode] code"); got != "$ echo by-mode" {
		t.Errorf("action by mode %q", got)
	}
	// The outcome filter: nothing was denied.
	chooseOutcome(b, "denied")
	b.waitVisible("[data-testid=decisions-empty]")
	chooseOutcome(b, "")
	b.waitVisible(byRule)

	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		sb := openBrowser(t, s, withWindow(w.w, w.h))
		sb.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			sb.setColorScheme(scheme)
			sb.must("open approvals", chromedp.Navigate(s.URL+"/#settings/approvals"))
			sb.waitMounted()
			sb.waitVisible(byRule)
			sb.waitVisible("[data-testid=rule-row]")
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "approvals-"+w.name+"-"+scheme))
			eval[bool](sb, "("+q("[data-testid=approval-decisions]")+".scrollIntoView(), true)")
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "approvals-log-"+w.name+"-"+scheme))
			if sw := eval[[]int](sb, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("approvals %s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// A viewer reads the page and is offered no change.
	v := openBrowser(t, s)
	v.signIn("vera", viewerPW)
	v.navigate("/#settings/approvals")
	v.waitVisible(byRule)
	v.waitVisible("[data-testid=rule-row]")
	if got := v.text("[data-testid=profile-mode-text]"); !strings.HasPrefix(got, "Manual") {
		t.Errorf("a viewer reads the profile's mode as %q", got)
	}
	if n := v.count("[data-testid=rule-form]") + v.count("[data-testid=rule-delete]") + v.count("[data-testid=profile-mode-select]"); n != 0 {
		t.Errorf("a viewer is offered %d controls that change the policy", n)
	}

	// A row opens its run's session.
	b.click(byRule + " [data-testid=decision-open]")
	b.waitJS("the run's session", "location.pathname === '/s/"+session+"'")
	b.waitVisible(composerSel)

	// Delete, after a confirmation.
	b.navigate("/#settings/approvals")
	b.click("[data-testid=rule-row] [data-testid=rule-delete]")
	b.click("[data-testid=confirm-rule-delete]")
	b.waitVisible("[data-testid=rules-empty]")
}

func chooseOutcome(b *browser, outcome string) {
	b.t.Helper()
	eval[bool](b, "(() => { const s = "+q("[data-testid=decisions-outcome]")+"; s.value = "+js(outcome)+"; return s.dispatchEvent(new Event('change', {bubbles: true})); })()")
}
