package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/browser"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// fakeDNS makes "page.test" and "rebind.test" resolve to 127.0.0.1, as a
// public name under an attacker's control would.
type fakeDNS struct{}

func (fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "page.test" || host == "rebind.test" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestBrowserToolsInTranscript: a scripted model opens a local test page
// (allowed by name in the server's configuration), reads it, clicks a
// button that changes it, types in a field and takes a screenshot, which
// the transcript carries and the files API serves; then it is refused a
// name resolving to 127.0.0.1, directly and through a redirect.
func TestBrowserToolsInTranscript(t *testing.T) {
	t.Parallel()
	exe := os.Getenv("CADUCEUS_CHROMIUM")
	if exe == "" {
		exe = browser.FindChromium()
	}
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found")
		}
		t.Skip("chromium not found")
	}
	mux := http.NewServeMux()
	var port string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Local page</title><p id="status">waiting</p>
<button onclick="document.getElementById('status').textContent='clicked'">Change</button>
<input id="name" aria-label="Name">
<button id="greet" onclick="document.getElementById('status').textContent='hi '+document.getElementById('name').value">Greet</button>`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.test:"+port+"/", http.StatusFound)
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	_, port, _ = net.SplitHostPort(site.Listener.Addr().String())
	page := "http://page.test:" + port

	call := func(name, args string) demo.Turn { return e2etest.Turn(e2etest.Call(name, args)) }
	srv := e2etest.StartServer(t, e2etest.Script(
		call("browser_open", `{"url":"`+page+`/"}`),
		call("browser_read", `{}`),
		call("browser_click", `{"ref":"e1"}`),
		call("browser_type", `{"selector":"#name","text":"Ada"}`),
		call("browser_click", `{"selector":"#greet"}`),
		call("browser_read", `{"mode":"text"}`),
		call("browser_screenshot", `{}`),
		call("browser_open", `{"url":"http://rebind.test:`+port+`/"}`),
		call("browser_open", `{"url":"`+page+`/redirect"}`),
		call("browser_close", `{}`),
		e2etest.Turn(e2etest.Text("done")),
	), e2etest.WithApprovalMode("smart"), func(c *config.Config) {
		c.Browser, c.BrowserIdle = exe, config.DefaultBrowserIdle
		c.NetAllow, c.NetResolver = []string{"page.test"}, fakeDNS{}
	})
	if cap, listed := browserOffered(t, srv); !cap.Enabled || !listed {
		t.Fatalf("browser on: capability %+v, listed %v", cap, listed)
	}
	sid := srv.NewSession(t)
	run := srv.Send(t, sid, "browse")
	srv.WaitStatus(t, run.ID, "completed")

	var got struct {
		Items []transcript.Item `json:"items"`
	}
	e2etest.Do(t, "GET", srv.URL+"/api/sessions/"+sid+"/messages", nil, &got)
	var tools []*transcript.Tool
	for _, it := range got.Items {
		if it.Kind == transcript.KindTool {
			tools = append(tools, it.Tool)
		}
	}
	if len(tools) != 10 {
		t.Fatalf("%d tool items, want 10", len(tools))
	}
	data := func(i int) browser.Data {
		var d browser.Data
		if err := json.Unmarshal(tools[i].Result, &d); err != nil {
			t.Fatalf("tool %d result: %v", i, err)
		}
		return d
	}
	for i, wantOK := range []bool{true, true, true, true, true, true, true, false, false, true} {
		if ok := tools[i].Status == event.ToolOK; ok != wantOK {
			t.Errorf("tool %d %s: status %s: %s", i, tools[i].Name, tools[i].Status, tools[i].Output)
		}
	}
	if d := data(0); d.Title != "Local page" {
		t.Errorf("open: %+v", d)
	}
	if d := data(1); !strings.Contains(d.Text, `[e1] button "Change"`) || !strings.Contains(d.Text, `textbox "Name"`) {
		t.Errorf("snapshot: %s", d.Text)
	}
	if d := data(5); !strings.Contains(d.Text, "hi Ada") {
		t.Errorf("text after click and type: %q", d.Text)
	}
	for _, i := range []int{7, 8} {
		if d := data(i); !strings.Contains(tools[i].Output, "rebind.test") || len(d.Refused) == 0 {
			t.Errorf("tool %d was not refused: %s", i, tools[i].Output)
		}
	}

	// The screenshot is in the transcript and served by the files API.
	shot := data(6).Screenshot
	if shot == nil || shot.MIME != "image/png" || shot.Kind != event.AttachImage {
		t.Fatalf("screenshot: %+v", shot)
	}
	resp, err := http.Get(srv.URL + "/api/sessions/" + sid + "/files/content?raw=1&path=" + url.QueryEscape(shot.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || !bytes.HasPrefix(body.Bytes(), []byte("\x89PNG")) || int64(body.Len()) != shot.Size {
		t.Fatalf("files API: %d, %d bytes (%q)", resp.StatusCode, body.Len(), clipBytes(body.Bytes()))
	}
}

func clipBytes(b []byte) []byte { return b[:min(len(b), 80)] }

// browserOffered reads GET /api/meta's browser capability and whether
// GET /api/tools lists browser_open.
func browserOffered(t *testing.T, srv *e2etest.Server) (cap struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason"`
}, listed bool) {
	t.Helper()
	var meta struct {
		Capabilities struct {
			Browser json.RawMessage `json:"browser"`
		} `json:"capabilities"`
	}
	e2etest.Do(t, "GET", srv.URL+"/api/meta", nil, &meta)
	if err := json.Unmarshal(meta.Capabilities.Browser, &cap); err != nil {
		t.Fatalf("meta capabilities.browser %s: %v", meta.Capabilities.Browser, err)
	}
	var raw json.RawMessage
	e2etest.Do(t, "GET", srv.URL+"/api/tools", nil, &raw)
	return cap, strings.Contains(string(raw), `"browser_open"`)
}

// TestBrowserAbsentWhenOff: without --browser the tools are not offered
// and /api/meta says why.
func TestBrowserAbsentWhenOff(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	cap, listed := browserOffered(t, srv)
	if cap.Enabled || !strings.Contains(cap.Reason, "--browser") || listed {
		t.Fatalf("browser off: capability %+v, listed %v", cap, listed)
	}
}
