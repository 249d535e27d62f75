package browser

// The Files tab (issue 14): browse the workspace, open a file from a
// reference in the agent's answer at its line, highlighting, the image
// preview, search, editing with a save, and the conflict when the agent
// edits the same file while a person does — nothing is lost.

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

const serverGo = "package src\n\n// Serve starts the server.\nfunc Serve(addr string) error {\n\treturn nil\n}\n"

func TestUIFiles(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var img bytes.Buffer
	m := image.NewRGBA(image.Rect(0, 0, 24, 16))
	for x := range 24 {
		for y := range 16 {
			m.Set(x, y, color.RGBA{R: uint8(x * 10), G: 120, B: 200, A: 255})
		}
	}
	if err := png.Encode(&img, m); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"src/server.go": serverGo,
		"notes.md":      "# Notes\n\ndraft\n",
		"logo.png":      img.String(),
		".gitignore":    "build/\n",
		"build/out.txt": "ignored output\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("where is serve",
			e2etest.Turn(e2etest.Text("The server starts in `src/server.go:4`; there is no `nope/missing.go:1`."))),
		e2etest.Scenario("agent edits notes",
			e2etest.Turn(e2etest.Call("edit_file", `{"path":"notes.md","old_string":"draft","new_string":"the agent's line"}`)),
			e2etest.Turn(e2etest.Text("Edited the notes."))),
	), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)
	if got := b.attr("[data-testid=session-workspace]", "title"); got != "Workspace: "+ws {
		t.Errorf("the header's workspace says %q, want %q", got, ws)
	}

	// A file reference in the answer opens the viewer at its line; a path
	// that does not exist stays plain text.
	b.sendMessage("where is serve")
	b.waitJS("the file reference to become a link", qa("[data-testid=file-ref]")+".length === 1")
	if got := b.attr("[data-testid=file-ref]", "data-path"); got != "src/server.go" {
		t.Fatalf("file reference links %q", got)
	}
	b.click("[data-testid=file-ref]")
	b.waitVisible("[data-testid=file-code]")
	if got := b.text("[data-testid=file-path]"); got != "src/server.go" {
		t.Fatalf("viewer shows %q", got)
	}
	b.waitJS("line 4 selected", q(".fv-line.sel")+"?.dataset.line === '4'")
	// The highlighter is a chunk of its own, fetched when first needed.
	b.waitJS("the Go file highlighted", q("[data-testid=file-code] .hljs-keyword"))
	if got := eval[string](b, q(".fv-line.sel .fv-text")+".textContent"); got != "func Serve(addr string) error {" {
		t.Errorf("line 4 reads %q", got)
	}
	if got := b.attr("#L4", "href"); got != "#L4" {
		t.Errorf("line 4's anchor is %q", got)
	}
	shots(t, b, "files-viewer")

	// The tree: lazy, ignored entries dimmed, the filter.
	b.click("[data-testid=file-back]")
	b.waitVisible("[data-testid=file-tree]")
	b.waitJS("the root listed", q("[data-testid=file-row][data-path='notes.md']"))
	if b.count("[data-testid=file-row][data-path='src/server.go']") != 0 {
		t.Error("src/ was listed before it was opened")
	}
	if !strings.Contains(b.attr("[data-testid=file-row][data-path='build']", "class"), "ignored") {
		t.Error("build/ (in .gitignore) is not marked ignored")
	}
	b.click("[data-testid=file-row][data-path='src']")
	b.waitVisible("[data-testid=file-row][data-path='src/server.go']")
	shots(t, b, "files-tree")
	b.typeInto("[data-testid=files-filter]", "note")
	b.waitJS("the filter to hide logo.png", "!"+q("[data-testid=file-row][data-path='logo.png']"))
	if b.count("[data-testid=file-row][data-path='notes.md']") != 1 {
		t.Error("the filter hid notes.md")
	}
	b.clearInput("[data-testid=files-filter]")
	// A file made behind the tree's back shows after Refresh.
	if err := os.WriteFile(filepath.Join(ws, "later.txt"), []byte("later\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.click("[data-testid=files-refresh]")
	b.waitVisible("[data-testid=file-row][data-path='later.txt']")

	// The image preview.
	b.click("[data-testid=file-row][data-path='logo.png']")
	b.waitJS("the image to load", q("[data-testid=file-image]")+"?.complete && "+q("[data-testid=file-image]")+".naturalWidth === 24")
	if src := b.attr("[data-testid=file-image]", "src"); !strings.HasPrefix(src, "blob:") {
		t.Errorf("the preview's src is %q, want the blob fetched with the API's credentials", src)
	}
	b.click("[data-testid=file-back]")

	// Content search.
	b.typeInto("[data-testid=files-search]", "func Serve")
	eval[chromedp.Void](b, "(() => { const s = "+q("[data-testid=files-search-kind]")+"; s.value = 'content'; s.dispatchEvent(new Event('change', {bubbles: true})); })()")
	b.click("[data-testid=files-tab] .files-search button[type=submit]")
	b.waitJS("a search hit", qa("[data-testid=search-hit]")+".length === 1")
	if got := b.text("[data-testid=search-hit] .ft-name"); got != "src/server.go:4" {
		t.Errorf("search hit %q", got)
	}
	b.click("[data-testid=search-hit]")
	b.waitJS("the hit opens at line 4", q(".fv-line.sel")+"?.dataset.line === '4'")
	b.click("[data-testid=file-back]")
	b.click("[data-testid=files-tab] .files-results-head button")

	// Edit and save.
	notes := filepath.Join(ws, "notes.md")
	b.click("[data-testid=file-row][data-path='notes.md']")
	b.click("[data-testid=file-edit]")
	b.clearInput("[data-testid=file-editor]")
	b.typeInto("[data-testid=file-editor]", "# Notes\n\nthe person's first save\n")
	b.click("[data-testid=file-save]")
	b.waitVisible("[data-testid=file-code]")
	if got := readWS(t, notes); got != "# Notes\n\nthe person's first save\n" {
		t.Fatalf("after Save notes.md holds %q", got)
	}

	// The person edits while the agent edits the same file: the save is
	// refused, the agent's version stays on disk, the person's text stays
	// in the editor, and overwriting is a choice.
	b.click("[data-testid=file-edit]")
	b.clearInput("[data-testid=file-editor]")
	mine := "# Notes\n\nthe person's second version\n"
	b.typeInto("[data-testid=file-editor]", mine)
	if err := os.WriteFile(notes, []byte("# Notes\n\ndraft\n"), 0o644); err != nil { // what the agent's edit expects
		t.Fatal(err)
	}
	r := s.Send(t, sid, "agent edits notes")
	s.WaitStatus(t, r.ID, "completed")
	theirs := "# Notes\n\nthe agent's line\n"
	if got := readWS(t, notes); got != theirs {
		t.Fatalf("the agent's edit left %q", got)
	}
	b.click("[data-testid=file-save]")
	b.waitVisible("[data-testid=edit-conflict]")
	if got := readWS(t, notes); got != theirs {
		t.Fatalf("a conflicting save wrote %q", got)
	}
	if got := eval[string](b, q("[data-testid=file-editor]")+".value"); got != mine {
		t.Fatalf("the editor lost the person's text: %q", got)
	}
	shots(t, b, "files-conflict")
	b.click("[data-testid=conflict-overwrite]")
	b.waitVisible("[data-testid=file-code]")
	if got := readWS(t, notes); got != mine {
		t.Fatalf("overwrite left %q", got)
	}
	b.checkExceptions()
}

func readWS(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shots captures the screen at desktop and phone width, light and dark,
// and goes back to the desktop size.
func shots(t *testing.T, b *browser, name string) {
	t.Helper()
	dir := screenshotDir(t)
	for _, size := range [][2]int64{{1280, 800}, {375, 812}} {
		b.must("viewport", chromedp.EmulateViewport(size[0], size[1]))
		b.frames(2)
		// A phone shows the pane as an overlay, closed after the resize.
		if !b.visible("[data-testid=files-tab]") {
			b.click("[data-testid=activity-toggle]")
			b.waitVisible("[data-testid=files-tab]")
		}
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.frames(2)
			t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("%s-%d-%s", name, size[0], scheme)))
		}
	}
	b.must("viewport", chromedp.EmulateViewport(1280, 800))
	b.frames(2)
	if !b.visible("[data-testid=files-tab]") {
		b.click("[data-testid=activity-toggle]")
		b.waitVisible("[data-testid=files-tab]")
	}
	b.setColorScheme("light")
}

