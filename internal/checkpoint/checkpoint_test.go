package checkpoint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// baseTree is the workspace of the acceptance scenario before the run.
var baseTree = map[string]string{
	"edit.txt":          "alpha\nbeta\ngamma\n",
	"gone.txt":          "one\ntwo\nthree\n",
	"sed.txt":           "foo is here\nand more foo\nend\n",
	"keep.txt":          "untouched\n",
	"bin/run.sh*":       "#!/bin/sh\necho hi\n",
	".gitignore":        "*.log\nbuild/\n",
	"app.log":           "ignored log\n",
	"build/out.o":       "ignored object\n",
	"sub/.gitignore":    "local.cfg\n",
	"sub/local.cfg":     "ignored by a nested .gitignore\n",
	"sub/tracked.txt":   "tracked\n",
	"data/blob.bin":     "\x00\x01\x02binary\xff",
	"data/crlf.txt":     "dos\r\nline\r\n",
	"data/no-eol.txt":   "no newline at end",
	"with space/ü.txt":  "unicode name\n",
	"quote\"name.txt":   "odd name\n",
	"nested/deep/a.txt": "deep\n",
}

// runScenario is the scripted run: write a file, edit another,
// delete a third, sed -i a fourth through a real shell; it also touches
// ignored files, which no checkpoint may see.
func runScenario(t *testing.T, ws string) {
	t.Helper()
	writeTree(t, ws, map[string]string{"new.txt": "brand\nnew\n", "edit.txt": "alpha\nBETA\ngamma\n", "app.log": "more log\n"})
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	runIn(t, ws, "/bin/sh", "-c", "sed -i 's/foo/bar/' sed.txt")
}

func TestAcceptanceRevertAndRevertTheRevert(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, baseTree)
	before := snapshot(t, ws)

	c0, err := c.Take(ctx, ws, Meta{SessionID: "ses_1", RunID: "run_1", Reason: "before run"})
	if err != nil {
		t.Fatal(err)
	}
	if c0.Files == nil || len(c0.Files) != 0 || c0.Parent != "" {
		t.Errorf("the first checkpoint is the baseline, with no files: %+v", c0)
	}
	// What it holds: every file but the ignored ones and nothing else.
	stored := strings.Split(strings.TrimSuffix(runIn(t, ws, "git", "--git-dir", mustRepoDir(t, c, ws), "ls-tree", "-r", "--name-only", "-z", c0.Commit), "\x00"), "\x00")
	var wantStored []string
	for p := range baseTree {
		p = strings.TrimSuffix(p, "*")
		if !slices.Contains([]string{"app.log", "build/out.o", "sub/local.cfg"}, p) {
			wantStored = append(wantStored, p)
		}
	}
	slices.Sort(wantStored)
	if !slices.Equal(stored, wantStored) {
		t.Errorf("checkpoint holds %q, want %q", stored, wantStored)
	}

	runScenario(t, ws)
	changed := snapshot(t, ws)
	c1, err := c.Take(ctx, ws, Meta{SessionID: "ses_1", RunID: "run_1", ToolCallID: "call_9", Reason: "after tool"})
	if err != nil {
		t.Fatal(err)
	}
	if c1.Parent != c0.ID {
		t.Errorf("parent = %q, want %q", c1.Parent, c0.ID)
	}
	if c1.Meta.ToolCallID != "call_9" || c1.Meta.RunID != "run_1" {
		t.Errorf("meta = %+v", c1.Meta)
	}

	want := []struct {
		path           string
		status         Status
		added, removed int
		diffHas        []string
	}{
		{"edit.txt", Modified, 1, 1, []string{"-beta\n", "+BETA\n"}},
		{"gone.txt", Deleted, 0, 3, []string{"-one\n", "-three\n"}},
		{"new.txt", Added, 2, 0, []string{"+brand\n", "+new\n"}},
		{"sed.txt", Modified, 2, 2, []string{"-foo is here\n", "+bar is here\n", "+and more bar\n", " end\n"}},
	}
	changes, err := c.Changes(ctx, ws, c0.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, files := range [][]FileChange{c1.Files, changes} {
		if len(files) != len(want) {
			t.Fatalf("%d files changed, want %d: %+v", len(files), len(want), files)
		}
	}
	took, got := byPath(c1.Files), byPath(changes)
	for _, w := range want {
		t.Run(w.path, func(t *testing.T) {
			for _, f := range []FileChange{took[w.path], got[w.path]} {
				if f.Status != w.status || f.Added != w.added || f.Removed != w.removed || f.Binary {
					t.Errorf("%+v, want %s +%d -%d", f, w.status, w.added, w.removed)
				}
			}
			for _, s := range w.diffHas {
				if !strings.Contains(got[w.path].Diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, got[w.path].Diff)
				}
			}
			if took[w.path].Diff != "" {
				t.Error("Take carries diff text; only Changes should")
			}
		})
	}

	// Revert the run: every file as before, byte for byte; ignored files
	// keep what the run wrote to them.
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID, Meta: Meta{SessionID: "ses_1"}})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]Action{"edit.txt": ActionRestore, "gone.txt": ActionRecreate, "new.txt": ActionDelete, "sed.txt": ActionRestore}
	if len(plan.Files) != len(actions) {
		t.Fatalf("plan = %+v", plan.Files)
	}
	for _, f := range plan.Files {
		if f.Action != actions[f.Path] || f.Conflict || !f.Applied || f.Error != "" {
			t.Errorf("plan file %+v, want action %s applied", f, actions[f.Path])
		}
	}
	if plan.Before == nil || plan.After == nil || plan.Before.Meta.Reason != "before rollback" || plan.Before.Meta.SessionID != "ses_1" {
		t.Fatalf("plan checkpoints: before %+v after %+v", plan.Before, plan.After)
	}
	reverted := before
	reverted["app.log"] = changed["app.log"]
	sameSnapshot(t, "after revert", snapshot(t, ws), reverted)

	// Revert the revert: the run's changes are back.
	if _, err := c.Restore(ctx, ws, RestoreRequest{From: plan.Before.ID, To: plan.After.ID}); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after reverting the revert", snapshot(t, ws), changed)

	// And "everything since c0" is the revert again, with no conflicts.
	all, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: Current})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all.Files {
		if f.Conflict || !f.Applied {
			t.Errorf("restore since c0: %+v", f)
		}
	}
	sameSnapshot(t, "after restoring everything since c0", snapshot(t, ws), reverted)
}

