package browser

// The browser harness: a headless Chromium per test, driven through chromedp
// against an in-process server (e2etest.StartServer), waiting only on the DOM
// contract (data-testid attributes, docs in the UI helpers' brief) with a
// deadline on every wait. On failure it saves a screenshot, the page's
// console and its HTML under <screenshots>/failures/.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// waitTimeout bounds every wait on the page. Generous because the suite runs
// with -race on two cores next to other browsers; a healthy UI answers in
// milliseconds, so the bound only decides how long a failure takes.
const waitTimeout = 15 * time.Second

// chromiumPath finds Debian's Chromium (or $CADUCEUS_CHROMIUM). Missing, the
// browser tests skip on a developer machine and fail in CI, where .ci/run
// installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CADUCEUS_CHROMIUM"), "/usr/lib/chromium/chromium", "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	msg := "chromium not found (apt-get install chromium, or set CADUCEUS_CHROMIUM)"
	if os.Getenv("CI") == "" {
		t.Skip(msg)
	}
	t.Fatal(msg)
	return ""
}

// screenshotDir is where screenshots, failure artefacts and budgets.txt go:
// $CADUCEUS_SCREENSHOT_DIR, else e2e/screenshots (gitignored), where they
// were before the browser tests had a package of their own.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CADUCEUS_SCREENSHOT_DIR")
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", "screenshots")) // go test runs in the package directory
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless Chromium with one tab.
type browser struct {
	t    *testing.T
	srv  *e2etest.Server
	base string          // URL the tab opens pages on: the server's, or a proxy's
	ctx  context.Context // the tab; no deadline (each action adds its own)

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

type browserConfig struct{ width, height int }

type browserOpt func(*browserConfig)

func withWindow(w, h int) browserOpt {
	return func(c *browserConfig) { c.width, c.height = w, h }
}

// openBrowser starts Chromium for srv. The browser closes when the test
// ends, after the uncaught-exception check and, on failure, the artefacts.
func openBrowser(t *testing.T, srv *e2etest.Server, opts ...browserOpt) *browser {
	t.Helper()
	exe := chromiumPath(t)
	cfg := browserConfig{width: 1280, height: 800}
	for _, o := range opts {
		o(&cfg)
	}
	aopts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(cfg.width, cfg.height),
	)
	// Chromium talks on stderr (GPU, D-Bus, fonts) all the time; keep it
	// for a failed test only.
	chromeOut := &e2etest.LockedBuffer{}
	aopts = append(aopts, chromedp.CombinedOutput(chromeOut))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), aopts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &browser{t: t, srv: srv, base: srv.URL, ctx: ctx}

	// The first action starts the browser and binds it to ctx, so it gets
	// no deadline of its own; a watchdog turns a hung start into an error.
	watchdog := time.AfterFunc(30*time.Second, cancelTab)
	err := chromedp.Do(ctx)
	watchdog.Stop()
	if err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start chromium: %v\n%s", err, chromeOut.String())
	}
	t.Cleanup(func() {
		b.checkExceptions()
		if t.Failed() {
			b.saveArtifacts()
		}
		cancelTab()
		cancelAlloc()
		if t.Failed() {
			t.Logf("chromium output:\n%s", chromeOut.String())
		}
	})
	// The viewport is the window's inner size: pin it so layouts (and the
	// screenshots) are the size the test asked for.
	if err := b.do(chromedp.EmulateViewport(int64(cfg.width), int64(cfg.height))); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	// Record CSP violations with their place in the bundle: the console
	// line alone does not say which code tried.
	ictx, icancel := context.WithTimeout(ctx, waitTimeout)
	_, err = chromedp.Call(ictx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspProbe})
	icancel()
	if err != nil {
		t.Fatalf("install the CSP probe: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

const cspProbe = `window.__csp = [];
document.addEventListener("securitypolicyviolation", e => window.__csp.push(
	e.violatedDirective + " at " + e.sourceFile + ":" + e.lineNumber + ":" + e.columnNumber + " sample=" + JSON.stringify(e.sample) + " blocked=" + e.blockedURI));`

// cspViolations lists the CSP violations of the current document.
func (b *browser) cspViolations() []string {
	b.t.Helper()
	return eval[[]string](b, "window.__csp || []")
}

// do runs actions with the default deadline.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// must runs actions and fails the test with what on error.
func (b *browser) must(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.do(actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.describe())
	}
}

// evalJS evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes the result into T. DevTools evaluation is not subject to the
// page's CSP, unlike chromedp.Poll, whose predicate uses new Function.
func evalJS[T any](b *browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// eval is evalJS that fails the test on error.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := evalJS[T](b, expr)
	if err != nil {
		b.t.Fatalf("evaluate %.200s: %v", expr, err)
	}
	return v
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// waitJS polls expr until it is truthy. Errors count as "not yet": during a
// reload the page's context comes and goes.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	b.waitJSFor(what, expr, waitTimeout)
}

func (b *browser) waitJSFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := evalJS[bool](b, "!!("+expr+")")
		if err == nil && ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			detail := ""
			if lastErr != nil {
				detail = " (last error: " + lastErr.Error() + ")"
			}
			b.t.Fatalf("timed out after %s waiting for %s%s\n%s", timeout, what, detail, b.describe())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// q is a JS expression for the first element matching sel (or null).
func q(sel string) string { return "document.querySelector(" + js(sel) + ")" }

// qa is a JS expression for an array of all elements matching sel.
func qa(sel string) string { return "Array.from(document.querySelectorAll(" + js(sel) + "))" }

// visibleJS is a JS expression: some element matching sel is rendered with
// a non-empty box and not hidden.
func visibleJS(sel string) string {
	return qa(sel) + `.some(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
		return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none"; })`
}

func (b *browser) waitVisible(sel string) {
	b.t.Helper()
	b.waitJS(sel+" visible", visibleJS(sel))
}

func (b *browser) waitGone(sel string) {
	b.t.Helper()
	b.waitJS(sel+" gone", "!("+visibleJS(sel)+")")
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, qa(sel)+".length")
}

