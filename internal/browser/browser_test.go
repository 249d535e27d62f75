package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/netguard"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// chromium finds Debian's Chromium (or $CADUCEUS_CHROMIUM); missing, the
// tests skip on a developer machine and fail in CI.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CADUCEUS_CHROMIUM"); p != "" {
		return p
	}
	if p := FindChromium(); p != "" {
		return p
	}
	if os.Getenv("CI") == "" {
		t.Skip("chromium not found (apt-get install chromium, or set CADUCEUS_CHROMIUM)")
	}
	t.Fatal("chromium not found")
	return ""
}

// hosts resolves names from a map: "rebind.test" stands for a public name
// whose DNS answers 127.0.0.1; "page.test", the test site, resolves there
// too and is allowed by name.
type hosts map[string]string

func (h hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

const testPage = `<!doctype html><html><head><title>Test page</title></head><body>
<h1>Hello browser</h1>
<p id="status">waiting</p>
<button id="go" onclick="document.getElementById('status').textContent='clicked'">Change</button>
<label for="name">Your name</label><input id="name">
<button id="greet" onclick="document.getElementById('status').textContent='hi '+document.getElementById('name').value">Greet</button>
<a href="/second">Second page</a>
</body></html>`

func testSite(t *testing.T) (string, string) {
	t.Helper()
	mux := http.NewServeMux()
	var port string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, testPage) })
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Second</title><p>second page</p>`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.test:"+port+"/", http.StatusFound)
	})
	mux.HandleFunc("/embed", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>Embed</title><img src="http://rebind.test:%s/pixel.png" alt="pixel">`, port)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return "http://page.test:" + port, port
}

