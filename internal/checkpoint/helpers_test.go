package checkpoint

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func newCheckpointer(t testing.TB, opts Options) *Checkpointer {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(t.TempDir(), "checkpoints")
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// writeTree writes files (path → content) under dir; a path ending in "*"
// is made executable.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		mode := fs.FileMode(0o644)
		if rest, ok := strings.CutSuffix(p, "*"); ok {
			p, mode = rest, 0o755
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// entry is what snapshot records of one path.
type entry struct {
	mode    fs.FileMode
	content string // file bytes, or a link's target
}

// snapshot records every file, link and directory under dir, skipping
// the top-level paths in skip.
func snapshot(t testing.TB, dir string, skip ...string) map[string]entry {
	t.Helper()
	snap := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if slices.Contains(skip, strings.Split(rel, "/")[0]) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.content, err = os.Readlink(p)
		case fi.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			e.content = string(b)
		}
		snap[rel] = e
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func sameSnapshot(t testing.TB, what string, got, want map[string]entry) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if g != want[k] {
			t.Errorf("%s: %s is %v %q, want %v %q", what, k, g.mode, g.content, want[k].mode, want[k].content)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s should not exist", what, k)
		}
	}
}

// runIn runs a command in dir with a clean git environment.
func runIn(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
	return string(out)
}

func byPath(files []FileChange) map[string]FileChange {
	m := map[string]FileChange{}
	for _, f := range files {
		m[f.Path] = f
	}
	return m
}

func planByPath(p Plan) map[string]PlanFile {
	m := map[string]PlanFile{}
	for _, f := range p.Files {
		m[f.Path] = f
	}
	return m
}

func mustRepoDir(t testing.TB, c *Checkpointer, ws string) string {
	t.Helper()
	dir, err := c.RepoDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
