package browser

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// gitIn runs plain git in dir, away from the machine's git config.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// openGitTab shows the workspace pane's Git tab.
func (b *browser) openGitTab() {
	b.t.Helper()
	if !b.visible("[data-testid=pane-tab-git]") {
		b.click("[data-testid=activity-toggle]")
	}
	b.click("[data-testid=pane-tab-git]")
	b.waitVisible("[data-testid=git-tab]")
}

const gitFileSel = "[data-testid=git-file]"

func gitRow(path, side string) string {
	return gitFileSel + "[data-path=" + js(path) + "][data-side=" + side + "]"
}

// TestUIGit (issue 14's acceptance): in a temporary repository as the
// session's workspace, a scripted run changes a file through the shell
// tool; when the run ends the Git tab shows the change and its diff; the
// person stages it and commits from the tab; the commit is in the
// repository with the message, the log shows it, and a hook planted in
// .git/hooks did not run. Screenshots: desktop and 375 px, light and dark,
// and the plain-workspace notice.
func TestUIGit(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	// A second allowed root: the plain workspace the tab calls no repository.
	plainRoot := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "notes.txt")
	gitIn(t, repo, "commit", "-q", "-m", "Start the notes")
	gitIn(t, repo, "branch", "feature")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Adding a line."), e2etest.Call("run_command", `{"command":"printf 'a line from the agent\\n' >> notes.txt"}`)),
		e2etest.Turn(e2etest.Text("Done: notes.txt has a new line.")),
	), e2etest.WithWorkspace(repo), e2etest.WithWorkspaceRoots(repo, plainRoot), e2etest.WithApprovalMode("off"))
	dir := screenshotDir(t)

	b := openBrowser(t, s)
	b.navigate("/")
	sid := b.newSessionUI()
	b.openGitTab()
	b.waitVisible("[data-testid=git-clean]")
	if got := b.attr("[data-testid=git-branch]", "value"); got != "" && got != "main" {
		t.Errorf("branch select = %q", got)
	}
	b.waitJS("the log's first commit", q("[data-testid=git-log-item]")+"?.textContent.includes('Start the notes')")

	// The run changes notes.txt; its end reloads the tab.
	b.sendMessage("add a line to the notes")
	b.waitJSFor("the change after the run", q(gitRow("notes.txt", "unstaged")), 30*time.Second)
	if b.count("[data-testid=git-group-staged]") != 0 {
		t.Error("a staged group before anything was staged")
	}
	b.click(gitRow("notes.txt", "unstaged") + " .git-file-open")
	b.waitJS("the diff of the agent's line", q("[data-testid=git-diff]")+"?.textContent.includes('a line from the agent')")
	b.typeInto("[data-testid=git-commit-message]", "Keep the agent's line")
	if !eval[bool](b, q("[data-testid=git-commit]")+".disabled") {
		t.Error("Commit is enabled with nothing staged")
	}
	shootGit(t, b, dir, "git-changes-desktop")

	b.click(gitRow("notes.txt", "unstaged") + " [data-testid=git-stage]")
	b.waitVisible(gitRow("notes.txt", "staged"))
	b.waitJS("Commit enabled", "!"+q("[data-testid=git-commit]")+".disabled")
	b.click("[data-testid=git-commit]")
	b.waitJS("the log shows the commit", q("[data-testid=git-log-item]")+"?.textContent.includes(\"Keep the agent's line\")")
	b.waitVisible("[data-testid=git-clean]")
	if n := b.text("[data-testid=git-notice]"); !strings.Contains(n, "Keep the agent's line") {
		t.Errorf("notice = %q", n)
	}

	if got := gitIn(t, repo, "log", "-1", "--format=%s|%an <%ae>"); got != "Keep the agent's line|Caduceus <caduceus@localhost>" {
		t.Errorf("the repository's last commit: %q", got)
	}
	if got := gitIn(t, repo, "show", "HEAD:notes.txt"); got != "first line\na line from the agent" {
		t.Errorf("the committed notes.txt: %q", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted pre-commit hook ran on the UI's commit")
	}
	shootGit(t, b, dir, "git-committed-desktop")

	// A change made outside shows on Refresh; then the other shots.
	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("first line\na line from the agent\nand a person's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "todo.md"), []byte("- ship it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.click("[data-testid=git-refresh]")
	b.waitVisible(gitRow("todo.md", "untracked"))
	b.click(gitRow("notes.txt", "unstaged") + " .git-file-open")
	b.waitJS("the diff", q("[data-testid=git-diff]")+"?.textContent.includes(\"and a person's\")")
	b.setColorScheme("dark")
	shootGit(t, b, dir, "git-changes-desktop-dark")

	// Switching to feature would overwrite the changed notes.txt: refused,
	// said, and the select still shows main.
	b.setSelect("[data-testid=git-branch]", "feature")
	b.waitVisible("[data-testid=git-error][data-code=local_changes_would_be_overwritten]")
	if v := eval[string](b, q("[data-testid=git-branch]")+".value"); v != "main" {
		t.Errorf("after a refused switch the select shows %q", v)
	}
	if got := gitIn(t, repo, "branch", "--show-current"); got != "main" {
		t.Errorf("a refused switch moved to %q", got)
	}
	shootGit(t, b, dir, "git-switch-refused-desktop-dark")

	for _, scheme := range []string{"light", "dark"} {
		p := openBrowser(t, s, withWindow(375, 812))
		p.setColorScheme(scheme)
		p.navigate("/s/" + sid)
		p.waitSessionLoaded()
		p.openGitTab()
		p.waitVisible(gitRow("todo.md", "untracked"))
		p.click(gitRow("notes.txt", "unstaged") + " .git-file-open")
		p.waitJS("the diff", q("[data-testid=git-diff]")+"?.textContent.includes(\"and a person's\")")
		shootGit(t, p, dir, "git-changes-phone-"+scheme)
	}

	// With notes.txt as committed, the switch goes through; the untracked
	// todo.md rides along.
	gitIn(t, repo, "checkout", "--", "notes.txt")
	b.click("[data-testid=git-refresh]")
	b.waitGone(gitRow("notes.txt", "unstaged"))
	b.setSelect("[data-testid=git-branch]", "feature")
	b.waitJS("the select on feature", q("[data-testid=git-branch]")+".value === 'feature'")
	b.waitJS("the log of feature", q("[data-testid=git-log-item]")+"?.textContent.includes('Start the notes')")
	if got := gitIn(t, repo, "branch", "--show-current"); got != "feature" {
		t.Errorf("after the switch git is on %q", got)
	}
	if b.count("[data-testid=git-error]") != 0 {
		t.Errorf("an error still shows after a good switch: %q", b.text("[data-testid=git-error]"))
	}

	// A workspace that is no repository: the tab says so.
	plain := plainRoot
	var made e2etest.SessionJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]string{"workspace": plain}, &made); c != 201 {
		t.Fatalf("create a session on a plain workspace: %d", c)
	}
	b.setColorScheme("light")
	b.navigate("/s/" + made.ID)
	b.waitSessionLoaded()
	b.openGitTab()
	b.waitVisible("[data-testid=git-not-repo]")
	if txt := b.text("[data-testid=git-not-repo]"); !strings.Contains(txt, "not a git repository") {
		t.Errorf("plain workspace: %q", txt)
	}
	shootGit(t, b, dir, "git-not-repo-desktop")
}

