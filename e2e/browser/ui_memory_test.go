package browser

// Memory (issue 16, h16-memory): an entry added in Settings › Memory shows
// in "What the agent sees" and in the system prompt of the profile's next
// run (a fake provider records it), is edited inline, deleted (gone from
// the next run's prompt) and put back with undo; another profile's memory
// stays empty; the section at desktop and phone widths in both colour
// schemes.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
)

func TestUIMemory(t *testing.T) {
	t.Parallel()
	llm := openaitest.NewServer()
	t.Cleanup(llm.Close)
	llm.SetModels("gpt-4o")
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))),
		e2etest.WithEnv(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.BaseURL()}))
	dir := screenshotDir(t)
	// lastSystem is the system prompt of the newest model request.
	lastSystem := func() string {
		t.Helper()
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		reqs := llm.Requests()
		for i := len(reqs) - 1; i >= 0; i-- {
			if reqs[i].Path == "/v1/chat/completions" {
				if err := reqs[i].Decode(&body); err != nil {
					t.Fatal(err)
				}
				for _, m := range body.Messages {
					if m.Role == "system" {
						return m.Content
					}
				}
			}
		}
		t.Fatal("the fake provider got no chat request")
		return ""
	}

	// Two profiles, made through the API.
	send := signedInClient(t, s.URL, "ada", adminPW)
	for _, body := range []map[string]any{{"name": "Ada", "default": true, "model": "openai/gpt-4o"}, {"name": "Bob"}} {
		if c := send("POST", "/api/profiles", body); c != http.StatusCreated {
			t.Fatalf("create profile %v: %d", body, c)
		}
	}
	b := openBrowser(t, s)
	b.signIn("ada", adminPW)
	b.click("[data-testid=open-settings]")
	b.click("[data-testid=settings-nav-memory]")
	b.waitJS("the address names the section", "location.hash === '#settings/memory'")
	b.waitVisible("[data-testid=memory-prompt-empty]")

	// Add a note: it is listed and in what the agent sees.
	const fact = "Deploys go through the staging branch."
	notes := "[data-testid=memory-notes]"
	b.typeInto(notes+" [data-testid=memory-add-text]", fact)
	b.click(notes + " [data-testid=memory-add]")
	b.waitJS("the entry is listed", q(notes+" [data-testid=memory-entry-text]")+"?.textContent === "+js(fact))
	b.waitJS("the prompt shows it", q("[data-testid=memory-prompt-text]")+"?.textContent.includes("+js("- "+fact)+")")

	// Bad input is refused with the server's reason and changes nothing.
	b.typeInto("[data-testid=memory-user] [data-testid=memory-add-text]", "key ghp_AbCdEf0123456789AbCdEf0123456789")
	b.click("[data-testid=memory-user] [data-testid=memory-add]")
	b.waitJS("the secret is refused", q("[data-testid=memory-user] [data-testid=memory-add-error]")+"?.textContent.includes('secret')")
	eval[bool](b, `(() => { const t = `+q("[data-testid=memory-user] [data-testid=memory-add-text]")+`;
		Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(t, '');
		t.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	b.typeInto("[data-testid=memory-user] [data-testid=memory-add-text]", "Prefers short answers.")
	b.click("[data-testid=memory-user] [data-testid=memory-add]")
	b.waitJS("the user entry is listed", q("[data-testid=memory-user] [data-testid=memory-entry-text]")+"?.textContent === 'Prefers short answers.'")

	// Edit inline.
	b.click(notes + " [data-testid=memory-edit]")
	b.waitVisible(notes + " [data-testid=memory-edit-text]")
	eval[bool](b, `(() => { const t = `+q(notes+" [data-testid=memory-edit-text]")+`;
		Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(t, 'Deploys go through staging, then production by hand.');
		t.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	b.click(notes + " [data-testid=memory-save]")
	b.waitJS("the prompt shows the edit", q("[data-testid=memory-prompt-text]")+"?.textContent.includes('production by hand')")
	if got := eval[string](b, q("[data-testid=memory-prompt-text]")+".textContent"); strings.Contains(got, fact) {
		t.Fatalf("the old text is still in the prompt: %q", got)
	}

	// Another profile's memory is its own.
	eval[bool](b, `(() => { const s = `+q("[data-testid=memory-profile]")+`;
		s.value = [...s.options].find(o => o.textContent === 'Bob').value; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
	b.waitVisible("[data-testid=memory-prompt-empty]")
	eval[bool](b, `(() => { const s = `+q("[data-testid=memory-profile]")+`;
		s.value = [...s.options].find(o => o.textContent.startsWith('Ada')).value; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
	b.waitVisible("[data-testid=memory-prompt-text]")

	// Ada's next run has it in its system prompt, exactly as shown.
	shown := eval[string](b, q("[data-testid=memory-prompt-text]")+".textContent")
	b.navigate("/#settings/profiles")
	b.click("[data-testid=profile-row][data-name=Ada] [data-testid=profile-start]")
	b.waitVisible("[data-testid=composer]")
	sid := b.sessionIDFromURL()
	llm.Enqueue(openaitest.Stream(textSSE("Noted.")))
	b.sendMessage("how do we deploy?")
	b.waitJS("the run's answer", q(itemSel("assistant")))
	b.waitIdle()
	if got := lastSystem(); !strings.Contains(got, shown) || !strings.Contains(got, "production by hand") {
		t.Fatalf("the run's system prompt lacks the memory shown (%q):\n%s", shown, got)
	}
	b.navigate("/#settings/memory")
	b.waitVisible("[data-testid=memory-prompt-text]")

	// Screenshots with both lists filled.
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 900}, {"phone", 375, 812}} {
		c := openBrowser(t, s, withWindow(w.w, w.h))
		c.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			c.setColorScheme(scheme)
			c.must("open memory", chromedp.Navigate(s.URL+"/#settings/memory"))
			c.waitMounted()
			c.waitVisible("[data-testid=memory-prompt-text]")
			c.frames(3)
			t.Logf("screenshot: %s", c.screenshot(dir, "memory-"+w.name+"-"+scheme))
			if sw := eval[[]int](c, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the memory section scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// Delete: gone from the list and the prompt; undo puts it back.
	b.click(notes + " [data-testid=memory-delete]")
	b.waitVisible(notes + " [data-testid=memory-empty]")
	b.waitJS("the prompt lost it", "!"+q("[data-testid=memory-prompt-text]")+"?.textContent.includes('production by hand')")
	b.click("[data-testid=memory-undo]")
	b.waitJS("undo put it back", q(notes+" [data-testid=memory-entry-text]")+"?.textContent.includes('production by hand')")
	b.click(notes + " [data-testid=memory-delete]")
	b.waitVisible(notes + " [data-testid=memory-empty]")
	b.waitVisible("[data-testid=memory-undo-bar]")
	b.waitJS("the prompt lost it again", "!"+q("[data-testid=memory-prompt-text]")+"?.textContent.includes('production by hand')")

	// Deleted, it is gone from the next run's system prompt.
	b.navigate("/s/" + sid)
	b.waitVisible("[data-testid=composer]")
	llm.Enqueue(openaitest.Stream(textSSE("Noted again.")))
	b.sendMessage("and now?")
	b.waitJS("the second answer", "document.querySelectorAll("+js(itemSel("assistant"))+").length === 2")
	b.waitIdle()
	if got := lastSystem(); strings.Contains(got, "production by hand") || !strings.Contains(got, "Prefers short answers.") {
		t.Fatalf("after deleting, the run's system prompt is:\n%s", got)
	}
}
