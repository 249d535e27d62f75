package browser

// People and roles in the browser (issue 13): the sign-in page, the account
// menu, the API tokens and users pages, and the controls a viewer does not
// get. Accounts are created on the data dir before the server starts
// (e2etest.AddUsers), as `caduceus user add` would.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

const (
	adminPW    = "ada-long-password-1"
	operatorPW = "otto-long-password-2"
	viewerPW   = "vera-long-password-3"
)

// authServer starts a server whose data dir has an admin (ada), an
// operator (otto) and a viewer (vera).
func authServer(t *testing.T, s demo.Script, opts ...e2etest.ServerOpt) *e2etest.Server {
	t.Helper()
	dir := t.TempDir()
	e2etest.AddUsers(t, dir,
		e2etest.User{Name: "ada", Role: "admin", Password: adminPW},
		e2etest.User{Name: "otto", Role: "operator", Password: operatorPW},
		e2etest.User{Name: "vera", Role: "viewer", Password: viewerPW},
	)
	return e2etest.StartServer(t, s, append([]e2etest.ServerOpt{e2etest.WithDataDir(dir)}, opts...)...)
}

// signIn opens the page, which must show the sign-in page, and signs in.
func (b *browser) signIn(name, password string) {
	b.t.Helper()
	b.must("open the page", chromedp.Navigate(b.base+"/"))
	b.waitVisible("[data-testid=signin-page] [data-testid=signin-name]")
	b.typeInto("[data-testid=signin-name]", name)
	b.typeInto("[data-testid=signin-password]", password)
	b.click("[data-testid=signin-submit]")
	b.waitMounted()
}

// openSessionReadOnly opens a session page that has no composer (a viewer's)
// and waits for its transcript.
func (b *browser) openSessionReadOnly(sid string) {
	b.t.Helper()
	b.must("open /s/"+sid, chromedp.Navigate(b.base+"/s/"+sid))
	b.waitMounted()
	b.waitJS("the session to load", q("[data-testid=transcript]")+" && !"+q("[data-testid=transcript]")+".textContent.includes('Loading…')")
}

// openAccountPage opens an account page from the account menu.
func (b *browser) openAccountPage(item, page string) {
	b.t.Helper()
	b.click("[data-testid=account-menu]")
	b.click("[data-testid=" + item + "]")
	b.waitVisible("[data-testid=" + page + "]")
}

// setSelect picks value in a <select> as a person's choice would (a change
// event).
func (b *browser) setSelect(sel, value string) {
	b.t.Helper()
	b.waitVisible(sel)
	eval[chromedp.Void](b, `(() => { const s = `+q(sel)+`; s.value = `+js(value)+`; s.dispatchEvent(new Event("change", { bubbles: true })); })()`)
}

