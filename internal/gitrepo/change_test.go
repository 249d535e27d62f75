package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func paths(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func TestStageUnstage(t *testing.T) {
	outside := t.TempDir()
	ctx := context.Background()
	tests := []struct {
		name       string
		committed  bool // the repository has a first commit
		stage      []string
		unstage    []string
		err        error
		wantStaged []string
	}{
		{name: "stage files", committed: true, stage: []string{"a.txt", "with space.txt"}, wantStaged: []string{"a.txt", "with space.txt"}},
		{name: "stage a deletion", committed: true, stage: []string{"doomed.txt"}, wantStaged: []string{"doomed.txt"}},
		{name: "stage everything", committed: true, stage: []string{"."},
			wantStaged: []string{":(glob)*.txt", "a.txt", "doomed.txt", "new\nline.txt", "out", "with space.txt"}}, // out: the symlink itself
		{name: "pathspec magic is a name", committed: true, stage: []string{":(glob)*.txt"}, wantStaged: []string{":(glob)*.txt"}},
		{name: "unstage", committed: true, stage: []string{"."}, unstage: []string{"a.txt", "new\nline.txt"},
			wantStaged: []string{":(glob)*.txt", "doomed.txt", "out", "with space.txt"}},
		{name: "stage before the first commit", stage: []string{"a.txt", "new\nline.txt"}, wantStaged: []string{"a.txt", "new\nline.txt"}},
		{name: "unstage before the first commit", stage: []string{"."}, unstage: []string{"a.txt"},
			wantStaged: []string{":(glob)*.txt", "doomed.txt", "new\nline.txt", "out", "with space.txt"}},
		{name: "no paths", committed: true, stage: []string{}, err: ErrNoPaths},
		{name: "missing path", committed: true, stage: []string{"nope.txt"}, err: ErrPathNotFound},
		{name: "dot-dot", committed: true, stage: []string{"../x"}, err: ErrOutside},
		{name: "absolute", committed: true, stage: []string{filepath.Join(outside, "x")}, err: ErrOutside},
		{name: "into .git", committed: true, stage: []string{".git/config"}, err: ErrOutside},
		{name: "NUL", committed: true, stage: []string{"a.txt\x00b"}, err: ErrInvalidPath},
		{name: "backslash", committed: true, stage: []string{`sub\a.txt`}, err: ErrInvalidPath},
		{name: "through a symlink out", committed: true, stage: []string{"out/x"}, err: ErrOutside},
		{name: "unstage outside", committed: true, unstage: []string{"../x"}, err: ErrOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, dir, "doomed.txt", "d\n")
			write(t, dir, "a.txt", "a\n")
			if tt.committed {
				commitAll(t, dir, "base")
			}
			write(t, dir, "a.txt", "a2\n")
			write(t, dir, "with space.txt", "s\n")
			write(t, dir, "new\nline.txt", "n\n")
			write(t, dir, ":(glob)*.txt", "g\n")
			if tt.committed {
				os.Remove(filepath.Join(dir, "doomed.txt"))
			}
			write(t, outside, "x", "outside")
			if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			r := openRepo(t, dir)
			var err error
			if tt.stage != nil {
				err = r.Stage(ctx, tt.stage)
			}
			if err == nil && tt.unstage != nil {
				err = r.Unstage(ctx, tt.unstage)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if st, _ := r.Status(ctx); len(st.Staged) != 0 {
					t.Errorf("a refused call staged %q", paths(st.Staged))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := r.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := paths(st.Staged)
			slices.Sort(got)
			if !slices.Equal(got, tt.wantStaged) {
				t.Errorf("staged %q, want %q", got, tt.wantStaged)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a2\n" {
				t.Errorf("the work tree changed: a.txt holds %q", b)
			}
		})
	}
}

func TestCommit(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, message, author, email string
		stage                        bool
		err                          error
	}{
		{name: "commit", message: "Fix the thing\n\nBecause.\n# not a comment\n", author: "Ada Lovelace", email: "ada@example.com", stage: true},
		{name: "empty message", message: " \n\t", author: "A", email: "a@example.com", stage: true, err: ErrEmptyMessage},
		{name: "nothing staged", message: "x", author: "A", email: "a@example.com", err: ErrNothingToCommit},
		{name: "no author", message: "x", author: "", email: "a@example.com", stage: true, err: ErrInvalidAuthor},
		{name: "author with angle brackets", message: "x", author: "A <evil@x>", email: "a@example.com", stage: true, err: ErrInvalidAuthor},
		{name: "email with a newline", message: "x", author: "A", email: "a@example.com\nX", stage: true, err: ErrInvalidAuthor},
	}
	for _, first := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(map[bool]string{true: "first commit/", false: ""}[first]+tt.name, func(t *testing.T) {
				dir := newRepo(t)
				if !first {
					write(t, dir, "base.txt", "b\n")
					commitAll(t, dir, "base")
				}
				write(t, dir, "change.txt", "c\n")
				r := openRepo(t, dir)
				if tt.stage {
					if err := r.Stage(ctx, []string{"change.txt"}); err != nil {
						t.Fatal(err)
					}
				}
				before, _ := r.Head(ctx)
				hash, err := r.Commit(ctx, tt.message, tt.author, tt.email)
				if tt.err != nil {
					if !errors.Is(err, tt.err) {
						t.Fatalf("err = %v, want %v", err, tt.err)
					}
					if after, _ := r.Head(ctx); after != before {
						t.Errorf("HEAD moved on a refused commit")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				page, err := r.Log(ctx, 1, "")
				if err != nil || len(page.Commits) != 1 {
					t.Fatal(err, page)
				}
				c := page.Commits[0]
				if c.Hash != hash || c.Subject != "Fix the thing" || c.Author != tt.author || c.Email != tt.email {
					t.Errorf("log shows %+v (hash %s)", c, hash)
				}
				if msg := git(t, dir, "log", "-1", "--format=%B"); msg != strings.TrimSpace(tt.message) {
					t.Errorf("message %q", msg)
				}
				if committer := git(t, dir, "log", "-1", "--format=%cn <%ce>"); committer != "Ada Lovelace <ada@example.com>" {
					t.Errorf("committer %q", committer)
				}
			})
		}
	}
}