func (b *browser) visible(sel string) bool {
	b.t.Helper()
	return eval[bool](b, visibleJS(sel))
}

// text is the textContent of the first element matching sel ("" if none).
func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, "("+q(sel)+"?.textContent ?? '')")
}

// attr is an attribute of the first element matching sel ("" if none).
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	return eval[string](b, "("+q(sel)+"?.getAttribute("+js(name)+") ?? '')")
}

// navigate opens path on the server and waits for the app to mount.
func (b *browser) navigate(path string) {
	b.t.Helper()
	b.must("navigate "+path, chromedp.Navigate(b.base+path))
	b.waitMounted()
	if strings.HasPrefix(path, "/s/") {
		b.waitSessionLoaded()
	}
}

// waitSessionLoaded waits until the session on screen has its transcript
// (the composer keys its draft by session, so text typed before that is
// dropped). The contract has no attribute for it yet: the transcript shows
// "Loading…" until then.
//
// TODO(ui): expose loading in the DOM contract (aria-busy="true" or
// data-loaded on [data-testid=transcript]) and wait on that instead of the
// placeholder text.
func (b *browser) waitSessionLoaded() {
	b.t.Helper()
	b.waitJS("the session to load", q("[data-testid=transcript]")+" && !"+q("[data-testid=transcript]")+".textContent.includes('Loading…') && "+q(composerSel))
}

// waitMounted waits for the shell (the session list is always rendered).
func (b *browser) waitMounted() {
	b.t.Helper()
	b.waitJS("the app to mount (session-list)", q("[data-testid=session-list]"))
}