// bearerStatus sends a GET with a bearer token, as a script would.
func bearerStatus(t *testing.T, method, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestUIAuthRoles: an operator signs in, starts a run and approves it; a
// viewer in another browser sees the same session live but gets no
// composer, no approve/deny, no stop, no new session and no rename/delete,
// with the hint saying why; a reload keeps it so.
func TestUIAuthRoles(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("The viewer watches this stream live. ", 10)
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("run the check",
		e2etest.Turn(e2etest.Text("Running the check."), e2etest.Call("run_command", `{"command":"echo role-check"}`)),
		e2etest.Turn(e2etest.Paced("The check passed. "+filler, 6, 20)),
	), e2etest.Scenario("long job", e2etest.Turn(e2etest.Text("Starting the long job…"), e2etest.Delay(60000)))), e2etest.WithApprovalMode("manual"))

	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	op.click("[data-testid=account-menu]")
	op.waitVisible("[data-testid=account-items]")
	if n, r := op.text("[data-testid=account-name]"), op.attr("[data-testid=account-role]", "data-role"); n != "otto" || r != "operator" {
		t.Errorf("account menu says %q (%q), want otto (operator)", n, r)
	}
	if op.count("[data-testid=menu-users]") != 0 {
		t.Error("an operator is offered the users page")
	}
	op.press("Escape")
	sid := op.newSessionUI()
	op.sendMessage("please run the check")
	op.waitVisible("[data-testid=approval-card] button[data-choice=once]")

	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	vw.waitVisible("[data-testid=approval-card] [data-testid=request-readonly]")
	checkReadOnly := func() {
		t.Helper()
		if h := vw.text("[data-testid=read-only-hint]"); !strings.Contains(h, "You can read; starting and approving needs the operator role") {
			t.Errorf("read-only hint = %q", h)
		}
		for _, sel := range []string{composerSel, "[data-testid=send]", "[data-testid=stop]", "[data-testid=new-session]", "[data-testid=empty-new-session]",
			"[data-testid=session-rename]", "[data-testid=session-delete]", "[data-testid=session-menu]", "[data-choice]", "[data-testid=clarify-input]",
			"[data-testid=resume-run]", "[data-testid=queued-cancel]"} {
			if n := vw.count(sel); n != 0 {
				t.Errorf("a viewer sees %d of %s", n, sel)
			}
		}
		if eval[bool](vw, "!!"+q("[data-testid=model-picker]")+" && !"+q("[data-testid=model-picker]")+".disabled") {
			t.Error("a viewer can change the session's model")
		}
	}
	checkReadOnly()

	// The operator approves; the viewer sees the rest of the run stream in.
	op.click("[data-testid=approval-card] button[data-choice=once]")
	open := itemSel("assistant") + "[data-open=true]"
	vw.waitJS("the answer streaming in (an open item)", q(open)+" && "+q(open)+".textContent.includes('The check passed')")
	vw.waitIdle()
	op.waitIdle()
	vw.waitJS("the whole answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('watches this stream live'))")
	// Who wrote and who answered: the viewer is told it was otto; otto's
	// own message is not signed, and his answer reads "by you".
	vw.waitJS("otto's name on his message", qa(itemSel("user"))+".some(e => e.querySelector('[data-testid=message-author]')?.textContent === 'otto')")
	if n := op.count("[data-testid=message-author]"); n != 0 {
		t.Errorf("otto's own message is signed (%d names)", n)
	}
	approvalLine := "[data-testid=tool-card][data-tool=run_command] [data-testid=tool-approval]"
	vw.waitJS("the approval named otto's", q(approvalLine)+"?.textContent.startsWith('Allowed once by otto')")
	op.waitJS("the approval named his own", q(approvalLine)+"?.textContent.startsWith('Allowed once by you')")

	// A reload asks /me again and shows the same.
	vw.openSessionReadOnly(sid)
	vw.waitJS("the answer after reload", qa(itemSel("assistant"))+".some(e => e.textContent.includes('The check passed'))")
	vw.waitJS("the approval still named otto's", q(approvalLine)+"?.textContent.startsWith('Allowed once by otto')")
	vw.waitJS("otto's name on his message after reload", qa(itemSel("user"))+".some(e => e.querySelector('[data-testid=message-author]')?.textContent === 'otto')")

	// otto stops a run: the viewer reads who did.
	op.sendMessage("start the long job")
	op.waitVisible("[data-testid=stop]")
	vw.waitJS("the long job running", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Starting the long job'))")
	op.click("[data-testid=stop]")
	vw.waitJS("'Stopped by otto'", q("[data-testid=run-end][data-status=cancelled]")+"?.textContent.trim() === 'Stopped by otto'")
	op.waitJS("'Stopped' for otto", q("[data-testid=run-end][data-status=cancelled]")+"?.textContent.trim() === 'Stopped'")
	t.Logf("screenshot: %s", vw.screenshot(screenshotDir(t), "auth-viewer-desktop-light"))
	vw.openSessionReadOnly(sid)
	vw.waitJS("'Stopped by otto' after reload", q("[data-testid=run-end][data-status=cancelled]")+"?.textContent.trim() === 'Stopped by otto'")
	checkReadOnly()
}

