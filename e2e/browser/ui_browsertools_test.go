package browser

// The agent's browser in the workbench (issue 18, h18-browser): a scripted
// model opens a local test page (allowed by name) and takes a screenshot;
// the tool card shows the screenshot as an image, and the workspace pane's
// Browser tab, listed only for a session that used the browser, shows the
// current page and the screenshot history. Screenshots: desktop and
// 375 px, light and dark, with the no-sideways-scroll check.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
)

// pageDNS resolves page.test to 127.0.0.1, where the test page listens.
type pageDNS struct{}

func (pageDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "page.test" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestUIBrowserTools(t *testing.T) {
	t.Parallel()
	exe := chromiumPath(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Local page</title><body style="background:#2a6;color:#fff;font:32px sans-serif"><h1>Hello from the test page</h1></body>`)
	}))
	t.Cleanup(site.Close)
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	page := "http://page.test:" + port + "/"

	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("browser_open", `{"url":"`+page+`"}`)),
		e2etest.Turn(e2etest.Call("browser_screenshot", `{}`)),
		e2etest.Turn(e2etest.Text("Here is the page.")),
	), e2etest.WithApprovalMode("smart"), func(c *config.Config) {
		c.Browser, c.BrowserIdle = exe, config.DefaultBrowserIdle
		c.NetAllow, c.NetResolver = []string{"page.test"}, pageDNS{}
	})
	sid := s.NewSession(t)
	run := s.Send(t, sid, "show me the page")
	s.WaitStatus(t, run.ID, "completed")

	shotImg := "[data-testid=tool-card][data-tool=browser_screenshot] [data-testid=tool-screenshot] img"
	loaded := func(sel string) string { return q(sel) + "?.complete && " + q(sel) + ".naturalWidth > 100" }
	dir := screenshotDir(t)
	for _, v := range []struct {
		name string
		opts []browserOpt
	}{{"desktop", nil}, {"phone", []browserOpt{withWindow(375, 812)}}} {
		b := openBrowser(t, s, v.opts...)
		b.navigate("/s/" + sid)
		b.waitJS("the screenshot in the tool card", loaded(shotImg))
		if got := b.text("[data-testid=tool-card][data-tool=browser_open] [data-testid=tool-label]"); got != "browser open "+page {
			t.Errorf("%s: open card label %q", v.name, got)
		}
		if !b.visible("[data-testid=pane-tab-browser]") {
			b.click("[data-testid=activity-toggle]")
		}
		b.click("[data-testid=pane-tab-browser]")
		b.waitVisible("[data-testid=browser-tab]")
		b.waitJS("the current page", q("[data-testid=browser-page]")+"?.textContent.includes('Local page')")
		if n := b.count("[data-testid=browser-shot]"); n != 1 {
			t.Errorf("%s: %d screenshots in the Browser tab, want 1", v.name, n)
		}
		b.waitJS("the screenshot in the Browser tab", loaded("[data-testid=browser-shot] img"))
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, "browser-tools-"+v.name+"-"+scheme))
			if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
				t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", v.name, w[0], w[1])
			}
		}
	}
}
