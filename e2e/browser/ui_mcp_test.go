package browser

// MCP servers (issue 18, h18-mcpwire): an admin adds the npm reference
// server server-everything (installed by `make peers`) in Settings, starts
// it and sees its state and tools, sets a tool to "allow"; a run whose
// model calls the server's image tool shows the image in its tool card.
// Screenshots of the section at desktop and phone width, light and dark.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func everything(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI installs it: make peers)", why)
		}
		t.Skipf("%s: run `make peers`", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	script, err = filepath.Abs("../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		missing("@modelcontextprotocol/server-everything is not installed")
	}
	return node, script
}

func TestUIMCPServers(t *testing.T) {
	t.Parallel()
	node, script := everything(t)
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("mcp__everything__get-tiny-image", `{}`)),
		e2etest.Turn(e2etest.Text("Here is the image.")))))
	b := openBrowser(t, s)
	b.navigate("/#settings/mcp")
	b.waitVisible("[data-testid=mcp-page]")
	b.click("[data-testid=mcp-add]")
	b.waitVisible("[data-testid=mcp-form]")
	b.typeInto("[data-testid=mcp-name]", "everything")
	setField(b, "[data-testid=mcp-command]", node)
	setField(b, "[data-testid=mcp-args]", script+"\nstdio")
	setField(b, "[data-testid=mcp-env]", "EVERYTHING_TOKEN=tok-Zq8xW2pL0mN4vB7c")
	b.click("[data-testid=mcp-save]")
	row := "[data-testid=mcp-row][data-name=everything]"
	b.waitVisible(row + "[data-state=idle]")
	b.click(row + " [data-testid=mcp-restart]")
	b.waitVisible(row + "[data-state=ready]")
	b.waitJS("its tools to be listed", "document.querySelectorAll("+js(row+" [data-testid=mcp-tool]")+").length >= 5")
	if d := b.text(row + " [data-testid=mcp-tool][data-tool=echo]"); !strings.Contains(strings.ToLower(d), "echo") {
		t.Fatalf("echo tool row = %q", d)
	}
	// The env value is never on the page in clear.
	b.click(row + " [data-testid=mcp-edit]")
	b.waitVisible(row + " [data-testid=mcp-env]")
	if v := eval[string](b, q(row+" [data-testid=mcp-env]")+".value"); v != "EVERYTHING_TOKEN=tok…vB7c" {
		t.Fatalf("env shown as %q, want masked", v)
	}
	b.click(row + " [data-testid=mcp-edit]")

	// get-tiny-image: ask -> allow, through the tool's select.
	sel := row + " [data-testid=mcp-tool][data-tool=get-tiny-image] [data-testid=mcp-verdict]"
	eval[chromedp.Void](b, "(() => { const e = "+q(sel)+"; e.value = 'allow'; e.dispatchEvent(new Event('change', {bubbles: true})); })()")
	b.waitJS("the verdict to be saved", q(sel)+".value === 'allow' && !"+q(sel)+".disabled")

	dir := screenshotDir(t)
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		p := openBrowser(t, s, withWindow(w.w, w.h))
		for _, scheme := range []string{"light", "dark"} {
			p.setColorScheme(scheme)
			p.navigate("/#settings/mcp")
			p.waitVisible(row + "[data-state=ready]")
			p.frames(3)
			t.Logf("screenshot: %s", p.screenshot(dir, "mcp-"+w.name+"-"+scheme))
			if sw := eval[[]int](p, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// A run calls the image tool (allowed: no approval); its card shows
	// the image.
	b.navigate("/")
	b.sendMessage("show me a picture")
	card := "[data-testid=tool-card][data-tool='mcp__everything__get-tiny-image'][data-status=ok]"
	b.waitVisible(card)
	// Shown without expanding the card, like a command's output.
	b.waitVisible(card + " [data-testid=tool-images] img")
	b.waitJS("the image to decode", q(card+" [data-testid=tool-images] img")+".naturalWidth > 0")
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, "mcp-image-tool-card"))
}