// TestUIWorkspaceChoice: with workspace roots configured, a new session
// can be made in another workspace; one outside the roots is refused in
// the dialog and nothing is created.
func TestUIWorkspaceChoice(t *testing.T) {
	t.Parallel()
	def, other, outside := t.TempDir(), t.TempDir(), t.TempDir()
	s := e2etest.StartServer(t, e2etest.Scenarios(), e2etest.WithWorkspace(def), e2etest.WithWorkspaceRoots(def, other))
	b := openBrowser(t, s)
	b.navigate("/")
	b.click("[data-testid=new-session-workspace]")
	b.waitVisible("[data-testid=workspace-dialog]")
	if got := eval[string](b, q("[data-testid=workspace-input]")+".value"); got != def {
		t.Errorf("the dialog starts at %q, want the default %q", got, def)
	}
	b.clearInput("[data-testid=workspace-input]")
	b.typeInto("[data-testid=workspace-input]", outside)
	b.click("[data-testid=workspace-create]")
	b.waitVisible("[data-testid=workspace-error]")
	if got := b.text("[data-testid=workspace-error]"); !strings.Contains(got, "not under an allowed workspace root") {
		t.Errorf("refusal says %q", got)
	}
	t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "files-workspace-dialog-1280-light"))
	if n := b.count("[data-testid=session-list] li"); n != 0 {
		t.Errorf("%d sessions after a refused workspace", n)
	}
	b.click(".ws-root[title='Use " + other + "']")
	b.click("[data-testid=workspace-create]")
	b.waitGone("[data-testid=workspace-dialog]")
	b.waitJS("the new session's header", q("[data-testid=session-workspace]")+"?.title === "+js("Workspace: "+other))
}

// TestUIFilesViewer: a viewer browses and reads the workspace but gets no
// editor.
func TestUIFilesViewer(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "readme.md"), []byte("# Read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := authServer(t, e2etest.Scenarios(), e2etest.WithWorkspace(ws))
	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	op.click("[data-testid=new-session]")
	op.waitJS("a session page", "location.pathname.startsWith('/s/')")
	sid := op.sessionIDFromURL()

	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	if !vw.visible("[data-testid=pane-tab-files]") {
		vw.click("[data-testid=activity-toggle]")
	}
	vw.click("[data-testid=pane-tab-files]")
	vw.waitVisible("[data-testid=files-readonly]")
	vw.click("[data-testid=file-row][data-path='readme.md']")
	vw.waitVisible("[data-testid=file-code]")
	if vw.count("[data-testid=file-edit]") != 0 {
		t.Error("a viewer is offered Edit")
	}
	if !vw.visible("[data-testid=file-download]") {
		t.Error("a viewer cannot download")
	}
	// The operator may edit the same file.
	op.click("[data-testid=pane-tab-files]")
	op.click("[data-testid=file-row][data-path='readme.md']")
	op.waitVisible("[data-testid=file-edit]")
}
