package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// The Changes feature in the browser (issue 14): under the finished run
// the transcript says what it changed, the same live and after a reload;
// the line opens the Changes tab on the run with its files and diffs;
// "Revert run" previews, asks and restores the files on disk; "Undo
// rollback" brings the changes back. Screenshots at desktop and 375 px,
// light and dark.
func TestUIChanges(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	orig := map[string]string{
		"edit.txt":   "alpha\nbeta\ngamma\n",
		"delete.txt": "to be deleted\n",
		"sed.txt":    "one x\ntwo x\nthree\n",
	}
	for name, b := range orig {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed := map[string]string{
		"new.txt":  "brand new\nfile\n",
		"edit.txt": "alpha\nBETA\ngamma\n",
		"sed.txt":  "one y\ntwo y\nthree\n",
	}
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(
			e2etest.Call("write_file", `{"path":"new.txt","content":"brand new\nfile\n"}`),
			e2etest.Call("edit_file", `{"path":"edit.txt","old_string":"beta","new_string":"BETA"}`),
			e2etest.Call("run_command", `{"command":"rm delete.txt"}`),
			e2etest.Call("run_command", `{"command":"sed -i 's/x/y/' sed.txt"}`),
		),
		e2etest.Turn(e2etest.Text("Changed four files.")),
	), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	files := func(what string, want map[string]string) {
		t.Helper()
		all := []string{"new.txt", "edit.txt", "delete.txt", "sed.txt"}
		for _, name := range all {
			b, err := os.ReadFile(filepath.Join(ws, name))
			w, ok := want[name]
			switch {
			case !ok && err == nil:
				t.Errorf("%s: %s exists (%q), want it absent", what, name, b)
			case ok && (err != nil || string(b) != w):
				t.Errorf("%s: %s = %q (%v), want %q", what, name, b, err, w)
			}
		}
	}

	const line = "[data-testid=run-changes] button"
	const want = "4 files changed +5 −4"
	b := openBrowser(t, s)
	b.navigate("/")
	b.sendMessage("change the files")
	sid := b.sessionIDFromURL()
	b.waitIdle()
	// Live: the line appears under the run once it ends.
	b.waitJS("the run's changes line", q(line)+"?.textContent === "+js(want))
	files("after the run", changed)

	// After a reload: the same line.
	b.navigate("/s/" + sid)
	b.waitJS("the run's changes line after a reload", q(line)+"?.textContent === "+js(want))

	// The activity tree marks the four checkpointed calls.
	b.click("[data-testid=pane-tab-activity]")
	b.waitJS("four checkpointed steps", "document.querySelectorAll('[data-testid=activity-checkpoint]').length === 4")

	// The sed call's card links to that call's changes: sed.txt alone.
	b.waitJS("the calls' changes links", "document.querySelectorAll('[data-testid=tool-changes]').length === 4")
	eval[any](b, "[...document.querySelectorAll('[data-testid=tool-card][data-tool=run_command]')].pop().querySelector('[data-testid=tool-changes]').click()")
	b.waitJS("the sed call's one file", "document.querySelectorAll('[data-testid=changes-file]').length === 1 && "+
		q("[data-testid=changes-file]")+".dataset.path === 'sed.txt'")

	// The line opens the Changes tab on the run: four files, a diff each.
	b.click(line)
	b.waitVisible("[data-testid=changes-tab]")
	b.waitJS("four changed files", "document.querySelectorAll('[data-testid=changes-file]').length === 4")
	if got := b.text("[data-testid=changes-summary]"); got != want {
		t.Errorf("Changes tab summary %q, want %q", got, want)
	}
	b.click("[data-testid=changes-file][data-path='sed.txt']")
	b.waitVisible("[data-testid=changes-tab] [data-testid=diff]")

	dir := screenshotDir(t)
	shots := []struct {
		name string
		b    *browser
	}{{"desktop", b}, {"phone", openBrowser(t, s, withWindow(375, 812))}}
	for _, v := range shots {
		if v.b != b {
			// On a phone the pane covers the transcript once open.
			v.b.navigate("/s/" + sid)
			v.b.waitJS("the run's changes line", q(line)+"?.textContent === "+js(want))
			// The transcript is still settling at the bottom of a phone
			// screen (it follows new content), so a click at coordinates
			// can land beside the line; the desktop tab clicked it for real.
			eval[any](v.b, q(line)+".click()")
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("phone Changes tab: %q", eval[string](v.b, "document.querySelector('[data-testid=changes-tab]')?.textContent ?? 'none'"))
				}
			})
			v.b.waitJS("four changed files", "document.querySelectorAll('[data-testid=changes-file]').length === 4")
			v.b.click("[data-testid=changes-file][data-path='sed.txt']")
			v.b.waitVisible("[data-testid=changes-tab] [data-testid=diff]")
		}
		for _, scheme := range []string{"light", "dark"} {
			v.b.setColorScheme(scheme)
			v.b.frames(3)
			t.Logf("screenshot: %s", v.b.screenshot(dir, "changes-"+v.name+"-"+scheme))
			if w := eval[[]int](v.b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
				t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", v.name, w[0], w[1])
			}
		}
	}
	b.setColorScheme("light")

	// Revert the run: a preview of four files, nothing written until
	// confirmed.
	b.click("[data-testid=changes-revert]")
	b.waitVisible("[data-testid=rollback-preview]")
	if n := b.count("[data-testid=rollback-file]"); n != 4 {
		t.Errorf("preview lists %d files, want 4", n)
	}
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, "changes-desktop-light-preview"))
	files("during the preview", changed)
	b.click("[data-testid=rollback-confirm]")
	b.waitVisible("[data-testid=changes-undo]")
	files("after the revert", orig)

	// Undo the rollback: the run's changes are back.
	b.click("[data-testid=changes-undo]")
	b.waitVisible("[data-testid=rollback-preview]")
	b.click("[data-testid=rollback-confirm]")
	b.waitGone("[data-testid=rollback-preview]")
	waitAPI(t, "the undo to write the files", func() bool {
		got, err := os.ReadFile(filepath.Join(ws, "sed.txt"))
		return err == nil && string(got) == changed["sed.txt"]
	})
	files("after the undo", changed)
}

// A viewer sees a run's changes and diffs but is offered no rollback.
func TestUIChangesViewer(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := authServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("write_file", `{"path":"a.txt","content":"two\n"}`)),
		e2etest.Turn(e2etest.Text("Edited.")),
	), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	sid := op.newSessionUI()
	op.sendMessage("edit it")
	op.waitIdle()
	const line = "[data-testid=run-changes] button"
	op.waitJS("the run's changes line", q(line)+"?.textContent === '1 file changed +1 −1'")

	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	vw.waitJS("the run's changes line", q(line)+"?.textContent === '1 file changed +1 −1'")
	eval[any](vw, q(line)+".click()")
	vw.waitJS("the changed file", "document.querySelectorAll('[data-testid=changes-file]').length === 1")
	vw.click("[data-testid=changes-file][data-path='a.txt']")
	vw.waitVisible("[data-testid=changes-tab] [data-testid=diff]")
	for _, sel := range []string{"[data-testid=changes-revert]", "[data-testid=changes-restore-file]", "[data-testid=checkpoint-restore]"} {
		if n := vw.count(sel); n != 0 {
			t.Errorf("a viewer is offered %s (%d)", sel, n)
		}
	}
	if !strings.Contains(vw.text("[data-testid=changes-tab]"), "rolling them back needs the operator role") {
		t.Errorf("no read-only note in the Changes tab: %q", vw.text("[data-testid=changes-tab]"))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a.txt = %q", b)
	}
}