func TestTakeWithNothingChanged(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n"})
	a, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Take(ctx, ws, Meta{Reason: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Files == nil || len(b.Files) != 0 || b.tree != a.tree || b.Commit == a.Commit || b.Parent != a.ID || !b.CreatedAt.After(a.CreatedAt) {
		t.Fatalf("second checkpoint %+v after %+v", b, a)
	}
	changes, err := c.Changes(ctx, ws, a.ID, Current)
	if err != nil || len(changes) != 0 {
		t.Fatalf("changes = %v, %v", changes, err)
	}
	// A restore with nothing to write takes no checkpoints around it.
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: a.ID, To: Current})
	if err != nil || len(plan.Files) != 0 || plan.Before != nil || plan.After != nil {
		t.Fatalf("empty restore: %+v %v", plan, err)
	}
	if list, _ := c.List(ctx, ws); len(list) != 2 {
		t.Errorf("%d checkpoints after an empty restore, want 2", len(list))
	}
}

func TestChangesRenameBinaryTruncatedAndCurrent(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{MaxDiffBytes: 300})
	ws := t.TempDir()
	long := strings.Repeat("a line of text\n", 50)
	writeTree(t, ws, map[string]string{"old/name.txt": "one\ntwo\nthree\nfour\nfive\n", "img.bin": "\x00PNG\x01", "long.txt": long, "mode.sh": "echo\n"})
	a, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "old"), filepath.Join(ws, "new")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"new/name.txt": "one\ntwo\nthree\nfour\nfive\nsix\n", "img.bin": "\x00PNG\x02", "long.txt": strings.ToUpper(long), "mode.sh*": "echo\n"})

	files, err := c.Changes(ctx, ws, a.ID, Current)
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(files)
	tests := []struct {
		path      string
		check     func(FileChange) bool
		what      string
		truncated bool
	}{
		{"new/name.txt", func(f FileChange) bool {
			return f.Status == Renamed && f.OldPath == "old/name.txt" && f.Added == 1 && f.Removed == 0 && strings.Contains(f.Diff, "+six\n")
		}, "renamed from old/name.txt, +1", false},
		{"img.bin", func(f FileChange) bool { return f.Binary && f.Diff == "" && f.Status == Modified }, "binary, no diff", false},
		{"long.txt", func(f FileChange) bool {
			return f.Added == 50 && f.Removed == 50 && len(f.Diff) <= 300 && strings.HasSuffix(f.Diff, "\n")
		}, "capped at 300 bytes on a line end", true},
		{"mode.sh", func(f FileChange) bool { return f.Status == Modified && strings.Contains(f.Diff, "new mode 100755") }, "mode change", false},
	}
	if len(files) != len(tests) {
		t.Fatalf("files = %+v", files)
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f := got[tt.path]
			if !tt.check(f) || f.Truncated != tt.truncated {
				t.Errorf("%+v, want %s (truncated %v)", f, tt.what, tt.truncated)
			}
		})
	}
}