// TestUIAuthAdminUsers: an admin adds a person, who signs in elsewhere;
// disabling them sends their open page back to the sign-in page. The last
// admin cannot demote themselves: the server's message shows on the row.
func TestUIAuthAdminUsers(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))

	ad := openBrowser(t, s)
	ad.signIn("ada", adminPW)
	ad.openAccountPage("menu-users", "users-page")
	ad.waitVisible("[data-testid=user-row][data-name=vera]")

	// The last admin.
	self := "[data-testid=user-row][data-name=ada]"
	ad.setSelect(self+" [data-testid=user-role]", "operator")
	ad.waitVisible(self + " [data-testid=user-error]")
	if e := ad.text(self + " [data-testid=user-error]"); !strings.Contains(strings.ToLower(e), "admin") {
		t.Errorf("last-admin error on the row = %q", e)
	}
	ad.waitJS("the row back to admin", q(self+"[data-role=admin]")+" && "+q(self+" [data-testid=user-role]")+".value === 'admin'")

	// Add a person; a bad name is refused with the server's words.
	ad.typeInto("[data-testid=user-add-name]", "no spaces allowed here!")
	ad.typeInto("[data-testid=user-add-password]", "uma-long-password-4")
	ad.click("[data-testid=user-add-submit]")
	ad.waitVisible("[data-testid=user-add-error]")
	ad.clearInput("[data-testid=user-add-name]")
	ad.typeInto("[data-testid=user-add-name]", "uma")
	if ad.eval0("[data-testid=user-add-password]") == "" {
		ad.typeInto("[data-testid=user-add-password]", "uma-long-password-4")
	}
	ad.setSelect("[data-testid=user-add-role]", "operator")
	ad.click("[data-testid=user-add-submit]")
	uma := "[data-testid=user-row][data-name=uma]"
	ad.waitVisible(uma + "[data-role=operator][data-disabled=false]")

	um := openBrowser(t, s)
	um.signIn("uma", "uma-long-password-4")
	um.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	ad.click(uma + " [data-testid=user-disable]")
	ad.click("[data-testid=confirm-disable]")
	ad.waitVisible(uma + "[data-disabled=true]")

	// Her stream closes within a heartbeat; the page goes to the sign-in
	// page and says why.
	um.waitJSFor("the sign-in page after being disabled", q("[data-testid=signin-page] [data-testid=signin-notice]"), 45*time.Second)
	if n := um.text("[data-testid=signin-notice]"); !strings.Contains(n, "Your session ended; sign in again") {
		t.Errorf("notice = %q", n)
	}
	um.typeInto("[data-testid=signin-name]", "uma")
	um.typeInto("[data-testid=signin-password]", "uma-long-password-4")
	um.click("[data-testid=signin-submit]")
	um.waitJS("the refusal of a disabled account", q("[data-testid=signin-error][data-code=bad_credentials]"))

	// Enabled again, she can sign in.
	ad.click(uma + " [data-testid=user-enable]")
	ad.waitVisible(uma + "[data-disabled=false]")
	um.clearInput("[data-testid=signin-password]")
	um.typeInto("[data-testid=signin-password]", "uma-long-password-4")
	um.click("[data-testid=signin-submit]")
	um.waitMounted()
}

// eval0 is the value of the first input matching sel.
func (b *browser) eval0(sel string) string {
	b.t.Helper()
	return eval[string](b, "("+q(sel)+"?.value ?? '')")
}

