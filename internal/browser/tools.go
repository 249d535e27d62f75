package browser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/netguard"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Names of the browser tools.
const (
	NameOpen       = "browser_open"
	NameRead       = "browser_read"
	NameClick      = "browser_click"
	NameType       = "browser_type"
	NameScroll     = "browser_scroll"
	NameScreenshot = "browser_screenshot"
	NameClose      = "browser_close"
)

// Bounds of browser_read.
const (
	DefaultReadChars = 20000
	MaxReadChars     = 100000
)

// MaxScreenshotBytes bounds one screenshot file: a full-page capture of
// an endless page would otherwise fill the workspace.
const MaxScreenshotBytes = 16 << 20

// ScreenshotDir is where screenshots are saved, relative to the session's
// workspace, next to the composer's uploads.
const ScreenshotDir = ".caduceus/screenshots"

// Data is the structured result of every browser tool (seed 002).
type Data struct {
	OK    bool   `json:"ok"`
	URL   string `json:"url,omitempty"` // the page after the call
	Title string `json:"title,omitempty"`
	// Mode of browser_read: "text" or "snapshot"; Text is what was read.
	Mode      string `json:"mode,omitempty"`
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Screenshot of browser_screenshot: a PNG saved in the workspace.
	Screenshot *event.Attachment `json:"screenshot,omitempty"`
	// Refused lists what the network guard refused during the call.
	Refused []string `json:"refused,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Tools returns the browser tools over m.
func (m *Manager) Tools() []tool.Tool {
	return []tool.Tool{
		&browserTool{m: m, name: NameOpen, effect: tool.EffectNetwork, schema: openSchema, run: m.open,
			desc: "Open a web page in this session's headless browser (started on first use). Returns the final URL and title; " +
				"read it with browser_read. Private and local addresses are refused unless the configuration allows them."},
		&browserTool{m: m, name: NameRead, schema: fmt.Sprintf(readSchema, MaxReadChars, DefaultReadChars), run: m.read,
			desc: "Read the open page: mode \"snapshot\" (default) outlines headings, links, buttons and fields, each control with " +
				"a ref such as e3 for browser_click and browser_type; mode \"text\" returns the visible text."},
		&browserTool{m: m, name: NameClick, schema: targetSchema(""), run: m.click,
			desc: "Click an element of the open page, by ref from the latest browser_read snapshot or by CSS selector."},
		&browserTool{m: m, name: NameType, schema: targetSchema(typeProps), run: m.typeText,
			desc: "Type text into a field of the open page (by ref or CSS selector), replacing its value; submit presses Enter after."},
		&browserTool{m: m, name: NameScroll, schema: scrollSchema, run: m.scroll,
			desc: "Scroll the open page up or down by a screen, or to the top or bottom."},
		&browserTool{m: m, name: NameScreenshot, schema: shotSchema, run: m.screenshot,
			desc: "Take a PNG screenshot of the open page (the window, or the full page); it is shown to the person in the transcript."},
		&browserTool{m: m, name: NameClose, schema: `{"type":"object","properties":{},"additionalProperties":false}`, run: m.closeTool,
			desc: "Close this session's browser. It also closes by itself after a while unused."},
	}
}

const openSchema = `{"type":"object","properties":{"url":{"type":"string","minLength":1,"description":"The http or https URL to open."}},"required":["url"],"additionalProperties":false}`
const readSchema = `{"type":"object","properties":{"mode":{"type":"string","enum":["snapshot","text"]},"max_chars":{"type":"integer","minimum":1,"maximum":%d,"description":"Default %d."}},"additionalProperties":false}`
const typeProps = `,"text":{"type":"string"},"submit":{"type":"boolean"}`
const scrollSchema = `{"type":"object","properties":{"direction":{"type":"string","enum":["down","up","top","bottom"]}},"required":["direction"],"additionalProperties":false}`
const shotSchema = `{"type":"object","properties":{"full_page":{"type":"boolean"}},"additionalProperties":false}`

func targetSchema(extra string) string {
	req := ""
	if extra != "" {
		req = `,"required":["text"]`
	}
	return `{"type":"object","properties":{"ref":{"type":"string","description":"A ref from browser_read's snapshot, such as e3."},` +
		`"selector":{"type":"string","description":"A CSS selector."}` + extra + `}` + req + `,"additionalProperties":false}`
}

// browserTool adapts one action to tool.Tool.
type browserTool struct {
	m          *Manager
	name, desc string
	schema     string
	effect     tool.Effect
	run        func(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error)
}

func (t *browserTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{Name: t.name, Description: t.desc, Parameters: json.RawMessage(t.schema)}
}

func (t *browserTool) Label(args json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	verb := strings.TrimPrefix(t.name, "browser_")
	for _, k := range []string{"url", "ref", "selector", "direction", "mode"} {
		if v, ok := a[k].(string); ok && v != "" {
			return "browser " + verb + " " + clip(v, 120)
		}
	}
	return "browser " + verb
}

// Intent: opening a page is a network call the policy judges by its URL.
// The other actions stay on the page already opened, and the guard
// confines where that page may lead; they change nothing on this machine.
func (t *browserTool) Intent(args json.RawMessage) tool.Intent {
	if t.name != NameOpen {
		return tool.Intent{Effect: tool.EffectNone, Action: t.Label(args)}
	}
	var a openArgs
	if _, err := parseOpen(args, &a); err != nil {
		return tool.Intent{Effect: tool.EffectNetwork, Action: "browser_open " + clip(string(args), 500), Invalid: true}
	}
	return tool.Intent{Effect: tool.EffectNetwork, Action: "open " + a.URL + " in the browser", URL: a.URL}
}

func (t *browserTool) Run(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	if env.SessionID == "" {
		return fail(Data{}, "the browser needs a session"), nil
	}
	return t.run(ctx, env, args)
}

// decode parses arguments strictly, like the built-in tools.
func decode(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

func fail(d Data, msg string) tool.Result {
	d.OK, d.Error = false, msg
	return tool.Result{Status: event.ToolError, Output: msg, Data: d}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// act runs f on the session's tab with the action timeout; the tab is
// held for the call so two calls do not race on one page.
func (m *Manager) act(ctx context.Context, env tool.Env, start bool, f func(ctx context.Context, s *session) (tool.Result, error)) (tool.Result, error) {
	var s *session
	if start {
		var err error
		if s, err = m.session(env.SessionID); err != nil {
			return fail(Data{}, fmt.Sprintf("cannot start the browser: %v", err)), nil
		}
	} else if s = m.existing(env.SessionID); s == nil {
		return fail(Data{}, "no page is open (none was, or the browser closed or stopped): call browser_open first"), nil
	}
	defer s.end() // session and existing counted it busy
	s.op.Lock()
	defer s.op.Unlock()
	// The tab's context carries chromedp's state; the call's deadline and
	// cancellation are joined onto it.
	tctx, cancel := context.WithTimeout(s.tab, m.cfg.ActionTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	res, err := f(tctx, s)
	if err != nil {
		msg := err.Error()
		switch {
		case ctx.Err() != nil:
			return tool.Result{Status: event.ToolCancelled, Output: "cancelled", Data: Data{Error: "cancelled"}}, nil
		case errors.Is(err, context.DeadlineExceeded):
			return tool.Result{Status: event.ToolTimeout, Output: fmt.Sprintf("the page did not answer within %s", m.cfg.ActionTimeout),
				Data: Data{Error: "timeout"}}, nil
		}
		d := Data{Refused: s.takeRefused()}
		if len(d.Refused) > 0 {
			msg += "; refused by the network guard: " + strings.Join(d.Refused, "; ")
		}
		return fail(d, msg), nil
	}
	return res, nil
}

type openArgs struct {
	URL string `json:"url"`
}

func parseOpen(raw json.RawMessage, a *openArgs) (*url.URL, error) {
	if err := decode(raw, a); err != nil {
		return nil, err
	}
	a.URL = strings.TrimSpace(a.URL)
	u, err := url.Parse(a.URL)
	switch {
	case a.URL == "":
		return nil, errors.New("url is required")
	case err != nil:
		return nil, fmt.Errorf("url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("only http and https URLs can be opened, not %q", a.URL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("url %q has no host", a.URL)
	}
	return u, nil
}

// page reads the tab's URL and title into d.
func page(ctx context.Context, d *Data) error {
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return err
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		return err
	}
	d.URL, d.Title = loc, title
	return nil
}

// done ends a call that changed or read the page: what the guard refused
// meanwhile is reported to the model and in the data.
func done(ctx context.Context, s *session, d Data, output string) (tool.Result, error) {
	if err := page(ctx, &d); err != nil {
		return tool.Result{}, err
	}
	d.Refused = s.takeRefused()
	d.OK = true
	var b strings.Builder
	fmt.Fprintf(&b, "[%s — %q]", d.URL, d.Title)
	if output != "" {
		b.WriteString("\n\n" + output)
	}
	if len(d.Refused) > 0 {
		fmt.Fprintf(&b, "\n\n[the network guard refused %d request(s): %s]", len(d.Refused), strings.Join(d.Refused, "; "))
	}
	return tool.Result{Status: event.ToolOK, Output: b.String(), Data: d}, nil
}

func (m *Manager) open(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a openArgs
	u, err := parseOpen(args, &a)
	if err != nil {
		return fail(Data{}, err.Error()), nil
	}
	// Checked before the browser starts, for a clear answer; the proxy
	// checks again, and checks every request the page then makes.
	if _, err := m.cfg.Guard.Resolve(ctx, u.Hostname()); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return fail(Data{URL: a.URL, Refused: []string{err.Error()}}, "refused: "+err.Error()), nil
		}
		return fail(Data{URL: a.URL}, fmt.Sprintf("cannot open %s: %v", a.URL, err)), nil
	}
	return m.act(ctx, env, true, func(ctx context.Context, s *session) (tool.Result, error) {
		s.takeRefused()
		resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(u.String()))
		if err != nil {
			return tool.Result{}, err
		}
		if resp != nil && resp.Headers[netguard.RefusedHeader] != nil {
			d := Data{URL: a.URL, Refused: s.takeRefused()}
			_ = page(ctx, &d)
			return fail(d, "refused by the network guard: "+strings.Join(d.Refused, "; ")), nil
		}
		out := ""
		if resp != nil && resp.Status >= 400 {
			out = fmt.Sprintf("HTTP %d %s", resp.Status, resp.StatusText)
		}
		return done(ctx, s, Data{}, out)
	})
}

type readArgs struct {
	Mode     string `json:"mode"`
	MaxChars int    `json:"max_chars"`
}

func (m *Manager) read(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a readArgs
	if err := decode(args, &a); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	if a.Mode == "" {
		a.Mode = "snapshot"
	}
	if a.Mode != "snapshot" && a.Mode != "text" {
		return fail(Data{}, `mode must be "snapshot" or "text"`), nil
	}
	limit := DefaultReadChars
	if a.MaxChars > 0 {
		limit = min(a.MaxChars, MaxReadChars)
	}
	return m.act(ctx, env, false, func(ctx context.Context, s *session) (tool.Result, error) {
		js := fmt.Sprintf(snapshotJS, limit)
		if a.Mode == "text" {
			js = fmt.Sprintf(textJS, limit, limit)
		}
		r, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
			Text      string `json:"text"`
			Truncated bool   `json:"truncated"`
		}](js))
		if err != nil {
			return tool.Result{}, err
		}
		out := r.Text
		if out == "" {
			out = "(the page is empty)"
		}
		if r.Truncated {
			out += fmt.Sprintf("\n\n[truncated at %d characters]", limit)
		}
		return done(ctx, s, Data{Mode: a.Mode, Text: r.Text, Truncated: r.Truncated}, out)
	})
}

type targetArgs struct {
	Ref      string `json:"ref"`
	Selector string `json:"selector"`
	Text     string `json:"text"`
	Submit   bool   `json:"submit"`
}

var refPattern = regexp.MustCompile(`^e[0-9]{1,6}$`)

// selector turns a ref or a CSS selector into the CSS selector to query.
func (a targetArgs) selector() (string, error) {
	switch {
	case a.Ref != "" && a.Selector != "":
		return "", errors.New("give ref or selector, not both")
	case a.Ref != "":
		if !refPattern.MatchString(a.Ref) {
			return "", fmt.Errorf("ref %q is not a ref from browser_read's snapshot (like e3)", a.Ref)
		}
		return `[data-caduceus-ref="` + a.Ref + `"]`, nil
	case strings.TrimSpace(a.Selector) != "":
		return a.Selector, nil
	}
	return "", errors.New("ref or selector is required")
}

// present fails fast when nothing matches, instead of letting chromedp
// wait for the element until the timeout.
func present(ctx context.Context, sel string) error {
	q, _ := json.Marshal(sel)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { let e; try { e = document.querySelector(`+string(q)+
		`) } catch (err) { return "invalid" } return !e ? "none" : e.getClientRects().length ? "ok" : "hidden" })()`))
	if err != nil {
		return err
	}
	switch state {
	case "none":
		return fmt.Errorf("no element matches %s (the page may have changed: read it again)", sel)
	case "hidden":
		return fmt.Errorf("the element %s is not visible", sel)
	case "invalid":
		return fmt.Errorf("%q is not a valid CSS selector", sel)
	}
	return nil
}