// TestNothingRunsFromTheRepository: hooks, an fsmonitor command and a
// filter driver the agent configured in the repository do not run on any
// call — but do run when git is used plainly, so the test can fail.
func TestNothingRunsFromTheRepository(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	commitAll(t, dir, "base")
	git(t, dir, "branch", "other")
	marks := t.TempDir()
	for _, hook := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
		"post-index-change", "reference-transaction", "pre-auto-gc"} {
		write(t, dir, ".git/hooks/"+hook, "#!/bin/sh\ntouch "+filepath.Join(marks, hook)+"\n")
		if err := os.Chmod(filepath.Join(dir, ".git/hooks", hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "fsmonitor.sh", "#!/bin/sh\ntouch "+filepath.Join(marks, "fsmonitor")+"\n")
	os.Chmod(filepath.Join(dir, "fsmonitor.sh"), 0o755)
	git(t, dir, "config", "core.fsmonitor", filepath.Join(dir, "fsmonitor.sh"))
	git(t, dir, "config", "filter.evil.clean", "touch "+filepath.Join(marks, "clean")+"; cat")
	git(t, dir, "config", "filter.evil.smudge", "touch "+filepath.Join(marks, "smudge")+"; cat")
	git(t, dir, "config", "filter.evil.required", "true")
	git(t, dir, "config", "diff.evil.textconv", "touch "+filepath.Join(marks, "textconv")+"; cat")
	git(t, dir, "config", "diff.external", filepath.Join(dir, "fsmonitor.sh"))
	write(t, dir, ".gitattributes", "*.txt filter=evil diff=evil\n")
	write(t, dir, "a.txt", "changed\n")

	r := openRepo(t, dir)
	steps := []func() error{
		func() error { _, err := r.Status(ctx); return err },
		func() error { _, err := r.Diff(ctx, false, ""); return err },
		func() error { return r.Stage(ctx, []string{"."}) },
		func() error { _, err := r.Diff(ctx, true, ""); return err },
		func() error { _, err := r.Commit(ctx, "by a person", "P", "p@example.com"); return err },
		func() error { _, err := r.Log(ctx, 5, ""); return err },
		func() error { return r.Switch(ctx, "other") },
		func() error { return r.Switch(ctx, "main") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if ran, _ := os.ReadDir(marks); len(ran) != 0 {
		var names []string
		for _, e := range ran {
			names = append(names, e.Name())
		}
		t.Fatalf("ran from the repository: %v", names)
	}
	// The same repository with plain git runs them: the setup is live.
	write(t, dir, "a.txt", "again\n")
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "plain")
	for _, want := range []string{"pre-commit", "post-commit", "clean"} {
		if _, err := os.Stat(filepath.Join(marks, want)); err != nil {
			t.Errorf("plain git did not run %s: the test proves nothing", want)
		}
	}
}