// TestUIAuthTokens: create a personal token (the secret is shown once,
// with a copy button), use it from a program, revoke it after a
// confirmation; then it is refused. Scopes above the role are not offered.
func TestUIAuthTokens(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	b := openBrowser(t, s)
	b.signIn("otto", operatorPW)
	b.openAccountPage("menu-tokens", "tokens-page")
	b.waitVisible("[data-testid=tokens-empty]")

	if got := eval[[]string](b, qa("[data-testid=token-scope] option")+".map(o => o.value)"); strings.Join(got, ",") != "read,operate" {
		t.Errorf("an operator is offered scopes %v, want read,operate", got)
	}
	b.typeInto("[data-testid=token-name]", "nightly report")
	b.setSelect("[data-testid=token-scope]", "read")
	b.click("[data-testid=token-create-submit]")
	b.waitVisible("[data-testid=token-secret]")
	secret := b.eval0("[data-testid=token-secret]")
	if !strings.HasPrefix(secret, "cad_") {
		t.Fatalf("secret = %q, want cad_…", secret)
	}
	if box := b.text("[data-testid=token-secret-box]"); !strings.Contains(box, "you will not see it again") {
		t.Errorf("the secret box does not warn: %q", box)
	}
	b.waitVisible("[data-testid=token-copy]")
	b.waitVisible("[data-testid=token-row][data-name='nightly report'][data-revoked=false]")

	// A program uses it: reads pass, writes are beyond its scope.
	if c := bearerStatus(t, "GET", s.URL+"/api/sessions", secret); c != 200 {
		t.Fatalf("GET with the new token: %d", c)
	}
	if c := bearerStatus(t, "POST", s.URL+"/api/sessions", secret); c != 403 {
		t.Errorf("POST with a read token: %d, want 403", c)
	}

	// The cookie session's writes need the CSRF header the UI sends.
	if c := eval[int](b, `fetch("/api/tokens", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "no csrf", scope: "read" }) }).then(r => r.status)`); c != 403 {
		t.Errorf("a cookie POST without X-CSRF-Token: %d, want 403", c)
	}

	// Once: gone after Done and after a reload.
	b.click("[data-testid=token-secret-done]")
	b.waitGone("[data-testid=token-secret-box]")
	b.must("reload", chromedp.Reload())
	b.waitVisible("[data-testid=tokens-page] [data-testid=token-row][data-name='nightly report']")
	if html := eval[string](b, "document.documentElement.outerHTML"); strings.Contains(html, secret) {
		t.Fatal("the secret is in the page after a reload")
	}
	row := "[data-testid=token-row][data-name='nightly report']"
	if p := b.text(row + " [data-testid=token-prefix]"); p == "" || !strings.HasPrefix(secret, strings.TrimSuffix(p, "…")) {
		t.Errorf("prefix %q is not the secret's start", p)
	}
	if u := b.text(row + " [data-testid=token-last-used]"); !strings.Contains(u, "last used") {
		t.Errorf("last used = %q after a request with it", u)
	}

	b.click(row + " [data-testid=token-revoke]")
	b.click("[data-testid=confirm-revoke]")
	b.waitVisible(row + "[data-revoked=true] [data-testid=token-revoked]")
	if c := bearerStatus(t, "GET", s.URL+"/api/sessions", secret); c != 401 {
		t.Fatalf("GET with the revoked token: %d, want 401", c)
	}
	if strings.Contains(s.Logs.String(), secret) {
		t.Fatal("the token secret is in the server log")
	}
}

// TestUIAuthWrongPassword: a wrong password shows the server's one message;
// repeated failures bring the rate-limit message with a countdown, and the
// button waits for it.
func TestUIAuthWrongPassword(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	b := openBrowser(t, s)
	b.must("open the page", chromedp.Navigate(b.base+"/"))
	b.waitVisible("[data-testid=signin-page]")
	if b.count("[data-testid=session-list]") != 0 || b.count("[data-testid=account-menu]") != 0 {
		t.Fatal("the workbench shows before signing in")
	}
	b.typeInto("[data-testid=signin-name]", "otto")
	limited := false
	for i := 1; i <= 12 && !limited; i++ {
		b.waitJSFor("the sign-in button", q("[data-testid=signin-submit]")+" && !"+q("[data-testid=signin-submit]")+".disabled", 40*time.Second)
		b.clearInput("[data-testid=signin-password]")
		b.typeInto("[data-testid=signin-password]", fmt.Sprintf("wrong-password-%d", i))
		b.click("[data-testid=signin-submit]")
		// Read the answer in the same evaluation that finds it: the
		// rate-limit message gives way to "try again now" when the wait
		// (a second at first) is over.
		code, msg := b.signInAnswer(i)
		switch code {
		case "bad_credentials":
			if !strings.Contains(strings.ToLower(msg), "wrong name or password") {
				t.Fatalf("attempt %d: message %q", i, msg)
			}
		case "too_many_attempts":
			limited = true
			if !strings.Contains(msg, "Too many failed sign-ins") {
				t.Errorf("rate-limit message = %q", msg)
			}
			b.waitVisible("[data-testid=signin-countdown]")
			t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "auth-signin-limited-desktop-light"))
			if eval[bool](b, "!"+q("[data-testid=signin-submit]")+".disabled && !!"+q("[data-testid=signin-countdown]")) {
				t.Error("the sign-in button is enabled during the countdown")
			}
			if i <= 5 {
				t.Errorf("limited after %d attempts; the contract allows 5 failures", i)
			}
		default:
			t.Fatalf("attempt %d: code %q (%q)", i, code, msg)
		}
	}
	if !limited {
		t.Fatal("twelve wrong passwords and no rate limit")
	}
	// The wait ends: the button comes back and the stale "try again in n
	// seconds" gives way.
	b.waitJSFor("the end of the wait", q("[data-testid=signin-submit]")+" && !"+q("[data-testid=signin-submit]")+".disabled", 40*time.Second)
	if m := b.text("[data-testid=signin-error]"); m != "You can try again now." {
		t.Errorf("after the wait the page says %q", m)
	}
}