func (m *Manager) click(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a targetArgs
	if err := decode(args, &a); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	if a.Text != "" || a.Submit {
		return fail(Data{}, "browser_click takes ref or selector only"), nil
	}
	sel, err := a.selector()
	if err != nil {
		return fail(Data{}, err.Error()), nil
	}
	return m.act(ctx, env, false, func(ctx context.Context, s *session) (tool.Result, error) {
		if err := present(ctx, sel); err != nil {
			return fail(Data{}, err.Error()), nil
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			return tool.Result{}, err
		}
		return done(ctx, s, Data{}, "clicked "+sel)
	})
}

func (m *Manager) typeText(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a targetArgs
	if err := decode(args, &a); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	sel, err := a.selector()
	if err != nil {
		return fail(Data{}, err.Error()), nil
	}
	return m.act(ctx, env, false, func(ctx context.Context, s *session) (tool.Result, error) {
		if err := present(ctx, sel); err != nil {
			return fail(Data{}, err.Error()), nil
		}
		// The old value goes first, so the text replaces it; keys are then
		// sent one by one, as a person's would be, so the page's handlers run.
		q, _ := json.Marshal(sel)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.querySelector(`+string(q)+`); e.focus(); if ('value' in e) e.value = ''; return true })()`)); err != nil {
			return tool.Result{}, err
		}
		steps := []chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS(sel), a.Text)}
		if a.Submit {
			steps = append(steps, chromedp.SendKeys(chromedp.CSS(sel), "\r"), chromedp.WaitReady(chromedp.CSS("body")))
		}
		if err := chromedp.Do(ctx, steps...); err != nil {
			return tool.Result{}, err
		}
		return done(ctx, s, Data{}, fmt.Sprintf("typed %d characters into %s", len([]rune(a.Text)), sel))
	})
}

func (m *Manager) scroll(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a struct {
		Direction string `json:"direction"`
	}
	if err := decode(args, &a); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	js, ok := map[string]string{
		"down":   `window.scrollBy(0, innerHeight * 0.8)`,
		"up":     `window.scrollBy(0, -innerHeight * 0.8)`,
		"top":    `window.scrollTo(0, 0)`,
		"bottom": `window.scrollTo(0, document.documentElement.scrollHeight)`,
	}[a.Direction]
	if !ok {
		return fail(Data{}, `direction must be "down", "up", "top" or "bottom"`), nil
	}
	return m.act(ctx, env, false, func(ctx context.Context, s *session) (tool.Result, error) {
		pos, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { `+js+`; return [scrollY, document.documentElement.scrollHeight, innerHeight] })()`))
		if err != nil {
			return tool.Result{}, err
		}
		return done(ctx, s, Data{}, fmt.Sprintf("scrolled %s: at %.0f of %.0f pixels (window %.0f)", a.Direction, pos[0], pos[1], pos[2]))
	})
}

