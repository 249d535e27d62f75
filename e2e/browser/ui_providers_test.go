package browser

// Providers and settings (issue 16, h16-providers): a provider added in
// the browser with a key lists the fake server's models on "test", runs a
// session's turn with the key, and the key never comes back: not in any
// answer the page or a client reads, not in the page, the server log, a
// run's events or the database file; its sealed value opens only with the
// data dir's key file.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// providerKey is long and unusual so any copy of it is found.
const providerKey = "sk-uiprov-Zq8Xw2Lm9Rt4Kp7Vn3Bc6Hd1Jf5Gs0Ay-4f2a"

// headerSecret is an extra header's value, kept like the key.
const headerSecret = "hdr-uiprov-Pq2Ws8Ed4Rf6Tg0Yh"

// recordFetch keeps every answer the page's fetch calls read, from the
// first request of each document on.
const recordFetch = `window.__answers = [];
(() => { const f = window.fetch; window.fetch = async (...a) => {
  const r = await f(...a);
  const ct = r.headers.get("content-type") || "";
  if (!ct.includes("event-stream")) r.clone().text().then(t => window.__answers.push(String(a[0]) + " " + t)).catch(() => {});
  return r;
}; })();`

func TestUIProviders(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer()
	t.Cleanup(fake.Close)
	fake.RequireKey(providerKey)
	fake.SetModels("gpt-4o-mini", "llama3.2:3b")
	fake.SetDefault(openaitest.Stream(openaitest.Fixture("text")))
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	ictx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	_, err := chromedp.Call(ictx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordFetch})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.navigate("/#settings/providers")
	b.waitVisible("[data-testid=providers-page]")
	b.click("[data-testid=provider-add]")
	b.waitVisible("[data-testid=provider-dialog]")
	b.typeInto("[data-testid=provider-name]", "local")
	b.typeInto("[data-testid=provider-base-url]", fake.BaseURL())
	b.typeInto("[data-testid=provider-api-key]", providerKey)
	b.typeInto("[data-testid=provider-headers-input]", "X-Proxy-Auth: "+headerSecret)
	b.click("[data-testid=provider-save]")
	b.waitGone("[data-testid=provider-dialog]")
	row := "[data-testid=provider-row][data-name=local]"
	b.waitVisible(row)
	if got := b.attr(row, "data-source"); got != "database" {
		t.Errorf("source = %q, want database", got)
	}
	if got := b.text(row + " [data-testid=provider-key]"); got != "sk-…4f2a" {
		t.Errorf("the key shows as %q, want sk-…4f2a", got)
	}

	if got := b.text(row + " [data-testid=provider-headers]"); got != "headers X-Proxy-Auth" {
		t.Errorf("headers shown as %q", got)
	}

	// "Test" lists the fake server's models.
	b.click(row + " [data-testid=provider-test]")
	b.waitVisible(row + " [data-testid=provider-models]")
	if got := b.text(row + " [data-testid=provider-models]"); !strings.Contains(got, "gpt-4o-mini") || !strings.Contains(got, "llama3.2:3b") {
		t.Errorf("models listed = %q", got)
	}

	// Editing without typing a key keeps the stored one.
	b.click(row + " [data-testid=provider-edit]")
	b.waitVisible("[data-testid=provider-dialog]")
	if v := eval[string](b, q("[data-testid=provider-api-key]")+".value"); v != "" {
		t.Errorf("the edit dialog holds a key: %q", v)
	}
	b.clearInput("[data-testid=provider-default-model]")
	b.typeInto("[data-testid=provider-default-model]", "gpt-4o-mini")
	b.click("[data-testid=provider-save]")
	b.waitGone("[data-testid=provider-dialog]")

	// The General section offers the new provider's models; make it the
	// default model.
	b.click("[data-testid=settings-nav-general]")
	b.waitVisible("[data-testid=general-form]")
	b.clearInput("[data-testid=setting-default_model]")
	b.typeInto("[data-testid=setting-default_model]", "local/gpt-4o-mini")
	b.click("[data-testid=general-save]")
	b.waitVisible("[data-testid=general-saved]")

	// A session with no model of its own runs on it, the key reaching the
	// fake server.
	sid := s.NewSession(t)
	run := s.Send(t, sid, "hello")
	done := s.WaitRun(t, run.ID, 30*time.Second, "the run to end", func(r e2etest.RunJSON) bool { return r.Terminal })
	if done.Status != "completed" {
		t.Fatalf("run ended %s: %+v", done.Status, done.Error)
	}
	chats := 0
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			chats++
			if r.Header.Get("Authorization") != "Bearer "+providerKey || r.Header.Get("X-Proxy-Auth") != headerSecret {
				t.Errorf("a model request without the key or the header: %q, %q", r.Header.Get("Authorization"), r.Header.Get("X-Proxy-Auth"))
			}
		}
	}
	if chats == 0 {
		t.Fatal("the run did not reach the fake server")
	}
	events, _ := json.Marshal(s.Journal(t, run.ID))

	// Every answer: the page's own, and every GET a client can make about
	// the provider, its session and its run.
	answers := eval[[]string](b, "window.__answers")
	if len(answers) < 5 {
		t.Fatalf("only %d answers recorded: the recorder is not working", len(answers))
	}
	var pid string
	var list struct {
		Providers []struct{ ID, Name string } `json:"providers"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/providers", nil, &list)
	for _, p := range list.Providers {
		if p.Name == "local" {
			pid = p.ID
		}
	}
	for _, path := range []string{"/api/providers", "/api/providers/" + pid, "/api/models", "/api/settings", "/api/meta", "/api/health",
		"/api/sessions", "/api/sessions/" + sid, "/api/sessions/" + sid + "/messages", "/api/sessions/" + sid + "/runs", "/api/runs/" + run.ID} {
		answers = append(answers, path+" "+get(t, s.URL+path))
	}
	html := eval[string](b, "document.documentElement.outerHTML")
	for what, text := range map[string]string{"an answer": strings.Join(answers, "\n"), "the page": html, "the server log": s.Logs.String(), "the run's events": string(events)} {
		if strings.Contains(text, providerKey) || strings.Contains(text, providerKey[10:30]) || strings.Contains(text, headerSecret) {
			t.Errorf("the key or the header's value is in %s", what)
		}
	}

	// Not in the database file in clear; sealed, it opens with the key
	// file only.
	s.Stop()
	for _, f := range []string{"caduceus.db", "caduceus.db-wal"} {
		raw, err := os.ReadFile(filepath.Join(s.DataDir, f))
		if err != nil && f == "caduceus.db" {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(providerKey)) || bytes.Contains(raw, []byte(providerKey[10:30])) || bytes.Contains(raw, []byte(headerSecret)) {
			t.Errorf("the key is in %s in clear", f)
		}
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(s.DataDir, "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.GetProvider(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	box, err := secretbox.LoadFile(filepath.Join(s.DataDir, secretbox.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := box.Open(p.APIKeySealed, pid); err != nil || got != providerKey {
		t.Errorf("the key file does not open the sealed key: %v", err)
	}
	wrong, _ := secretbox.New(bytes.Repeat([]byte{1}, secretbox.KeySize))
	if _, err := wrong.Open(p.APIKeySealed, pid); err == nil {
		t.Error("another key opened the sealed key")
	}
	if fi, err := os.Stat(filepath.Join(s.DataDir, secretbox.KeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode().Perm(), err)
	}
}

// TestUIProvidersScreens shows the Providers and General sections at
// desktop and phone sizes, light and dark, with sources of each kind.
func TestUIProvidersScreens(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer()
	t.Cleanup(fake.Close)
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))),
		e2etest.WithEnv(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-screens-000000000000-7c1d", "CADUCEUS_APPROVAL_MODE": "smart"}))
	if c := e2etest.Do(t, "POST", s.URL+"/api/providers", map[string]any{"name": "ollama-box", "kind": "openai",
		"base_url": fake.BaseURL(), "api_key": "sk-local-screens-0000000000-9e3f", "models": []string{"llama3.2:3b", "qwen3:8b"}}, nil); c != http.StatusCreated {
		t.Fatalf("add provider: %d", c)
	}
	dir := screenshotDir(t)
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		b := openBrowser(t, s, withWindow(w.w, w.h))
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			for _, sec := range []string{"providers", "general"} {
				b.navigate("/#settings/" + sec)
				b.waitVisible("[data-testid=" + sec + "-page]")
				if sec == "providers" {
					b.waitVisible("[data-testid=provider-row][data-source=env]")
				} else {
					b.waitVisible("[data-testid=setting-fixed-approval_mode]")
				}
				b.frames(3)
				t.Logf("screenshot: %s", b.screenshot(dir, sec+"-"+w.name+"-"+scheme))
				if sw := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
					t.Errorf("%s %s %s: the page scrolls sideways (%d px in %d)", sec, w.name, scheme, sw[0], sw[1])
				}
			}
		}
		if w.name == "phone" {
			b.navigate("/#settings/providers")
			b.waitVisible("[data-testid=provider-row][data-source=database]")
			b.click("[data-testid=provider-row][data-source=database] [data-testid=provider-edit]")
			b.waitVisible("[data-testid=provider-dialog]")
			b.frames(3)
			t.Logf("screenshot: %s", b.screenshot(dir, "provider-dialog-phone"))
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(b)
}

// fakeNotification records the notifications the page shows, as if the
// person had allowed them.
const fakeNotification = `window.__notes = [];
window.Notification = class { constructor(t) { window.__notes.push(t); } close() {}
  static get permission() { return "granted"; } static requestPermission() { return Promise.resolve("granted"); } };`

// The General section's notification settings decide which requests call
// the person: approvals off, a question still notifies and an approval
// does not.
func TestUINotificationSettings(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("approve", e2etest.Turn(e2etest.Call("run_command", `{"command":"echo hi"}`)), e2etest.Turn(e2etest.Text("ok"))),
		e2etest.Scenario("ask", e2etest.Turn(e2etest.Call("clarify", `{"question":"Which colour?"}`)), e2etest.Turn(e2etest.Text("ok"))),
	))
	off := map[string]any{"approvals": false, "questions": true, "run_failed": false, "run_done": false}
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/settings", map[string]any{"notifications": off}, nil); c != http.StatusOK {
		t.Fatalf("patch settings: %d", c)
	}
	b := openBrowser(t, s)
	ictx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	_, err := chromedp.Call(ictx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeNotification})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.navigate("/#settings/general")
	b.waitVisible("[data-testid=general-form]")
	if eval[bool](b, q("[data-testid=setting-n-approvals]")+".checked") {
		t.Error("the approvals box is ticked though the setting is off")
	}
	// Both requests arrive while no session is open.
	b.navigate("/")
	b.waitVisible("[data-testid=composer]")
	s.Send(t, s.NewSession(t), "approve")
	b.waitJS("needs-you count 1", q("[data-testid=needs-you]")+"?.dataset.count === '1'")
	s.Send(t, s.NewSession(t), "ask")
	b.waitJS("needs-you count 2", q("[data-testid=needs-you]")+"?.dataset.count === '2'")
	b.waitJS("the question's notification", "window.__notes.length >= 1")
	notes := eval[[]string](b, "window.__notes")
	if len(notes) != 1 || !strings.Contains(notes[0], "Question") {
		t.Fatalf("notifications = %q, want only the question's", notes)
	}
}