// click sends a real mouse click to the centre of the first visible element
// matching sel (scrolled into view), waiting until it is there and not
// covered by another element (a drawer, a dialog), as a person's click
// would land.
func (b *browser) click(sel string) {
	b.t.Helper()
	type target struct {
		X, Y float64
		OK   bool
		Hit  string
	}
	probe := `(() => {
		const e = ` + qa(sel) + `.find(e => e.getClientRects().length > 0);
		if (!e) return { X: 0, Y: 0, OK: false, Hit: "(no visible element)" };
		e.scrollIntoView({ block: "nearest", inline: "nearest" });
		const r = e.getBoundingClientRect();
		const x = r.left + r.width / 2, y = r.top + r.height / 2;
		const hit = document.elementFromPoint(x, y);
		const desc = hit ? hit.tagName.toLowerCase() + (hit.dataset.testid ? "[data-testid=" + hit.dataset.testid + "]" : "") +
			(hit.className && typeof hit.className === "string" ? "." + hit.className.trim().split(/\s+/).join(".") : "") : "(nothing)";
		return { X: x, Y: y, OK: !!hit && (e === hit || e.contains(hit)), Hit: desc };
	})()`
	deadline := time.Now().Add(waitTimeout)
	for {
		tg, err := evalJS[target](b, probe)
		if err == nil && tg.OK {
			b.must("click "+sel, chromedp.MouseClickXY(tg.X, tg.Y))
			return
		}
		if time.Now().After(deadline) {
			why := tg.Hit
			if err != nil {
				why = err.Error()
			} else if why != "(no visible element)" {
				why = "covered by " + why
			}
			b.t.Fatalf("click %s: %s after %s\n%s", sel, why, waitTimeout, b.describe())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// typeInto focuses sel and inserts text as one input event (as an IME or a
// paste would), which is much faster than a key event per rune.
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	b.waitVisible(sel)
	b.must("focus "+sel, chromedp.Focus(chromedp.CSS(sel)))
	if text == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		b.t.Fatalf("type into %s: %v", sel, err)
	}
}

// keys of press: DOM key name and Windows virtual key code.
var keyCodes = map[string]int64{"Enter": 13, "Escape": 27, "Backspace": 8, "Tab": 9, "ArrowDown": 40, "ArrowUp": 38}

// press sends a key down and up to the focused element, without a char
// event, as a person's Enter reaches a handler that acts on keydown.
func (b *browser) press(key string, modifiers ...chromedp.Modifier) {
	b.t.Helper()
	code, ok := keyCodes[key]
	if !ok {
		b.t.Fatalf("press: unknown key %q", key)
	}
	var mods int64
	for _, m := range modifiers {
		mods |= int64(m)
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		_, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: key, Code: key, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code, Modifiers: mods,
		})
		if err != nil {
			b.t.Fatalf("press %s: %v", key, err)
		}
	}
}

// pressTyping sends a key that produces text (keyDown with the text, then
// keyUp), so the browser's default action (a new line for Enter) happens
// unless a handler prevents it.
func (b *browser) pressTyping(key, text string, modifiers ...chromedp.Modifier) {
	b.t.Helper()
	code := keyCodes[key]
	var mods int64
	for _, m := range modifiers {
		mods |= int64(m)
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	for _, p := range []input.DispatchKeyEventParams{
		{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Code: key, Text: text, UnmodifiedText: text, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code, Modifiers: mods},
		{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: key, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code, Modifiers: mods},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			b.t.Fatalf("press %s: %v", key, err)
		}
	}
}

// clearInput empties a text field the way a person would (select all,
// delete), so the framework sees an input event.
func (b *browser) clearInput(sel string) {
	b.t.Helper()
	b.must("select "+sel, chromedp.Focus(chromedp.CSS(sel)))
	eval[chromedp.Void](b, q(sel)+".select()")
	b.press("Backspace")
}

// sendMessage types text into the composer and presses Enter, then waits
// until the composer is cleared (the UI took the message).
func (b *browser) sendMessage(text string) {
	b.t.Helper()
	b.typeInto(composerSel, text)
	b.press("Enter")
	b.waitJS("the composer to clear after sending", q(composerSel)+".value === ''")
}

const (
	composerSel  = "textarea[data-testid=composer]"
	runStatusSel = "[data-testid=run-status]"
)

// sessionIDFromURL reads /s/<id> from the location.
func (b *browser) sessionIDFromURL() string {
	b.t.Helper()
	b.waitJS("a session URL", "location.pathname.startsWith('/s/')")
	return strings.TrimPrefix(eval[string](b, "location.pathname"), "/s/")
}

// waitIdle waits for the header's run status to be idle.
func (b *browser) waitIdle() {
	b.t.Helper()
	b.waitJS("run-status idle", q(runStatusSel+"[data-status=idle]"))
}

// setColorScheme emulates prefers-color-scheme.
func (b *browser) setColorScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		b.t.Fatalf("emulate %s: %v", scheme, err)
	}
}

// screenshot captures the viewport into dir/name.png.
func (b *browser) screenshot(dir, name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// consoleLines is the page's console so far, one message per line.
func (b *browser) consoleLines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.console))
	for _, m := range b.console {
		line := m.String()
		if m.URL != "" {
			line += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
		}
		if m.Exception != nil && m.Exception.Exception != nil && m.Exception.Exception.Description != "" {
			line += "\n\t" + strings.ReplaceAll(m.Exception.Exception.Description, "\n", "\n\t")
		}
		out = append(out, line)
	}
	return out
}

