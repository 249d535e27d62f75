package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "1\n2\n3\n")
	write(t, dir, "with space.txt", "x\n")
	write(t, dir, "new\nline.txt", "x\n")
	write(t, dir, "old name.txt", "a file long enough to be seen as renamed\nline two\nline three\n")
	write(t, dir, "bin.dat", "\x00\x01")
	commitAll(t, dir, "base")
	write(t, dir, "a.txt", "1\nTWO\n3\n4\n")          // unstaged: +2 -1
	write(t, dir, "with space.txt", "x\ny\n")         // staged: +1
	write(t, dir, "new\nline.txt", "")                // staged: -1
	git(t, dir, "mv", "old name.txt", "new name.txt") // staged rename
	write(t, dir, "bin.dat", "\x00\x02")              // staged binary
	git(t, dir, "add", "with space.txt", "new\nline.txt", "bin.dat")

	r := openRepo(t, dir)
	type file struct {
		path, old     string
		added, remove int
		binary        bool
	}
	tests := []struct {
		name   string
		staged bool
		path   string
		want   []file
	}{
		{name: "unstaged", want: []file{{path: "a.txt", added: 2, remove: 1}}},
		{name: "staged", staged: true, want: []file{
			{path: "bin.dat", binary: true},
			{path: "new\nline.txt", remove: 1},
			{path: "new name.txt", old: "old name.txt"},
			{path: "with space.txt", added: 1},
		}},
		{name: "staged, one path", staged: true, path: "with space.txt", want: []file{{path: "with space.txt", added: 1}}},
		{name: "a path with no changes", path: "with space.txt", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := r.Diff(ctx, tt.staged, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			var got []file
			added, removed := 0, 0
			for _, f := range d.Files {
				got = append(got, file{path: f.Path, old: f.OldPath, added: f.Added, remove: f.Removed, binary: f.Binary})
				added, removed = added+f.Added, removed+f.Removed
				if !strings.HasPrefix(f.Patch, "diff --git ") || strings.Count(f.Patch, "\ndiff --git ") != 0 {
					t.Errorf("%q: patch %q", f.Path, f.Patch)
				}
				// Each file's patch names it (quoted by git when needed).
				if want := fmt.Sprintf("%q", "b/"+f.Path); !strings.Contains(f.Patch, "b/"+f.Path) && !strings.Contains(f.Patch, want) {
					t.Errorf("patch of %q does not name it:\n%s", f.Path, f.Patch)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || d.Added != added || d.Removed != removed {
				t.Errorf("got %+v (+%d -%d)\nwant %+v", got, d.Added, d.Removed, tt.want)
			}
		})
	}
	d, _ := r.Diff(ctx, false, "a.txt")
	if p := d.Files[0].Patch; !strings.Contains(p, "-2\n+TWO\n") || !strings.Contains(p, "+4\n") {
		t.Errorf("patch:\n%s", p)
	}
	for _, bad := range []string{"../x", "/etc/passwd", ".git/config", "a\x00b"} {
		if _, err := r.Diff(ctx, false, bad); Code(err) == "" || !(errors.Is(err, ErrOutside) || errors.Is(err, ErrInvalidPath)) {
			t.Errorf("Diff(%q): %v", bad, err)
		}
	}
}

func TestDiffBeforeFirstCommit(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "1\n2\n")
	git(t, dir, "add", "a.txt")
	d, err := openRepo(t, dir).Diff(context.Background(), true, "")
	if err != nil || len(d.Files) != 1 || d.Files[0].Added != 2 || !strings.Contains(d.Files[0].Patch, "new file mode") {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestLog(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r := openRepo(t, dir)
	if page, err := r.Log(ctx, 10, ""); err != nil || len(page.Commits) != 0 || page.Next != "" {
		t.Fatalf("empty repository: %+v %v", page, err)
	}
	subjects := []string{"one", "two: with\x1fa unit separator", "three ünï", "four", "five"}
	for i, s := range subjects {
		write(t, dir, "f.txt", fmt.Sprint(i))
		commitAll(t, dir, s)
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := r.Log(ctx, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Commits {
			got = append(got, c.Subject)
			if len(c.Hash) != 40 || c.Author != "Setup" || c.Email != "setup@example.com" || c.Date.IsZero() {
				t.Errorf("commit %+v", c)
			}
		}
		if pages == 0 { // HEAD moves: the pages go on from where they began
			write(t, dir, "f.txt", "later")
			commitAll(t, dir, "later")
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	want := []string{"five", "four", "three ünï", "two: with\x1fa unit separator", "one"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("log %q\nwant %q", got, want)
	}
	for _, bad := range []string{"x", "abc.1", strings.Repeat("a", 40) + ".-1", strings.Repeat("g", 40) + ".1", "--all.1"} {
		if _, err := r.Log(ctx, 2, bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

func TestBranchesAndSwitch(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "shared.txt", "main\n")
	write(t, dir, "free.txt", "free\n")
	commitAll(t, dir, "base")
	git(t, dir, "checkout", "-q", "-b", "feature/x")
	write(t, dir, "shared.txt", "feature\n")
	write(t, dir, "only-feature.txt", "feature\n")
	commitAll(t, dir, "feature")
	git(t, dir, "checkout", "-q", "main")
	r := openRepo(t, dir)

	bs, err := r.Branches(ctx)
	if err != nil || len(bs) != 2 || bs[0].Name != "feature/x" || bs[0].Current || bs[1].Name != "main" || !bs[1].Current || len(bs[0].Commit) != 40 {
		t.Fatalf("branches %+v %v", bs, err)
	}

	tests := []struct {
		name   string
		setup  func()
		branch string
		err    error
		after  string // the branch checked out afterwards
	}{
		{name: "bad name", branch: "a..b", err: ErrInvalidBranch, after: "main"},
		{name: "option-like name", branch: "--orphan", err: ErrInvalidBranch, after: "main"},
		{name: "missing", branch: "nope", err: ErrNoBranch, after: "main"},
		{name: "a change git would overwrite", setup: func() { write(t, dir, "shared.txt", "edited\n") },
			branch: "feature/x", err: ErrWouldOverwrite, after: "main"},
		{name: "an untracked file git would overwrite", setup: func() {
			git(t, dir, "checkout", "-q", "shared.txt")
			write(t, dir, "only-feature.txt", "precious, untracked")
		}, branch: "feature/x", err: ErrWouldOverwrite, after: "main"},
		{name: "a change that does not collide is carried", setup: func() {
			os.Remove(filepath.Join(dir, "only-feature.txt"))
			write(t, dir, "free.txt", "edited\n")
		}, branch: "feature/x", after: "feature/x"},
		{name: "the current branch", branch: "feature/x", after: "feature/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			before := snapshotFiles(t, dir)
			err := r.Switch(ctx, tt.branch)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if after := snapshotFiles(t, dir); after != before {
					t.Errorf("the work tree changed on a refused switch")
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if h, _ := r.Head(ctx); h.Branch != tt.after {
				t.Errorf("on %q, want %q", h.Branch, tt.after)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "free.txt")); string(b) != "edited\n" {
		t.Errorf("carried change lost: %q", b)
	}
}

// snapshotFiles is the work tree's files and contents, .git aside.
func snapshotFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d != nil && d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s=%q\n", p, c)
		}
		return nil
	})
	return b.String()
}