func newManager(t *testing.T, allow []string, idle time.Duration) *Manager {
	t.Helper()
	g, err := netguard.New(netguard.Config{Allow: allow, Resolver: hosts{"rebind.test": "127.0.0.1", "page.test": "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{ExecPath: chromium(t), Guard: g, IdleTimeout: idle, ActionTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

type caller struct {
	t     *testing.T
	tools map[string]tool.Tool
	env   tool.Env
}

func newCaller(t *testing.T, m *Manager) *caller {
	c := &caller{t: t, tools: map[string]tool.Tool{}, env: tool.Env{SessionID: "s1", Workspace: t.TempDir()}}
	for _, tl := range m.Tools() {
		c.tools[tl.Spec().Name] = tl
		if !json.Valid(tl.Spec().Parameters) {
			t.Fatalf("%s: schema is not JSON", tl.Spec().Name)
		}
	}
	return c
}

func (c *caller) call(name, args string) (tool.Result, Data) {
	c.t.Helper()
	res, err := c.tools[name].Run(context.Background(), c.env, json.RawMessage(args))
	if err != nil {
		c.t.Fatalf("%s %s: %v", name, args, err)
	}
	d, _ := res.Data.(Data)
	return res, d
}

func (c *caller) ok(name, args string) (tool.Result, Data) {
	c.t.Helper()
	res, d := c.call(name, args)
	if res.Status != event.ToolOK {
		c.t.Fatalf("%s %s: %s: %s", name, args, res.Status, res.Output)
	}
	return res, d
}

// refOf finds the ref of the control named name in a snapshot.
func refOf(t *testing.T, snapshot, role, name string) string {
	t.Helper()
	m := regexp.MustCompile(`\[(e\d+)\] ` + role + ` "` + regexp.QuoteMeta(name) + `"`).FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no %s %q in snapshot:\n%s", role, name, snapshot)
	}
	return m[1]
}

func TestBrowserTools(t *testing.T) {
	site, _ := testSite(t)
	m := newManager(t, []string{"page.test"}, 0)
	c := newCaller(t, m)

	if res, _ := c.call(NameRead, `{}`); res.Status != event.ToolError || !strings.Contains(res.Output, "browser_open first") {
		t.Fatalf("read before open: %s %s", res.Status, res.Output)
	}
	_, d := c.ok(NameOpen, `{"url": "`+site+`/"}`)
	if d.Title != "Test page" {
		t.Fatalf("title %q", d.Title)
	}
	res, d := c.ok(NameRead, `{"mode": "snapshot"}`)
	if !strings.Contains(d.Text, `heading "Hello browser" level=1`) || !strings.Contains(d.Text, `text "waiting"`) {
		t.Fatalf("snapshot:\n%s", res.Output)
	}
	c.ok(NameClick, `{"ref": "`+refOf(t, d.Text, "button", "Change")+`"}`)
	if _, d := c.ok(NameRead, `{"mode": "text"}`); !strings.Contains(d.Text, "clicked") || strings.Contains(d.Text, "waiting") {
		t.Fatalf("after click: %q", d.Text)
	}

	_, d = c.ok(NameRead, `{}`)
	c.ok(NameType, `{"ref": "`+refOf(t, d.Text, "textbox", "Your name")+`", "text": "Ada"}`)
	c.ok(NameClick, `{"selector": "#greet"}`)
	if _, d := c.ok(NameRead, `{"mode": "text"}`); !strings.Contains(d.Text, "hi Ada") {
		t.Fatalf("after typing: %q", d.Text)
	}
	if res, _ := c.call(NameClick, `{"selector": "#nothing"}`); res.Status != event.ToolError || !strings.Contains(res.Output, "no element") {
		t.Fatalf("missing element: %s %s", res.Status, res.Output)
	}
	if res, _ := c.call(NameClick, `{"selector": "[["}`); res.Status != event.ToolError || !strings.Contains(res.Output, "not a valid CSS selector") {
		t.Fatalf("bad selector: %s %s", res.Status, res.Output)
	}
	if res, _ := c.call(NameClick, `{"ref": "x; alert(1)"}`); res.Status != event.ToolError {
		t.Fatalf("bad ref: %s %s", res.Status, res.Output)
	}
	if _, d := c.ok(NameRead, `{"mode": "text", "max_chars": 5}`); !d.Truncated || len(d.Text) != 5 {
		t.Fatalf("bounded read: %+v", d)
	}
	c.ok(NameScroll, `{"direction": "bottom"}`)

	_, d = c.ok(NameScreenshot, `{}`)
	if d.Screenshot == nil || d.Screenshot.MIME != "image/png" || d.Screenshot.Kind != event.AttachImage {
		t.Fatalf("screenshot data: %+v", d.Screenshot)
	}
	png, err := os.ReadFile(filepath.Join(c.env.Workspace, filepath.FromSlash(d.Screenshot.Path)))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || int64(len(png)) != d.Screenshot.Size {
		t.Fatalf("screenshot file: %v, %d bytes", err, len(png))
	}

	_, d = c.ok(NameClick, `{"ref": "`+refOf(t, mustSnapshot(c), "link", "Second page")+`"}`)
	if d.Title != "Second" {
		t.Fatalf("link click led to %q", d.Title)
	}
	c.ok(NameClose, `{}`)
	if got := m.Running(); len(got) != 0 {
		t.Fatalf("running after close: %v", got)
	}
}

func mustSnapshot(c *caller) string {
	_, d := c.ok(NameRead, `{}`)
	return d.Text
}

// TestBrowserConfinement: a name that resolves to 127.0.0.1 is refused,
// opened directly, through a redirect from an allowed page, or as a
// page's subresource; allowed by name, it opens.
func TestBrowserConfinement(t *testing.T) {
	site, port := testSite(t)
	m := newManager(t, []string{"page.test"}, 0)
	c := newCaller(t, m)

	res, d := c.call(NameOpen, `{"url": "http://rebind.test:`+port+`/"}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "refused") || len(d.Refused) != 1 {
		t.Fatalf("direct: %s %s", res.Status, res.Output)
	}
	if m.Running() != nil && len(m.Running()) != 0 {
		t.Fatalf("a refused open started the browser")
	}
	res, d = c.call(NameOpen, `{"url": "`+site+`/redirect"}`)
	if res.Status != event.ToolError || !strings.Contains(res.Output, "rebind.test") || len(d.Refused) == 0 {
		t.Fatalf("redirect: %s %s", res.Status, res.Output)
	}
	if _, d := c.ok(NameRead, `{"mode": "text"}`); strings.Contains(d.Text, "Hello browser") {
		t.Fatalf("the redirect target was loaded: %q", d.Text)
	}
	res, d = c.ok(NameOpen, `{"url": "`+site+`/embed"}`)
	if len(d.Refused) == 0 || !strings.Contains(res.Output, "network guard refused") {
		t.Fatalf("subresource: %s %+v", res.Output, d)
	}

	allowed := newCaller(t, newManager(t, []string{"rebind.test"}, 0))
	if _, d := allowed.ok(NameOpen, `{"url": "http://rebind.test:`+port+`/"}`); d.Title != "Test page" {
		t.Fatalf("allowed by name: %+v", d)
	}
}

// TestBrowserClosesWhenIdle: the reaper closes a browser nobody used for
// the idle timeout, and the next call says so.
func TestBrowserClosesWhenIdle(t *testing.T) {
	site, _ := testSite(t)
	m := newManager(t, []string{"page.test"}, 300*time.Millisecond)
	c := newCaller(t, m)
	c.ok(NameOpen, `{"url": "`+site+`/"}`)
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Running()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle browser was not closed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res, _ := c.call(NameRead, `{}`); res.Status != event.ToolError {
		t.Fatalf("read after idle close: %s", res.Output)
	}
}

// TestBrowserRestartsAfterACrash: Chromium killed under a session is
// noticed; reading says no page is open, and the next open starts a new
// browser that works.
func TestBrowserRestartsAfterACrash(t *testing.T) {
	site, _ := testSite(t)
	m := newManager(t, []string{"page.test"}, 0)
	c := newCaller(t, m)
	c.ok(NameOpen, `{"url": "`+site+`/"}`)
	s := m.existing("s1")
	if s == nil {
		t.Fatal("no browser after open")
	}
	s.end()
	proc := chromedp.FromContext(s.tab).Browser.Process()
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.alive() {
		if time.Now().After(deadline) {
			t.Fatal("the killed browser still looks alive")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res, _ := c.call(NameRead, `{}`); res.Status != event.ToolError || !strings.Contains(res.Output, "browser_open first") {
		t.Fatalf("read after the crash: %s %s", res.Status, res.Output)
	}
	if _, d := c.ok(NameOpen, `{"url": "`+site+`/second"}`); d.Title != "Second" {
		t.Fatalf("open after the crash: %+v", d)
	}
}