func TestConflictIsNotOverwritten(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, baseTree)
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, ws)
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	// A person edits one file of the span and recreates another after it.
	later := map[string]string{"edit.txt": "a person's edit\n", "new.txt": "kept by hand\n"}
	writeTree(t, ws, later)
	if err := os.Remove(filepath.Join(ws, "new.txt")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"gone.txt": "written again\n"})
	delete(later, "new.txt")
	later["gone.txt"] = "written again\n"

	dry, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		action   Action
		conflict bool
	}{
		{"edit.txt", ActionRestore, true},
		{"gone.txt", ActionRestore, true}, // deleted in the span, recreated after it
		{"new.txt", ActionNone, false},    // created in the span, already gone again
		{"sed.txt", ActionRestore, false},
	}
	got := planByPath(dry)
	for _, tt := range tests {
		f := got[tt.path]
		if f.Action != tt.action || f.Conflict != tt.conflict || f.Applied || (tt.conflict && f.Reason == "") {
			t.Errorf("%s: %+v, want %s conflict=%v", tt.path, f, tt.action, tt.conflict)
		}
	}
	if list, _ := c.List(ctx, ws); len(list) != 2 {
		t.Errorf("a dry run took checkpoints: %d", len(list))
	}

	plan, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID})
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range later {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != content {
			t.Errorf("conflicting %s overwritten: %q", p, b)
		}
		if f := planByPath(plan)[p]; f.Applied {
			t.Errorf("conflicting %s reported applied", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sed.txt")); string(b) != baseTree["sed.txt"] {
		t.Errorf("sed.txt not restored: %q", b)
	}

	// Named explicitly, a conflicting file is restored; the person's
	// version is in the checkpoint taken before.
	plan, err = c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"edit.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := planByPath(plan)["edit.txt"]; !f.Applied || len(plan.Files) != 1 {
		t.Errorf("explicit path: %+v", plan.Files)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "edit.txt")); string(b) != baseTree["edit.txt"] {
		t.Errorf("edit.txt = %q", b)
	}
	undo, err := c.Changes(ctx, ws, plan.Before.ID, plan.After.ID)
	if err != nil || len(undo) != 1 || !strings.Contains(undo[0].Diff, "-a person's edit") {
		t.Errorf("the person's edit is not in the checkpoint before the rollback: %+v %v", undo, err)
	}
}

func TestWorkspaceGitDirUntouched(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitignore": "*.tmp\n"})
	runIn(t, ws, "git", "init", "-q")
	runIn(t, ws, "git", "add", "a.txt", ".gitignore")
	runIn(t, ws, "git", "commit", "-q", "-m", "first")
	writeTree(t, ws, map[string]string{"a.txt": "a staged change\n"})
	runIn(t, ws, "git", "add", "a.txt") // the index now differs from HEAD
	gitBefore := snapshot(t, filepath.Join(ws, ".git"))
	statusBefore := runIn(t, ws, "git", "status", "--porcelain")

	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c0.Files {
		if f.Path == ".git" || strings.HasPrefix(f.Path, ".git/") {
			t.Errorf("the workspace's own .git is checkpointed: %s", f.Path)
		}
	}
	writeTree(t, ws, map[string]string{"b.txt": "b changed\n", "c.txt": "new\n", "x.tmp": "ignored\n"})
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Changes(ctx, ws, c0.ID, Current); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prune(ctx, ws, 1); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, ".git", snapshot(t, filepath.Join(ws, ".git")), gitBefore)
	if s := runIn(t, ws, "git", "status", "--porcelain"); s != statusBefore {
		t.Errorf("git status changed:\n%s\nwas\n%s", s, statusBefore)
	}
}

