package browser

// Skills (issue 16, h16-skills): a skill installed from a .zip in
// Settings is listed and read as Markdown; a malformed one is refused
// with the server's reason; one is written in the page, edited, searched
// for and deleted; a profile's toggle narrows the skills it is offered.
// The section at desktop and phone widths in both colour schemes.

import (
	"archive/zip"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// writeZip packs files (path, content pairs) into dir/name.
func writeZip(t *testing.T, dir, name string, files ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestUISkills(t *testing.T) {
	t.Parallel()
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	dir := screenshotDir(t)
	api := signedInClient(t, s.URL, "ada", adminPW)
	for _, name := range []string{"Writer", "Coder"} {
		if c := api("POST", "/api/profiles", map[string]any{"name": name}); c != http.StatusCreated {
			t.Fatalf("create profile %s: %d", name, c)
		}
	}
	tmp := t.TempDir()
	good := writeZip(t, tmp, "release-notes.zip",
		"release-notes/SKILL.md", "---\nname: release-notes\ndescription: \"Write release notes: use when asked for a changelog.\"\nlicense: MIT\n---\n# Release notes\n\nList **every** change.\n",
		"release-notes/template.md", "## Changes\n")
	bad := writeZip(t, tmp, "broken.zip", "broken/SKILL.md", "---\nname: broken\ndescription: never closed\n")

	b := openBrowser(t, s)
	b.signIn("ada", adminPW)
	b.click("[data-testid=open-settings]")
	b.click("[data-testid=settings-nav-skills]")
	b.waitVisible("[data-testid=skills-page] [data-testid=skills-empty]")
	b.waitJS("the address names the section", "location.hash === '#settings/skills'")

	// Install from a zip: listed, and opened in the reader as Markdown.
	b.must("pick the zip", chromedp.SetUploadFiles("[data-testid=skill-install-input]", []string{good}))
	row := "[data-testid=skill-row][data-name=release-notes]"
	b.waitVisible(row)
	b.waitVisible(row + " [data-testid=skill-reader] [data-testid=skill-markdown] h1")
	if got := b.text(row + " [data-testid=skill-markdown] strong"); got != "every" {
		t.Errorf("rendered Markdown: <strong> = %q", got)
	}
	if got := b.text(row + " [data-testid=skill-files]"); got != "template.md" {
		t.Errorf("files = %q", got)
	}

	// A malformed zip: the server's reason, and nothing listed.
	b.must("pick the broken zip", chromedp.SetUploadFiles("[data-testid=skill-install-input]", []string{bad}))
	b.waitJS("the reason", q("[data-testid=skills-error]")+"?.textContent.includes('front matter is not closed by a --- line')")
	if n := b.count("[data-testid=skill-row]"); n != 1 {
		t.Errorf("%d skills listed after a refused install, want 1", n)
	}

	// Write one in the page.
	b.click("[data-testid=skill-new]")
	b.waitVisible("[data-testid=skill-form]")
	b.typeInto("[data-testid=skill-name]", "haiku")
	b.typeInto("[data-testid=skill-description]", "Answer in haiku.")
	b.click("[data-testid=skill-save]")
	b.waitVisible("[data-testid=skill-row][data-name=haiku]")
	b.waitGone("[data-testid=skill-form]")

	// Edit its SKILL.md: a broken edit is refused with the reason, a good
	// one saved.
	b.waitVisible("[data-testid=skill-row][data-name=haiku] [data-testid=skill-edit]")
	b.click("[data-testid=skill-row][data-name=haiku] [data-testid=skill-edit]")
	b.waitVisible("[data-testid=skill-form] [data-testid=skill-body]")
	b.clearInput("[data-testid=skill-body]")
	b.typeInto("[data-testid=skill-body]", "---\nname: other\ndescription: x\n---\n")
	b.click("[data-testid=skill-save]")
	b.waitJS("the edit's reason", q("[data-testid=skill-form-error]")+"?.textContent.includes('does not match')")
	b.clearInput("[data-testid=skill-body]")
	b.typeInto("[data-testid=skill-body]", "---\nname: haiku\ndescription: Answer in three short lines.\n---\nFive, seven, five.\n")
	b.click("[data-testid=skill-save]")
	b.waitJS("the new description", q("[data-testid=skill-row][data-name=haiku] .row-sub")+"?.textContent === 'Answer in three short lines.'")

	// Search.
	b.typeInto("[data-testid=skill-search]", "changelog")
	b.waitJS("one match", qa("[data-testid=skill-row]")+".map(e => e.dataset.name).join() === 'release-notes'")
	b.clearInput("[data-testid=skill-search]")
	b.waitJS("both again", qa("[data-testid=skill-row]")+".length === 2")

	// Coder is offered every skill; unchecking haiku for Coder enables
	// release-notes only.
	b.waitVisible("[data-testid=skill-row][data-name=haiku] [data-testid=skill-profile-toggle][data-profile=Coder]")
	if !eval[bool](b, q("[data-testid=skill-row][data-name=haiku] [data-testid=skill-profile-toggle][data-profile=Coder]")+".checked") {
		t.Fatal("Coder is not shown offered haiku before any choice")
	}
	b.click("[data-testid=skill-row][data-name=haiku] [data-testid=skill-profile-toggle][data-profile=Coder]")
	b.waitJS("the server holds the choice", `(async () => {
		const ps = (await (await fetch('/api/profiles')).json()).profiles;
		const coder = ps.find(p => p.name === 'Coder');
		window.__coderSkills = JSON.stringify((await (await fetch('/api/profiles/' + coder.id + '/skills')).json()).skills);
		return true })() && window.__coderSkills === '["release-notes"]'`)
	raw := eval[string](b, `(async () => JSON.stringify(await (await fetch('/api/skills')).json()))()`)
	var list struct {
		Skills []struct {
			Name       string   `json:"name"`
			EnabledFor []string `json:"enabled_for"`
		}
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil || len(list.Skills) != 2 ||
		len(list.Skills[0].EnabledFor) != 0 || len(list.Skills[1].EnabledFor) != 1 {
		t.Fatalf("skills after the toggle = %s (%v)", raw, err)
	}

	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		p := openBrowser(t, s, withWindow(w.w, w.h))
		p.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			p.setColorScheme(scheme)
			p.must("open skills", chromedp.Navigate(s.URL+"/#settings/skills"))
			p.waitMounted()
			p.waitVisible(row)
			// The same address keeps the page (and the open reader).
			if !p.visible(row + " [data-testid=skill-reader]") {
				p.click(row + " [data-testid=skill-open]")
			}
			p.waitVisible(row + " [data-testid=skill-markdown] h1")
			p.frames(3)
			t.Logf("screenshot: %s", p.screenshot(dir, "skills-"+w.name+"-"+scheme))
			if sw := eval[[]int](p, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("%s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// Delete.
	b.click("[data-testid=skill-row][data-name=haiku] [data-testid=skill-delete]")
	b.click("[data-testid=confirm-skill-delete]")
	b.waitGone("[data-testid=skill-row][data-name=haiku]")
	if _, err := os.Stat(filepath.Join(s.DataDir, "skills", "haiku")); !os.IsNotExist(err) {
		t.Errorf("haiku's folder after delete: %v", err)
	}
}