// signInAnswer waits for the n-th refusal on the sign-in page and returns
// its code and text, read at once.
func (b *browser) signInAnswer(n int) (code, msg string) {
	b.t.Helper()
	type answer struct {
		N          int
		Code, Text string
	}
	expr := `(() => { const e = ` + q("[data-testid=signin-error]") + `;
		return e ? { N: Number(e.dataset.n), Code: e.dataset.code, Text: e.textContent } : { N: 0, Code: "", Text: "" }; })()`
	deadline := time.Now().Add(waitTimeout)
	for {
		a, err := evalJS[answer](b, expr)
		if err == nil && a.N == n {
			return a.Code, a.Text
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for sign-in answer %d\n%s", n, b.describe())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUIAuthOpenServer: the loopback server without accounts looks as
// before: no sign-in page, no account menu, every control there.
func TestUIAuthOpenServer(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	b := openBrowser(t, s)
	b.navigate("/")
	b.waitVisible("[data-testid=new-session]")
	for _, sel := range []string{"[data-testid=signin-page]", "[data-testid=account-menu]", "[data-testid=read-only-hint]", "[data-testid=token-dialog]"} {
		if b.count(sel) != 0 {
			t.Errorf("the open server shows %s", sel)
		}
	}
	b.newSessionUI()
	b.waitVisible(composerSel)
}

// TestUIAuthScreens: the sign-in, tokens and users pages on a desktop and a
// 375 px phone, light and dark, for a person to look at; none scrolls
// sideways.
func TestUIAuthScreens(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	dir := screenshotDir(t)
	for _, v := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		b := openBrowser(t, s, withWindow(v.w, v.h))
		shoot := func(name string) {
			t.Helper()
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, name))
			if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
				t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", name, w[0], w[1])
			}
		}
		for i, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.must("open the page", chromedp.Navigate(b.base+"/"))
			b.waitVisible("[data-testid=signin-page]")
			b.typeInto("[data-testid=signin-name]", "ada")
			// One failure per browser (the limit counts five per address).
			if scheme == "light" {
				b.typeInto("[data-testid=signin-password]", "not-her-password")
				b.click("[data-testid=signin-submit]")
				b.waitVisible("[data-testid=signin-error]")
				b.clearInput("[data-testid=signin-password]")
			}
			shoot("auth-signin-" + v.name + "-" + scheme)
			b.typeInto("[data-testid=signin-password]", adminPW)
			b.click("[data-testid=signin-submit]")
			b.waitMounted()
			b.openAccountPage("menu-tokens", "tokens-page")
			b.typeInto("[data-testid=token-name]", fmt.Sprintf("deploy bot %s %d", v.name, i))
			b.setSelect("[data-testid=token-scope]", "operate")
			b.click("[data-testid=token-create-submit]")
			b.waitVisible("[data-testid=token-secret]")
			shoot("auth-tokens-" + v.name + "-" + scheme)

			b.click("[data-testid=account-menu]")
			b.waitVisible("[data-testid=account-items]")
			shoot("auth-menu-" + v.name + "-" + scheme)
			b.click("[data-testid=menu-users]")
			b.waitVisible("[data-testid=users-page] [data-testid=user-row][data-name=vera]")
			shoot("auth-users-" + v.name + "-" + scheme)

			b.click("[data-testid=account-menu]")
			b.click("[data-testid=menu-signout]")
			b.waitVisible("[data-testid=signin-page]")
		}
	}
}