func TestSymlinksAreNotFollowedForWrites(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"x.txt": "outside\n", "f.txt": "outside f\n"})
	outsideBefore := snapshot(t, outside)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"esc/x.txt": "inside\n", "f.txt": "inside f\n", "g.txt": "g\n"})
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	// Replace the directory and a file by links to the outside.
	for _, p := range []string{"esc", "f.txt"} {
		if err := os.RemoveAll(filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, p), filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../etc/passwd", filepath.Join(ws, "g.txt.link")); err != nil {
		t.Fatal(err)
	}
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}

	// Only the file under the link: refused, nothing written outside.
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"esc/x.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := planByPath(plan)["esc/x.txt"]; f.Applied || !strings.Contains(f.Error, "symbolic link") {
		t.Errorf("write through a link: %+v", f)
	}
	sameSnapshot(t, "outside", snapshot(t, outside), outsideBefore)

	// The whole span: links removed first, then the files written inside.
	plan, err = c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if !f.Applied {
			t.Errorf("%+v", f)
		}
	}
	sameSnapshot(t, "outside", snapshot(t, outside), outsideBefore)
	for p, want := range map[string]string{"esc/x.txt": "inside\n", "f.txt": "inside f\n"} {
		fi, err := os.Lstat(filepath.Join(ws, p))
		b, _ := os.ReadFile(filepath.Join(ws, p))
		if err != nil || !fi.Mode().IsRegular() || string(b) != want {
			t.Errorf("%s: %v %v %q", p, fi, err, b)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "g.txt.link")); !os.IsNotExist(err) {
		t.Errorf("link added in the span not deleted: %v", err)
	}

	// Restoring the span's end recreates a link only if it stays inside.
	plan, err = c.Restore(ctx, ws, RestoreRequest{From: c1.ID, To: Current})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if strings.HasPrefix(f.Path, "g.txt.link") || f.Path == "esc" || f.Path == "f.txt" {
			if f.Applied || !strings.Contains(f.Error, "outside the workspace") {
				t.Errorf("link to the outside recreated: %+v", f)
			}
		}
	}
	sameSnapshot(t, "outside", snapshot(t, outside), outsideBefore)
}

func TestBadInputChangesNothing(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n"})
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"a.txt": "b\n"})
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, ws)
	tests := []struct {
		name string
		req  RestoreRequest
		want error
	}{
		{"malformed id", RestoreRequest{From: "HEAD", To: c1.ID}, ErrBadRequest},
		{"option-like id", RestoreRequest{From: "--output=/tmp/x", To: c1.ID}, ErrBadRequest},
		{"unknown id", RestoreRequest{From: "ckp_00000000000000000000000000", To: c1.ID}, ErrNotFound},
		{"dot dot", RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"../a.txt"}}, ErrInvalidPath},
		{"absolute", RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"/etc/passwd"}}, ErrInvalidPath},
		{"unclean", RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"x/../a.txt"}}, ErrInvalidPath},
		{"not in span", RestoreRequest{From: c0.ID, To: c1.ID, Paths: []string{"b.txt"}}, ErrNotInSpan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Restore(ctx, ws, tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := c.Changes(ctx, ws, "nope", Current); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Changes with a bad id: %v", err)
	}
	if _, err := c.Take(ctx, filepath.Join(ws, "missing"), Meta{}); !errors.Is(err, ErrBadWorkspace) {
		t.Errorf("Take of a missing workspace: %v", err)
	}
	if _, err := c.Prune(ctx, ws, 0); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Prune with no cap: %v", err)
	}
	sameSnapshot(t, "workspace", snapshot(t, ws), snap)
	if list, err := c.List(ctx, ws); err != nil || len(list) != 2 {
		t.Errorf("checkpoints after bad requests: %d %v", len(list), err)
	}
}

