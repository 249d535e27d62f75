package browser

// Profiles (issue 16, h16-profiles): a profile created in Settings, a
// session started with it showing it in the header, before and after a
// reload, and switched from there; the section at desktop and phone
// widths in both colour schemes.

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUIProfiles(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	dir := screenshotDir(t)

	b := openBrowser(t, s)
	b.signIn("ada", adminPW)
	b.click("[data-testid=open-settings]")
	b.click("[data-testid=settings-nav-profiles]")
	b.waitVisible("[data-testid=profiles-page] [data-testid=profiles-empty]")
	b.waitJS("the address names the section", "location.hash === '#settings/profiles'")

	// Create one: a name, a colour, instructions, one tool.
	b.click("[data-testid=profile-new]")
	b.waitVisible("[data-testid=profile-form]")
	b.typeInto("[data-testid=profile-name]", "Reviewer")
	// A colour input opens the system's picker: its value is set as the
	// picker would.
	eval[bool](b, `(() => { const c = `+q("[data-testid=profile-color]")+`;
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(c, '#cc3355');
		c.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	b.typeInto("[data-testid=profile-instructions]", "You review code and say what is wrong.")
	b.waitVisible("[data-testid=profile-tool-read_file]")
	b.click("[data-testid=profile-tool-read_file]")
	b.click("[data-testid=profile-save]")
	row := "[data-testid=profile-row][data-name=Reviewer]"
	b.waitVisible(row)
	b.waitGone("[data-testid=profile-form]")

	// What the server holds is what was entered.
	var list struct {
		Profiles []struct {
			ID, Name, Color, Instructions string
			Tools                         []string
		}
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/profiles", nil, &list); c != http.StatusUnauthorized {
		t.Fatalf("GET /api/profiles without signing in: %d, want 401", c)
	}
	raw := eval[string](b, `(async () => JSON.stringify(await (await fetch('/api/profiles')).json()))()`)
	if err := json.Unmarshal([]byte(raw), &list); err != nil || len(list.Profiles) != 1 {
		t.Fatalf("profiles = %s (%v)", raw, err)
	}
	p := list.Profiles[0]
	if p.Name != "Reviewer" || p.Color != "#cc3355" || p.Instructions != "You review code and say what is wrong." || len(p.Tools) != 1 || p.Tools[0] != "read_file" {
		t.Fatalf("stored profile = %+v", p)
	}

	// Start a session with it: the header shows it.
	b.click(row + " [data-testid=profile-start]")
	b.waitVisible("[data-testid=composer]")
	chip := "[data-testid=session-profile][data-profile-id=" + p.ID + "][data-profile-name=Reviewer]"
	b.waitVisible(chip)
	sid := b.sessionIDFromURL()
	b.sendMessage("look at this")
	b.waitJS("the run's answer", q(itemSel("assistant")))
	b.waitIdle()

	b.must("reload", chromedp.Reload())
	b.waitMounted()
	b.waitSessionLoaded()
	b.waitVisible(chip)
	if got := b.sessionIDFromURL(); got != sid {
		t.Fatalf("after reload on session %s, want %s", got, sid)
	}

	// Switch it from the header: no profile, then back.
	pick := func(v string) {
		b.t.Helper()
		eval[bool](b, `(() => { const s = `+q("[data-testid=session-profile-picker]")+`;
			s.value = `+js(v)+`; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
	}
	pick("")
	b.waitVisible("[data-testid=session-profile][data-profile-id='']")
	pick(p.ID)
	b.waitVisible(chip)

	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		c := openBrowser(t, s, withWindow(w.w, w.h))
		c.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			c.setColorScheme(scheme)
			c.must("open profiles", chromedp.Navigate(s.URL+"/#settings/profiles"))
			c.waitMounted()
			c.waitVisible(row)
			c.click(row + " [data-testid=profile-edit]")
			c.waitVisible("[data-testid=profile-form]")
			c.frames(3)
			t.Logf("screenshot: %s", c.screenshot(dir, "profiles-"+w.name+"-"+scheme))
			if sw := eval[[]int](c, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the profiles section scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
			c.navigate("/s/" + sid)
			c.waitVisible(chip)
			c.frames(3)
			t.Logf("screenshot: %s", c.screenshot(dir, "profiles-header-"+w.name+"-"+scheme))
			if sw := eval[[]int](c, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the session page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// Duplicate, then delete the copy with confirmation.
	b.navigate("/#settings/profiles")
	b.click(row + " [data-testid=profile-duplicate]")
	cp := "[data-testid=profile-row][data-name='Reviewer (copy)']"
	b.waitVisible(cp)
	b.click("[data-testid=profile-cancel]")
	b.click(cp + " [data-testid=profile-delete]")
	b.click("[data-testid=confirm-profile-delete]")
	b.waitGone(cp)
	b.waitVisible(row)
}