// TestUIAuthPasswords: an admin resets a password from the users page (a
// too-short one is refused in the dialog); the person signs in with it,
// changes it from the account menu (a wrong current password and a
// mistyped repetition are refused), signs out and in with the new one.
func TestUIAuthPasswords(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	ad := openBrowser(t, s)
	ad.signIn("ada", adminPW)
	ad.openAccountPage("menu-users", "users-page")
	vera := "[data-testid=user-row][data-name=vera]"
	ad.click(vera + " [data-testid=user-reset]")
	ad.typeInto("[data-testid=reset-password]", "short")
	ad.click("[data-testid=reset-submit]")
	ad.waitVisible("[data-testid=reset-error]")
	if e := ad.text("[data-testid=reset-error]"); !strings.Contains(e, "at least") {
		t.Errorf("too-short password error = %q", e)
	}
	ad.clearInput("[data-testid=reset-password]")
	ad.typeInto("[data-testid=reset-password]", "vera-reset-password-5")
	ad.click("[data-testid=reset-submit]")
	ad.waitGone("[data-testid=reset-dialog]")

	vw := openBrowser(t, s)
	vw.signIn("vera", "vera-reset-password-5")
	vw.click("[data-testid=account-menu]")
	vw.click("[data-testid=menu-password]")
	vw.waitVisible("[data-testid=password-dialog]")
	vw.typeInto("[data-testid=pw-current]", "not-the-password")
	vw.typeInto("[data-testid=pw-new]", "vera-own-password-6")
	vw.typeInto("[data-testid=pw-again]", "vera-own-password-6")
	vw.click("[data-testid=pw-submit]")
	vw.waitJS("the wrong current password refused", q("[data-testid=pw-error]")+"?.textContent.includes('current password')")
	vw.clearInput("[data-testid=pw-current]")
	vw.typeInto("[data-testid=pw-current]", "vera-reset-password-5")
	vw.clearInput("[data-testid=pw-again]")
	vw.typeInto("[data-testid=pw-again]", "vera-own-password-7")
	vw.click("[data-testid=pw-submit]")
	vw.waitJS("the mistyped repetition refused", q("[data-testid=pw-error]")+"?.textContent.includes('differ')")
	vw.clearInput("[data-testid=pw-again]")
	vw.typeInto("[data-testid=pw-again]", "vera-own-password-6")
	vw.click("[data-testid=pw-submit]")
	vw.waitGone("[data-testid=password-dialog]")
	vw.waitJS("the confirmation", q("[data-testid=toast][data-code=password_changed]"))
	// Still signed in: the session that changed it stays.
	vw.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	vw.click("[data-testid=account-menu]")
	vw.click("[data-testid=menu-signout]")
	vw.waitVisible("[data-testid=signin-page]")
	if n := vw.count("[data-testid=signin-notice]"); n != 0 {
		t.Errorf("signing out shows %q", vw.text("[data-testid=signin-notice]"))
	}
	vw.typeInto("[data-testid=signin-name]", "vera")
	vw.typeInto("[data-testid=signin-password]", "vera-reset-password-5")
	vw.click("[data-testid=signin-submit]")
	vw.waitJS("the old password refused", q("[data-testid=signin-error][data-code=bad_credentials]"))
	vw.clearInput("[data-testid=signin-password]")
	vw.typeInto("[data-testid=signin-password]", "vera-own-password-6")
	vw.click("[data-testid=signin-submit]")
	vw.waitMounted()
	if r := eval[string](vw, "fetch('/api/auth/me').then(r => r.json()).then(m => m.principal.name + ':' + m.principal.role)"); r != "vera:viewer" {
		t.Errorf("signed in as %s, want vera:viewer", r)
	}
}

