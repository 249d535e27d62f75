package browser

// Attachments: files picked, pasted or dropped on the composer are
// uploaded into the session's workspace, shown as chips, sent with the
// message; an image reaches an OpenAI-compatible server as an image part,
// the transcript shows it as a thumbnail live and after a reload, and a
// model without image input refuses it before any run starts.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
)

// squarePNG is a w×h PNG of one colour.
func squarePNG(t *testing.T, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// textSSE is a Chat Completions stream answering text.
func textSSE(text string) []byte {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	t, _ := json.Marshal(text)
	return []byte(chunk(`{"role":"assistant","content":`+string(t)+`}`, "") + chunk(`{}`, "stop") + "data: [DONE]\n\n")
}

// jsFile is a JavaScript File of content named name.
func jsFile(name, mime string, content []byte) string {
	return fmt.Sprintf("new File([Uint8Array.from(atob(%s), c => c.charCodeAt(0))], %s, {type: %s})",
		js(base64.StdEncoding.EncodeToString(content)), js(name), js(mime))
}

func TestUIAttach(t *testing.T) {
	t.Parallel()
	llm := openaitest.NewServer()
	t.Cleanup(llm.Close)
	llm.SetModels("gpt-4o", "tiny")
	llm.Enqueue(openaitest.Stream(textSSE("A red square and your notes.")))
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("demo"))),
		e2etest.WithEnv(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.BaseURL()}))
	sid := s.NewSession(t)
	setModel := func(ref string) {
		if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+sid, map[string]any{"model": ref}, nil); c != http.StatusOK {
			t.Fatalf("PATCH model %s: %d", ref, c)
		}
	}
	setModel("openai/gpt-4o") // a built-in model that takes images

	red := squarePNG(t, 64, 48, color.RGBA{220, 30, 30, 255})
	blue := squarePNG(t, 32, 32, color.RGBA{30, 60, 220, 255})
	pick := filepath.Join(t.TempDir(), "red square.png")
	if err := os.WriteFile(pick, red, 0o644); err != nil {
		t.Fatal(err)
	}

	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	b.waitVisible("[data-testid=attach]")

	// Pick, paste and drop.
	b.must("pick a file", chromedp.SetUploadFiles("[data-testid=attach-input]", []string{pick}))
	b.waitJS("the picked chip", qa("[data-testid=attach-chip][data-state=ready]")+".length === 1")
	eval[bool](b, `(() => { const dt = new DataTransfer(); dt.items.add(`+jsFile("pasted.png", "image/png", blue)+`);
		document.querySelector("textarea[data-testid=composer]").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true})); return true })()`)
	eval[bool](b, `(() => { const dt = new DataTransfer(); dt.items.add(`+jsFile("notes.txt", "text/plain", []byte("numbers: 1 2 3\n"))+`);
		const el = document.querySelector("[data-testid=composer-wrap]");
		el.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
		el.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true})); return true })()`)
	b.waitJS("three chips uploaded", qa("[data-testid=attach-chip][data-state=ready]")+".length === 3")
	kinds := eval[[]string](b, qa("[data-testid=attach-chip]")+".map(e => e.dataset.kind)")
	if strings.Join(kinds, ",") != "image,image,file" {
		t.Errorf("chip kinds %v", kinds)
	}
	// Removed before sending: the pasted image.
	b.click("[data-testid=attach-chip]:nth-child(2) [data-testid=attach-remove]")
	b.waitJS("two chips", qa("[data-testid=attach-chip]")+".length === 2")
	b.typeInto(composerSel, "What is in this picture?")
	dir := screenshotDir(t)
	t.Logf("screenshot: %s", b.screenshot(dir, "attach-composer-desktop-light"))
	b.press("Enter")
	b.waitJS("the chips to clear after sending", qa("[data-testid=attach-chip]")+".length === 0")

	// The transcript shows the message's attachments, the image loaded.
	thumbs := "[data-testid=message-attachment] img[data-testid=attachment-img]"
	loaded := qa(thumbs) + ".length === 1 && " + qa(thumbs) + ".every(i => i.complete && i.naturalWidth === 64)"
	b.waitJS("the thumbnail", loaded)
	b.waitJS("the answer", "document.body.innerText.includes('A red square and your notes.')")
	if n := b.count("[data-testid=message-attachment]"); n != 2 {
		t.Errorf("%d attachments shown, want 2", n)
	}

	// The fake server got the image as an image part, the file by name.
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	reqs := llm.Requests()
	var chat *openaitest.Request
	for i := range reqs {
		if reqs[i].Path == "/v1/chat/completions" {
			chat = &reqs[i]
		}
	}
	if chat == nil {
		t.Fatal("the fake server got no chat request")
	}
	if err := chat.Decode(&body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(last.Content, &parts); err != nil {
		t.Fatalf("the user message is not parts: %s", last.Content)
	}
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(red)
	var gotImage, gotText bool
	for _, p := range parts {
		gotImage = gotImage || p.Type == "image_url" && p.ImageURL.URL == want
		gotText = gotText || p.Type == "text" && strings.Contains(p.Text, "What is in this picture?") &&
			strings.Contains(p.Text, "Attached: .caduceus/uploads/notes.txt") && strings.Contains(p.Text, "Attached image: .caduceus/uploads/red square.png")
	}
	if !gotImage || !gotText {
		t.Fatalf("image part %v, text part %v in %s", gotImage, gotText, last.Content)
	}

	for _, scheme := range []string{"light", "dark"} {
		b.setColorScheme(scheme)
		b.frames(2)
		t.Logf("screenshot: %s", b.screenshot(dir, "attach-transcript-desktop-"+scheme))
	}

	// After a reload, the same.
	b.navigate("/s/" + sid)
	b.waitJS("the thumbnail after a reload", loaded)
	if n := b.count("[data-testid=message-attachment]"); n != 2 {
		t.Errorf("%d attachments after a reload, want 2", n)
	}

	// A model without image input refuses before anything is queued; the
	// chip stays for the person to remove or to switch models.
	setModel("openai/tiny")
	b.setColorScheme("light")
	runs := len(s.Runs(t, sid))
	b.must("pick again", chromedp.SetUploadFiles("[data-testid=attach-input]", []string{pick}))
	b.waitJS("the chip", qa("[data-testid=attach-chip][data-state=ready]")+".length === 1")
	// Said before sending, from the model list…
	b.waitJS("the note", q("[data-testid=composer-error]")+"?.textContent.includes('does not take images')")
	// …and refused by the server when sent anyway.
	b.typeInto(composerSel, "and this?")
	b.press("Enter")
	b.waitJS("the refusal", q("[data-testid=composer-error]")+"?.textContent.includes('does not take image input')")
	if n := len(s.Runs(t, sid)); n != runs {
		t.Errorf("runs %d -> %d: the refused message was queued", runs, n)
	}
	if b.count("[data-testid=attach-chip]") != 1 {
		t.Error("the chip went away with the refusal")
	}
	t.Logf("screenshot: %s", b.screenshot(dir, "attach-refused-desktop-light"))
	b.checkExceptions()

	// Narrow screens, light and dark.
	m := openBrowser(t, s, withWindow(375, 812))
	m.navigate("/s/" + sid)
	m.waitJS("the thumbnail on a phone", loaded)
	notes := filepath.Join(t.TempDir(), "a rather long name for a file of notes.txt")
	if err := os.WriteFile(notes, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.must("pick on a phone", chromedp.SetUploadFiles("[data-testid=attach-input]", []string{notes}))
	m.waitJS("the chip on a phone", qa("[data-testid=attach-chip][data-state=ready]")+".length === 1")
	if w := eval[float64](m, q("[data-testid=attach-chip]")+".getBoundingClientRect().right"); w > 375 {
		t.Errorf("the chip overflows a 375 px screen: right edge %v", w)
	}
	for _, scheme := range []string{"light", "dark"} {
		m.setColorScheme(scheme)
		m.frames(2)
		t.Logf("screenshot: %s", m.screenshot(dir, "attach-transcript-375-"+scheme))
	}
	m.checkExceptions()
}