func (m *Manager) screenshot(ctx context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	var a struct {
		FullPage bool `json:"full_page"`
	}
	if err := decode(args, &a); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	if env.Workspace == "" {
		return fail(Data{}, "no workspace to save the screenshot in"), nil
	}
	return m.act(ctx, env, false, func(ctx context.Context, s *session) (tool.Result, error) {
		shot := chromedp.CaptureScreenshot()
		if a.FullPage {
			shot = chromedp.FullScreenshot(100)
		}
		png, err := chromedp.Run(ctx, shot)
		if err != nil {
			return tool.Result{}, err
		}
		if len(png) > MaxScreenshotBytes {
			return fail(Data{}, fmt.Sprintf("the screenshot is %d bytes, over the %d byte limit: take the window instead of the full page", len(png), MaxScreenshotBytes)), nil
		}
		att, err := save(env.Workspace, png, s.nextShot())
		if err != nil {
			return fail(Data{}, err.Error()), nil
		}
		return done(ctx, s, Data{Screenshot: &att}, fmt.Sprintf("screenshot saved as %s (%d bytes); the person sees it in the transcript", att.Path, att.Size))
	})
}

// save writes a screenshot under the workspace's ScreenshotDir.
func save(workspace string, png []byte, n int) (event.Attachment, error) {
	dir := filepath.Join(workspace, filepath.FromSlash(ScreenshotDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return event.Attachment{}, fmt.Errorf("save screenshot: %w", err)
	}
	name := fmt.Sprintf("%s-%d.png", time.Now().UTC().Format("20060102-150405"), n)
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		return event.Attachment{}, fmt.Errorf("save screenshot: %w", err)
	}
	sum := sha256.Sum256(png)
	return event.Attachment{Path: ScreenshotDir + "/" + name, Name: name, MIME: "image/png", Size: int64(len(png)),
		SHA256: hex.EncodeToString(sum[:]), Kind: event.AttachImage}, nil
}

func (m *Manager) closeTool(_ context.Context, env tool.Env, args json.RawMessage) (tool.Result, error) {
	if err := decode(args, &struct{}{}); err != nil {
		return fail(Data{}, err.Error()), nil
	}
	if !m.CloseSession(env.SessionID) {
		return tool.Result{Status: event.ToolOK, Output: "no browser was open", Data: Data{OK: true}}, nil
	}
	return tool.Result{Status: event.ToolOK, Output: "browser closed", Data: Data{OK: true}}, nil
}

// Specs describes the browser tools without a browser, for the web tier's
// list of the tools profiles may enable.
func Specs() []provider.ToolSpec {
	var specs []provider.ToolSpec
	for _, t := range (&Manager{}).Tools() {
		specs = append(specs, t.Spec())
	}
	return specs
}
