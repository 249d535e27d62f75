package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// TestUIToken: a server with CADUCEUS_TOKEN serves the page without it; the
// page asks for the token, refuses a wrong one, then works with the right
// one (API calls with the bearer header, the stream with access_token) and
// keeps it across a reload without ever putting it in the page's address.
func TestUIToken(t *testing.T) {
	t.Parallel()
	const token = "tok-UiTest-7f3a9c2e51"
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Authenticated and streaming.")))), e2etest.WithToken(token))
	b := openBrowser(t, s)

	b.must("open the page", chromedp.Navigate(b.base+"/"))
	b.waitVisible("[data-testid=token-dialog] [data-testid=token-input]")

	b.typeInto("[data-testid=token-input]", "wrong-token-value")
	b.click("[data-testid=token-submit]")
	b.waitJS("the refusal", q("[data-testid=token-dialog]")+" && /not accepted/i.test("+q("[data-testid=token-dialog]")+".textContent)")

	b.clearInput("[data-testid=token-input]")
	b.typeInto("[data-testid=token-input]", token)
	b.click("[data-testid=token-submit]")
	b.waitGone("[data-testid=token-dialog]")
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	b.newSessionUI()
	b.sendMessage("hello with a token")
	b.waitJS("the answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Authenticated and streaming.'))")
	b.waitIdle()

	b.must("reload", chromedp.Reload())
	b.waitSessionLoaded()
	if b.count("[data-testid=token-dialog]") != 0 {
		t.Fatal("the token dialog came back after a reload although the token was accepted")
	}
	b.waitJS("the answer after reload", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Authenticated and streaming.'))")
	if href := eval[string](b, "location.href"); strings.Contains(href, token) {
		t.Fatalf("the token is in the page address: %s", href)
	}
	if strings.Contains(s.Logs.String(), token) {
		t.Fatal("the token appears in the server log")
	}
}
