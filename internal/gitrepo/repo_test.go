package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	plain := t.TempDir()
	repo := newRepo(t)
	write(t, repo, "sub/a.txt", "a")
	commitAll(t, repo, "first")
	detached := newRepo(t)
	write(t, detached, "a.txt", "1")
	commitAll(t, detached, "one")
	write(t, detached, "a.txt", "2")
	commitAll(t, detached, "two")
	git(t, detached, "checkout", "-q", "--detach", "HEAD~1")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	unborn := newRepo(t)

	tests := []struct {
		name string
		dir  string
		err  error
		head Head
	}{
		{name: "not a repository", dir: plain, err: ErrNotRepo},
		{name: "inside another repository", dir: filepath.Join(repo, "sub"), err: ErrNotRepo},
		{name: "the .git directory", dir: filepath.Join(repo, ".git"), err: ErrNotRepo},
		{name: "on a branch", dir: repo, head: Head{Branch: "main", Commit: git(t, repo, "rev-parse", "HEAD")}},
		{name: "through a symlink", dir: link, head: Head{Branch: "main", Commit: git(t, repo, "rev-parse", "HEAD")}},
		{name: "detached", dir: detached, head: Head{Detached: true, Commit: git(t, detached, "rev-parse", "HEAD")}},
		{name: "no commits yet", dir: unborn, head: Head{Branch: "main"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(context.Background(), tt.dir, Options{})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h, err := r.Head(context.Background())
			if err != nil || h != tt.head {
				t.Errorf("head %+v %v, want %+v", h, err, tt.head)
			}
		})
	}
}

// weirdNames are paths porcelain output must carry unchanged.
var weirdNames = []string{"with space.txt", `quote"d.txt`, "new\nline.txt", "tab\there.txt", "ünïcødé.txt", "-dash.txt", ":(glob)*.txt"}

func TestStatus(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.log\n")
	write(t, dir, "keep.txt", "keep\n")
	write(t, dir, "mod.txt", "one\n")
	write(t, dir, "both.txt", "one\n")
	write(t, dir, "gone.txt", "bye\n")
	write(t, dir, "old name.txt", "rename me, a file long enough to be found again\n")
	for _, n := range weirdNames {
		write(t, dir, n, "x\n")
	}
	commitAll(t, dir, "base")
	git(t, dir, "branch", "upstream")
	write(t, dir, "ahead.txt", "a\n")
	commitAll(t, dir, "ahead")
	git(t, dir, "config", "branch.main.remote", ".")
	git(t, dir, "config", "branch.main.merge", "refs/heads/upstream")

	write(t, dir, "mod.txt", "two\n")                 // unstaged
	write(t, dir, "both.txt", "two\n")                // staged, then changed again
	git(t, dir, "add", "both.txt")                    //
	write(t, dir, "both.txt", "three\n")              //
	os.Remove(filepath.Join(dir, "gone.txt"))         // unstaged deletion
	git(t, dir, "mv", "old name.txt", "new name.txt") // staged rename
	write(t, dir, "staged new.txt", "n\n")
	git(t, dir, "add", "staged new.txt")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "untracked dir/x.txt", "u\n")
	for _, n := range weirdNames {
		write(t, dir, n, "changed\n")
	}
	write(t, dir, "brand\nnew.txt", "u\n")

	st, err := openRepo(t, dir).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Branch != "main" || st.Detached || st.Commit == "" || st.Upstream != "upstream" || st.Ahead != 1 || st.Behind != 0 {
		t.Errorf("branch: %+v", st.Head)
	}
	wantStaged := []Change{
		{Path: "both.txt", Kind: "modified"},
		{Path: "new name.txt", OrigPath: "old name.txt", Kind: "renamed"},
		{Path: "staged new.txt", Kind: "added"},
	}
	if !slices.Equal(st.Staged, wantStaged) {
		t.Errorf("staged %+v\nwant   %+v", st.Staged, wantStaged)
	}
	wantUnstaged := []Change{{Path: "-dash.txt", Kind: "modified"}, {Path: ":(glob)*.txt", Kind: "modified"},
		{Path: "both.txt", Kind: "modified"}, {Path: "gone.txt", Kind: "deleted"}, {Path: "mod.txt", Kind: "modified"},
		{Path: "new\nline.txt", Kind: "modified"}, {Path: `quote"d.txt`, Kind: "modified"},
		{Path: "tab\there.txt", Kind: "modified"}, {Path: "with space.txt", Kind: "modified"}, {Path: "ünïcødé.txt", Kind: "modified"}}
	if !slices.Equal(st.Unstaged, wantUnstaged) {
		t.Errorf("unstaged %q\nwant     %q", st.Unstaged, wantUnstaged)
	}
	if want := []string{"brand\nnew.txt", "untracked dir/"}; !slices.Equal(st.Untracked, want) {
		t.Errorf("untracked %q, want %q", st.Untracked, want)
	}
	if len(st.Conflicted) != 0 {
		t.Errorf("conflicted %v", st.Conflicted)
	}
}