func TestConcurrentTake(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			writeTree(t, ws, map[string]string{"f" + string(rune('a'+i)) + ".txt": "x\n"})
			_, err := c.Take(ctx, ws, Meta{ToolCallID: "call_" + string(rune('a'+i))})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.List(ctx, ws)
	if err != nil || len(list) != n {
		t.Fatalf("%d checkpoints, %v", len(list), err)
	}
	// One chain: each checkpoint's parent is the one before it.
	for i, cp := range list {
		want := ""
		if i > 0 {
			want = list[i-1].ID
		}
		if cp.Parent != want {
			t.Errorf("checkpoint %d: parent %q, want %q", i, cp.Parent, want)
		}
	}
	seen := map[string]bool{}
	for i, cp := range list {
		if seen[cp.ID] || (i > 0 && !cp.CreatedAt.After(list[i-1].CreatedAt)) {
			t.Errorf("checkpoint %d: id %s repeated or not after the one before", i, cp.ID)
		}
		seen[cp.ID] = true
	}
}

func TestNestedRepositoryIsSkipped(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"top.txt": "top\n", "vendor/lib/a.txt": "v1\n"})
	lib := filepath.Join(ws, "vendor", "lib")
	runIn(t, lib, "git", "init", "-q")
	runIn(t, lib, "git", "add", "a.txt")
	runIn(t, lib, "git", "commit", "-q", "-m", "v1")
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"vendor/lib/a.txt": "v2\n", "top.txt": "top 2\n"})
	runIn(t, lib, "git", "commit", "-q", "-am", "v2")
	libGit := snapshot(t, filepath.Join(lib, ".git"))
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := byPath(c1.Files)["vendor/lib"]; !ok || f.Status != Modified {
		t.Fatalf("the nested repository's new commit is not a change: %+v", c1.Files)
	}
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	got := planByPath(plan)
	if f := got["vendor/lib"]; f.Action != ActionSkip || f.Applied || f.Reason == "" {
		t.Errorf("nested repository: %+v", f)
	}
	if f := got["top.txt"]; !f.Applied {
		t.Errorf("top.txt: %+v", f)
	}
	if b, _ := os.ReadFile(filepath.Join(lib, "a.txt")); string(b) != "v2\n" {
		t.Errorf("a file of the nested repository was written: %q", b)
	}
	sameSnapshot(t, "nested .git", snapshot(t, filepath.Join(lib, ".git")), libGit)
}

// The workspace's .gitattributes may ask for end-of-line conversion,
// ident expansion or a filter; a checkpoint must still hold the bytes.
func TestRestoreKeepsBytesWhateverGitattributesSay(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	files := map[string]string{
		".gitattributes": "* text=auto eol=lf\n*.txt text ident\n*.dat filter=nosuch\n",
		"crlf.txt":       "$Id$\r\nwindows\r\nlines\r\n",
		"mixed.dat":      "a\r\nb\nc\r\n",
	}
	writeTree(t, ws, files)
	want := snapshot(t, ws)
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"crlf.txt", "mixed.dat"} {
		if err := os.Remove(filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: Current}); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "restored", snapshot(t, ws), want)
}

func TestStaleGitLockIsCleared(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{Timeout: 5 * time.Second})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n"})
	if _, err := c.Take(ctx, ws, Meta{}); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(mustRepoDir(t, c, ws), "index.lock")
	tests := []struct {
		name    string
		age     time.Duration
		wantErr bool
	}{
		{"a live git's lock is respected", 0, true},
		{"a lock older than the timeout is removed", time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-tt.age)
			if err := os.Chtimes(lock, old, old); err != nil {
				t.Fatal(err)
			}
			writeTree(t, ws, map[string]string{"a.txt": tt.name})
			_, err := c.Take(ctx, ws, Meta{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			_ = os.Remove(lock)
		})
	}
}

// A checkpoint cancelled mid-way (its run was stopped) kills git, which
// leaves its index.lock; the next checkpoint must not fail on it.
func TestCancelledTakeLeavesNoLock(t *testing.T) {
	ctx := testCtx(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	// A git whose "add" takes the index lock and then hangs.
	slow := filepath.Join(t.TempDir(), "slow-git")
	script := "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = add ]; then : > \"$GIT_DIR/index.lock\"; exec sleep 30; fi; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "checkpoints")
	hanging := newCheckpointer(t, Options{Dir: dir, Git: slow})
	c := newCheckpointer(t, Options{Dir: dir})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"a.txt": "a\n"})

	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := hanging.Take(short, ws, Meta{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the hanging take: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mustRepoDir(t, c, ws), "index.lock")); !os.IsNotExist(err) {
		t.Fatalf("index.lock left behind: %v", err)
	}
	if _, err := c.Take(ctx, ws, Meta{}); err != nil {
		t.Fatal(err)
	}
}