// signedInClient signs name in over HTTP, as a script with a cookie jar
// would, and returns a request function that sends the CSRF header.
func signedInClient(t *testing.T, base, name, password string) func(method, path string, body any) int {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	send := func(method, path, csrf string, body any, out any) int {
		b, _ := json.Marshal(body)
		req, err := http.NewRequest(method, base+path, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if out != nil {
			_ = json.NewDecoder(res.Body).Decode(out)
		}
		return res.StatusCode
	}
	var login struct {
		CSRF string `json:"csrf_token"`
	}
	if code := send("POST", "/api/auth/login", "", map[string]string{"name": name, "password": password}, &login); code != 200 {
		t.Fatalf("sign %s in: %d", name, code)
	}
	return func(method, path string, body any) int { return send(method, path, login.CSRF, body, nil) }
}

// TestUIAuthDemoted: an operator whom an admin demotes meanwhile is refused
// at the next action, with the server's words, and the page follows the
// new role at once (no reload).
func TestUIAuthDemoted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := e2etest.AddUsers(t, dir,
		e2etest.User{Name: "ada", Role: "admin", Password: adminPW},
		e2etest.User{Name: "otto", Role: "operator", Password: operatorPW})
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))), e2etest.WithDataDir(dir))
	b := openBrowser(t, s)
	b.signIn("otto", operatorPW)
	b.newSessionUI()

	admin := signedInClient(t, s.URL, "ada", adminPW)
	if c := admin("PATCH", "/api/users/"+ids["otto"], map[string]string{"role": "viewer"}); c != 200 {
		t.Fatalf("demote otto: %d", c)
	}
	b.typeInto(composerSel, "still allowed?")
	b.press("Enter")
	b.waitVisible("[data-testid=read-only-hint]")
	if n := b.count(composerSel); n != 0 {
		t.Error("the composer stayed after the demotion")
	}
	b.click("[data-testid=account-menu]")
	if r := b.attr("[data-testid=account-role]", "data-role"); r != "viewer" {
		t.Errorf("the account menu says %q, want viewer", r)
	}
}

// TestUIAuthTwoTabs: a tab whose CSRF token went stale because another tab
// of the same browser signed out and in again (a new session, a new
// token, the same cookie jar) still sends its next message: the refusal
// (403 csrf_failed) fetches the new token and the request goes once more.
func TestUIAuthTwoTabs(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Still here.")))))
	a := openBrowser(t, s)
	a.signIn("otto", operatorPW)
	sid := a.newSessionUI()

	b := a.newTab()
	b.navigate("/s/" + sid)
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	a.click("[data-testid=account-menu]")
	a.click("[data-testid=menu-signout]")
	a.waitVisible("[data-testid=signin-page]")
	a.typeInto("[data-testid=signin-name]", "otto")
	a.typeInto("[data-testid=signin-password]", operatorPW)
	a.click("[data-testid=signin-submit]")
	a.waitMounted()

	b.sendMessage("after the other tab signed in again")
	b.waitJS("the answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Still here.'))")
	if n := b.count("[data-testid=composer-error]"); n != 0 {
		t.Errorf("the stale tab shows an error: %q", b.text("[data-testid=composer-error]"))
	}
}

// Tabs of one browser share the sign-in cookie: a tab waiting on the
// sign-in page goes on by itself when another tab signs in.
func TestUIAuthSignInReachesOtherTabs(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Still here.")))))
	a := openBrowser(t, s)
	a.signIn("otto", operatorPW)
	sid := a.newSessionUI()

	a.click("[data-testid=account-menu]")
	a.click("[data-testid=menu-signout]")
	a.waitVisible("[data-testid=signin-page]")
	b := a.newTab()
	b.must("open the session signed out", chromedp.Navigate(b.base+"/s/"+sid))
	b.waitVisible("[data-testid=signin-page]")

	a.typeInto("[data-testid=signin-name]", "otto")
	a.typeInto("[data-testid=signin-password]", operatorPW)
	a.click("[data-testid=signin-submit]")
	a.waitMounted()

	// b was not touched: it leaves the sign-in page on a's word.
	b.waitVisible("textarea[data-testid=composer]")
	b.sendMessage("signed in by the other tab")
	b.waitJS("the answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Still here.'))")
}