// conflictRepo returns a repository in the middle of a merge with a
// conflict in c.txt.
func conflictRepo(t *testing.T) string {
	dir := newRepo(t)
	write(t, dir, "c.txt", "base\n")
	commitAll(t, dir, "base")
	git(t, dir, "checkout", "-q", "-b", "other")
	write(t, dir, "c.txt", "theirs\n")
	commitAll(t, dir, "theirs")
	git(t, dir, "checkout", "-q", "main")
	write(t, dir, "c.txt", "ours\n")
	commitAll(t, dir, "ours")
	cmd := []string{"merge", "-q", "other"}
	if out, err := runGit(dir, cmd...); err == nil {
		t.Fatalf("merge did not conflict: %s", out)
	}
	return dir
}

func TestStatusConflict(t *testing.T) {
	dir := conflictRepo(t)
	r := openRepo(t, dir)
	st, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []Change{{Path: "c.txt", Kind: "both_modified"}}; !slices.Equal(st.Conflicted, want) {
		t.Errorf("conflicted %+v", st.Conflicted)
	}
	if st.Upstream != "" || st.Ahead != 0 {
		t.Errorf("no upstream expected: %+v", st)
	}
	if _, err := r.Commit(context.Background(), "merge", "P", "p@example.com"); !errors.Is(err, ErrUnmerged) {
		t.Errorf("commit with a conflict: %v", err)
	}
	if err := r.Switch(context.Background(), "other"); !errors.Is(err, ErrUnmerged) {
		t.Errorf("switch with a conflict: %v", err)
	}
}

func TestParseStatusRejectsGarbage(t *testing.T) {
	for _, in := range []string{"1 M", "2 R. N... 100644 100644 100644 a b R100 new", "u UU x", "x what"} {
		if _, err := parseStatus([]byte(in + "\x00")); err == nil {
			t.Errorf("parsed %q", in)
		}
	}
}

func TestTimeout(t *testing.T) {
	dir := newRepo(t)
	r := openRepo(t, dir)
	// A git that hangs (and whose child would, too): the call returns at
	// the timeout with its own error, and the process group is gone.
	fake := filepath.Join(t.TempDir(), "git")
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.opts.Git, r.opts.Timeout = fake, 300*time.Millisecond
	start := time.Now()
	_, err := r.Status(context.Background())
	if !errors.Is(err, ErrTimeout) || Code(err) != "git_timeout" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %s", d)
	}
	b, _ := os.ReadFile(pidFile)
	if pid := strings.TrimSpace(string(b)); pid != "" {
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := os.Stat("/proc/" + pid); errors.Is(err, os.ErrNotExist) {
				break
			}
			if st, _ := os.ReadFile("/proc/" + pid + "/stat"); strings.Contains(string(st), ") Z ") {
				break // killed, waiting to be reaped by init
			}
			if time.Now().After(deadline) {
				t.Fatalf("git's child %s survived the timeout", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestCleanEnvironment: what git sees — no inherited GIT_* variable (a
// GIT_DIR in the server's environment must not redirect the panel), the
// safety settings on the command line, no pager, no prompt.
func TestCleanEnvironment(t *testing.T) {
	dir := newRepo(t)
	other := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_SSH_COMMAND", "touch /tmp/never")
	r := openRepo(t, dir)
	if r.Dir() != mustReal(t, dir) {
		t.Errorf("opened %s", r.Dir())
	}
	fake := filepath.Join(t.TempDir(), "git")
	out := filepath.Join(t.TempDir(), "seen")
	script := "#!/bin/sh\n{ printf '%s\\n' \"$@\"; echo ---; env; } > " + out + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.opts.Git = fake
	r.run(context.Background(), runOpts{noFilters: true}, "status")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	args, env, _ := strings.Cut(string(b), "---\n")
	for _, want := range []string{"--no-pager\n", "core.hooksPath=/dev/null\n", "core.fsmonitor=false\n", "commit.gpgSign=false\n"} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
	for _, want := range []string{"GIT_TERMINAL_PROMPT=0\n", "GIT_CONFIG_NOSYSTEM=1\n", "GIT_CONFIG_GLOBAL=/dev/null\n", "LC_ALL=C\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q", want)
		}
	}
	for _, bad := range []string{"GIT_DIR=", "GIT_WORK_TREE=", "GIT_SSH_COMMAND="} {
		if strings.Contains(env, bad) {
			t.Errorf("env has %s", bad)
		}
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOutputBounded(t *testing.T) {
	dir := newRepo(t)
	for i := range 20 {
		write(t, dir, "f.txt", strings.Repeat("x", i))
		commitAll(t, dir, strings.Repeat("subject ", 10))
	}
	r, err := Open(context.Background(), dir, Options{MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Log(context.Background(), 20, ""); !errors.Is(err, ErrOutputTooLarge) {
		t.Errorf("err = %v", err)
	}
	if page, err := r.Log(context.Background(), 2, ""); err != nil || len(page.Commits) != 2 {
		t.Errorf("a small page: %v", err)
	}
}