// A workspace that contains the checkpoint directory (a workspace that is
// the home directory holds the data dir) must not checkpoint it, or every
// checkpoint would hold the ones before it; the same for Options.Exclude.
func TestExcludedDirectoriesInsideTheWorkspace(t *testing.T) {
	ctx := testCtx(t)
	ws := t.TempDir()
	data := filepath.Join(ws, ".local", "share", "caduceus")
	c := newCheckpointer(t, Options{Dir: filepath.Join(data, "checkpoints"), Exclude: []string{data, filepath.Join(ws, "odd [dir]*")}})
	writeTree(t, ws, map[string]string{
		"a.txt": "a\n", ".gitignore": "!.local/\n", ".local/share/caduceus/caduceus.db": "db\n",
		"odd [dir]*/x": "x\n", "odd [dir]/kept.txt": "kept\n", ".local/other.txt": "other\n",
	})
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"a.txt": "b\n", ".local/share/caduceus/caduceus.db": "db changed\n", "odd [dir]*/x": "y\n"})
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Files) != 1 || c1.Files[0].Path != "a.txt" {
		t.Errorf("files = %+v, want a.txt only", c1.Files)
	}
	stored := runIn(t, ws, "git", "--git-dir", mustRepoDir(t, c, ws), "ls-tree", "-r", "--name-only", c0.Commit)
	want := ".gitignore\n.local/other.txt\na.txt\nodd [dir]/kept.txt\n"
	if stored != want {
		t.Errorf("checkpoint holds\n%s\nwant\n%s", stored, want)
	}
}

func TestExcludingATrackedDirectoryDropsIt(t *testing.T) {
	ctx := testCtx(t)
	ws := t.TempDir()
	dir := filepath.Join(t.TempDir(), "checkpoints")
	writeTree(t, ws, map[string]string{"a.txt": "a\n", "cache/blob": "big\n"})
	if _, err := newCheckpointer(t, Options{Dir: dir}).Take(ctx, ws, Meta{}); err != nil {
		t.Fatal(err)
	}
	c := newCheckpointer(t, Options{Dir: dir, Exclude: []string{filepath.Join(ws, "cache")}})
	cp, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Files) != 1 || cp.Files[0].Path != "cache/blob" || cp.Files[0].Status != Deleted {
		t.Errorf("files = %+v, want cache/blob dropped", cp.Files)
	}
	// Dropped from the checkpoint, not from the disk; and reverting the
	// checkpoint that dropped it does not write there either.
	writeTree(t, ws, map[string]string{"cache/blob": "changed since\n"})
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: cp.Parent, To: cp.ID, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := planByPath(plan)["cache/blob"]; f.Action != ActionSkip || f.Applied {
		t.Errorf("excluded path in a restore: %+v", f)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "cache", "blob")); err != nil || string(b) != "changed since\n" {
		t.Errorf("cache/blob: %q %v", b, err)
	}
}

func TestRestoreKeepsTheExecutableBit(t *testing.T) {
	ctx := testCtx(t)
	c := newCheckpointer(t, Options{})
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"deleted.sh*": "#!/bin/sh\n", "made-exec.txt": "plain\n", "made-plain.sh*": "#!/bin/sh\n", "edited.sh*": "#!/bin/sh\necho 1\n"})
	want := snapshot(t, ws)
	c0, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "deleted.sh")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, map[string]string{"made-exec.txt*": "plain\n", "made-plain.sh": "#!/bin/sh\n", "edited.sh": "#!/bin/sh\necho 2\n"})
	c1, err := c.Take(ctx, ws, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Files) != 4 {
		t.Fatalf("files = %+v", c1.Files)
	}
	plan, err := c.Restore(ctx, ws, RestoreRequest{From: c0.ID, To: c1.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if !f.Applied {
			t.Errorf("%+v", f)
		}
	}
	sameSnapshot(t, "modes", snapshot(t, ws), want)
}