// consoleMatching returns console messages containing substr.
func (b *browser) consoleMatching(substr string) []string {
	var out []string
	for _, l := range b.consoleLines() {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// checkExceptions fails the test for every uncaught exception the page
// threw (and every unhandled rejection).
func (b *browser) checkExceptions() {
	b.mu.Lock()
	var bad []string
	for _, m := range b.console {
		if m.IsException() {
			bad = append(bad, m.String())
		}
	}
	b.mu.Unlock()
	for _, e := range bad {
		b.t.Errorf("uncaught exception in the page: %s", e)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// saveArtifacts writes a screenshot, the console and the DOM of a failed
// test next to the screenshots.
func (b *browser) saveArtifacts() {
	dir := filepath.Join(screenshotDir(b.t), "failures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("artefacts: %v", err)
		return
	}
	base := filepath.Join(dir, unsafeName.ReplaceAllString(b.t.Name(), "_"))
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		_ = os.WriteFile(base+".png", png, 0o644)
	}
	if html, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML")); err == nil {
		_ = os.WriteFile(base+".html", []byte(html), 0o644)
	}
	_ = os.WriteFile(base+".console.txt", []byte(strings.Join(b.consoleLines(), "\n")+"\n"), 0o644)
	b.t.Logf("failure artefacts: %s.{png,html,console.txt}", base)
}

// describe summarises the page for a failure message.
func (b *browser) describe() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const a = (sel, n) => { const e = document.querySelector(sel); return e ? (e.getAttribute(n) ?? "") : "<none>"; };
		const items = Array.from(document.querySelectorAll("[data-testid=item]")).map(e => e.dataset.kind + (e.dataset.open === "true" ? "*" : ""));
		return "page: " + location.pathname + " run-status=" + a("[data-testid=run-status]", "data-status") +
			" connection=" + a("[data-testid=connection]", "data-state") +
			" items=[" + items.join(",") + "]" +
			" toast=" + JSON.stringify(document.querySelector("[data-testid=toast]")?.textContent ?? "");
	})()`))
	if err != nil {
		s = "page: (" + err.Error() + ")"
	}
	lines := b.consoleLines()
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	if len(lines) > 0 {
		s += "\nconsole (last " + fmt.Sprint(len(lines)) + "):\n  " + strings.Join(lines, "\n  ")
	}
	return s
}

// ---- API helpers the browser tests share ----

// waitAPI polls cond (which reads the API) until it holds.
func waitAPI(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// itemSel selects transcript items of a kind.
func itemSel(kind string) string { return "[data-testid=item][data-kind=" + kind + "]" }

// lastText is the textContent of the last element matching sel.
func (b *browser) lastText(sel string) string {
	b.t.Helper()
	return eval[string](b, "("+qa(sel)+".at(-1)?.textContent ?? '')")
}

// words splits text on white space.
func words(s string) []string { return strings.Fields(s) }

// hover moves the mouse over the centre of the first element matching sel
// (controls that appear on hover, such as rename and delete).
func (b *browser) hover(sel string) {
	b.t.Helper()
	b.waitJS(sel+" present", q(sel))
	xy := eval[[]float64](b, `(() => { const e = `+q(sel)+`; e.scrollIntoView({block: "nearest"});
		const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	b.must("hover "+sel, chromedp.MouseEvent(chromedp.MouseMoved, xy[0], xy[1]))
}

// frames waits for n animation frames of the page.
func (b *browser) frames(n int) {
	b.t.Helper()
	eval[chromedp.Void](b, fmt.Sprintf(`new Promise(r => { let n = %d; const f = () => (--n <= 0 ? r() : requestAnimationFrame(f)); requestAnimationFrame(f); })`, n))
}

// dropProxy forwards TCP to a server and can cut every connection at once
// and refuse new ones for a while: a network drop as the browser sees it.
type dropProxy struct {
	URL    string
	ln     net.Listener
	target string

	mu          sync.Mutex
	conns       map[net.Conn]struct{}
	refuseUntil time.Time
	cut         int
}

func newDropProxy(t *testing.T, serverURL string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{URL: "http://" + ln.Addr().String(), ln: ln, target: strings.TrimPrefix(serverURL, "http://"), conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := time.Now().Before(p.refuseUntil)
		if !refuse {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *dropProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { _, _ = io.Copy(up, c); up.Close(); close(done) }()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// drop resets every open connection and refuses new ones for d.
func (p *dropProxy) drop(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseUntil = time.Now().Add(d)
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as when a network goes away
		}
		c.Close()
		p.cut++
	}
}

func (p *dropProxy) drops() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}