// shootGit screenshots the page and fails if it scrolls sideways.
func shootGit(t *testing.T, b *browser, dir, name string) {
	t.Helper()
	b.frames(3)
	t.Logf("screenshot: %s", b.screenshot(dir, name))
	if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
		t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", name, w[0], w[1])
	}
}

// TestUIGitRoles: a signed-in operator's commit is authored as them; a
// viewer sees the same status, diff and log without a button that writes.
func TestUIGitRoles(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "a.txt")
	gitIn(t, repo, "commit", "-q", "-m", "one")
	// More history than one page of the tab's log (20).
	for i := range 22 {
		gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("step %02d", i))
	}
	s := authServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))), e2etest.WithWorkspace(repo))

	op := openBrowser(t, s)
	op.signIn("otto", operatorPW)
	sid := op.newSessionUI()
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	op.openGitTab()
	op.click(gitRow("a.txt", "unstaged") + " [data-testid=git-stage]")
	op.waitVisible(gitRow("a.txt", "staged"))
	op.typeInto("[data-testid=git-commit-message]", "Two")
	op.click("[data-testid=git-commit]")
	op.waitJS("the log shows the commit", q("[data-testid=git-log-item]")+"?.textContent.includes('Two')")
	if got := gitIn(t, repo, "log", "-1", "--format=%an <%ae>"); got != "otto <otto@localhost>" {
		t.Errorf("author of the operator's commit: %q", got)
	}

	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vw := openBrowser(t, s)
	vw.signIn("vera", viewerPW)
	vw.openSessionReadOnly(sid)
	vw.openGitTab()
	vw.waitVisible(gitRow("a.txt", "unstaged"))
	vw.click(gitRow("a.txt", "unstaged") + " .git-file-open")
	vw.waitJS("the viewer's diff", q("[data-testid=git-diff]")+"?.textContent.includes('three')")
	vw.waitJS("the viewer's log", q("[data-testid=git-log-item]")+"?.textContent.includes('Two')")
	if n := vw.count("[data-testid=git-log-item]"); n != 20 {
		t.Errorf("the log's first page has %d commits, want 20", n)
	}
	vw.click("[data-testid=git-log-more]")
	vw.waitJS("the log's second page", qa("[data-testid=git-log-item]")+".length === 24")
	vw.waitGone("[data-testid=git-log-more]")
	if last := vw.lastText("[data-testid=git-log-item] .git-subject"); last != "one" {
		t.Errorf("the log's oldest commit reads %q", last)
	}
	for _, sel := range []string{"[data-testid=git-stage]", "[data-testid=git-unstage]", "[data-testid=git-unstaged-all]",
		"[data-testid=git-commit]", "[data-testid=git-commit-message]"} {
		if n := vw.count(sel); n != 0 {
			t.Errorf("a viewer sees %d of %s", n, sel)
		}
	}
	if !eval[bool](vw, q("[data-testid=git-branch]")+".disabled") {
		t.Error("a viewer's branch switcher is enabled")
	}

	// The operator commits the change; the viewer's tab hears git.committed
	// and reloads by itself.
	op.click("[data-testid=git-refresh]")
	op.click("[data-testid=git-unstaged-all]")
	op.waitVisible(gitRow("a.txt", "staged"))
	op.typeInto("[data-testid=git-commit-message]", "Three")
	op.click("[data-testid=git-commit]")
	vw.waitJS("the viewer's log shows the new commit", q("[data-testid=git-log-item] .git-subject")+"?.textContent === 'Three'")
	vw.waitVisible("[data-testid=git-clean]")
}
