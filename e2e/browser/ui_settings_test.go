package browser

// The Settings area (issue 16): reached from the sidebar, one section per
// concern, the section in the address so a reload and Back keep it, the
// sections a role may not use not listed, and the older #tokens and #users
// addresses still leading there.

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUISettingsArea(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	dir := screenshotDir(t)

	ad := openBrowser(t, s)
	ad.signIn("ada", adminPW)
	ad.click("[data-testid=open-settings]")
	ad.waitVisible("[data-testid=settings-page]")
	ad.waitJS("the address names Settings", "location.hash === '#settings'")
	for _, id := range []string{"tokens", "users"} {
		ad.waitVisible("[data-testid=settings-nav-" + id + "]")
	}
	ad.click("[data-testid=settings-nav-users]")
	ad.waitVisible("[data-testid=users-page] [data-testid=user-row][data-name=vera]")
	ad.waitJS("the address names the section", "location.hash === '#settings/users'")
	if got := ad.text("[data-testid=settings-title]"); got != "Users" {
		t.Errorf("section title = %q, want Users", got)
	}
	ad.must("reload", chromedp.Reload())
	ad.waitMounted()
	ad.waitVisible("[data-testid=users-page] [data-testid=user-row][data-name=vera]")
	ad.must("back", chromedp.NavigateBack())
	ad.waitVisible("[data-testid=tokens-page]")
	ad.click("[data-testid=page-back]")
	ad.waitVisible("[data-testid=composer]")

	// The older addresses of the account pages lead to their sections.
	ad.must("open #users", chromedp.Navigate(s.URL+"/#users"))
	ad.waitMounted()
	ad.waitVisible("[data-testid=settings-page] [data-testid=users-page]")

	// A viewer is not offered what only an admin may do, even by address.
	v := openBrowser(t, s)
	v.signIn("vera", viewerPW)
	v.click("[data-testid=open-settings]")
	v.waitVisible("[data-testid=settings-nav-tokens]")
	if n := eval[int](v, "document.querySelectorAll('[data-testid=settings-nav-users]').length"); n != 0 {
		t.Errorf("a viewer is offered the users section")
	}
	v.must("open #settings/users", chromedp.Navigate(s.URL+"/#settings/users"))
	v.waitMounted()
	v.waitVisible("[data-testid=settings-page] [data-testid=tokens-page]")

	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		b := openBrowser(t, s, withWindow(w.w, w.h))
		b.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.must("open settings", chromedp.Navigate(s.URL+"/#settings/users"))
			b.waitMounted()
			b.waitVisible("[data-testid=users-page] [data-testid=user-row][data-name=vera]")
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, "settings-"+w.name+"-"+scheme))
			if sw := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}
}
