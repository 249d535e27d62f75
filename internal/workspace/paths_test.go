package workspace

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPathEscapesRefused tries every way out of the workspace on every
// operation that takes a path: each is refused with its stable code, and
// nothing outside (or in .git) is read or written.
func TestPathEscapesRefused(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	ws := filepath.Join(base, "ws")
	for _, d := range []string{outside, filepath.Join(ws, ".git"), filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{
		filepath.Join(outside, "secret.txt"): "outside secret",
		filepath.Join(ws, ".git", "config"):  "[remote] url = https://token@example.com",
		filepath.Join(ws, "sub", "ok.txt"):   "inside",
	} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, outside, filepath.Join(ws, "out-dir"))                              // a directory out
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "out-abs")) // absolute, out
	symlink(t, "../outside/secret.txt", filepath.Join(ws, "out-rel"))              // relative, out
	symlink(t, ".git/config", filepath.Join(ws, "to-git"))                         // inside, into .git
	symlink(t, ".git", filepath.Join(ws, "git-dir"))
	before, beforeOut := snapshot(t, ws), snapshot(t, outside)
	w := open(t, ws)

	tests := []struct {
		path string
		want error
	}{
		{"..", ErrOutside},
		{"../outside/secret.txt", ErrOutside},
		{"sub/../../outside/secret.txt", ErrOutside},
		{"sub/..", ErrOutside}, // stays inside, but ".." segments are refused outright
		{"/etc/passwd", ErrOutside},
		{filepath.Join(outside, "secret.txt"), ErrOutside},
		{`sub\ok.txt`, ErrInvalidPath},
		{`..\outside\secret.txt`, ErrInvalidPath},
		{"sub/ok.txt\x00.png", ErrInvalidPath},
		{".git/config", ErrOutside},
		{"sub/.git", ErrOutside},
		{"out-dir/secret.txt", ErrOutside},
		{"out-abs", ErrOutside},
		{"out-rel", ErrOutside},
		{"to-git", ErrOutside},
		{"git-dir/config", ErrOutside},
	}
	ctx := context.Background()
	ops := map[string]func(p string) error{
		"Read":  func(p string) error { _, err := w.Read(p, 1<<20); return err },
		"Open":  func(p string) error { _, _, err := w.Open(p); return err },
		"Stat":  func(p string) error { _, _, err := w.Stat(p); return err },
		"Write": func(p string) error { _, err := w.Write(p, []byte("pwned"), ""); return err },
		"WriteOver": func(p string) error {
			_, err := w.Write(p, []byte("pwned"), ETag([]byte("outside secret")))
			return err
		},
		"List":    func(p string) error { _, err := w.List(ctx, p, "", 0); return err },
		"Search":  func(p string) error { _, err := w.Search(ctx, "secret", SearchOptions{Dir: p}); return err },
		"Resolve": func(p string) error { _, err := w.Resolve(p); return err },
	}
	for _, tt := range tests {
		for op, fn := range ops {
			t.Run(op+"/"+tt.path, func(t *testing.T) {
				err := fn(tt.path)
				// List and Search of a file, or Resolve of a link that
				// os.Root follows to a file, may fail for another reason
				// first; what matters is that none succeeds.
				if err == nil {
					t.Fatalf("%s(%q) succeeded", op, tt.path)
				}
				if !errors.Is(err, tt.want) && !(op == "List" || op == "Search") {
					t.Errorf("%s(%q) = %v (code %q), want %s", op, tt.path, err, Code(err), tt.want)
				}
				if (op == "List" || op == "Search") && Code(err) == "" {
					t.Errorf("%s(%q) = %v: no stable code", op, tt.path, err)
				}
			})
		}
	}
	// Creating a file under a link into .git creates no directory there.
	if _, err := w.Write("git-dir/newdir/x", []byte("x"), ""); !errors.Is(err, ErrOutside) {
		t.Errorf("create through a link into .git: %v", err)
	}
	if got := snapshot(t, ws); !maps.Equal(got, before) {
		t.Errorf("workspace changed:\n%v\nwas\n%v", got, before)
	}
	if got := snapshot(t, outside); !maps.Equal(got, beforeOut) {
		t.Errorf("outside changed:\n%v", got)
	}
}

// TestSpecialFilesRefused: a FIFO, socket or device is listed but never
// opened, and opening one that replaced a file cannot hang.
func TestSpecialFilesRefused(t *testing.T) {
	ws := tree(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	for _, p := range []string{"fifo", "sub/.gitignore"} {
		if err := syscall.Mkfifo(filepath.Join(ws, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, ws)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, op := range []func() error{
			func() error { _, err := w.Read("fifo", 1<<20); return err },
			func() error { _, _, err := w.Open("fifo"); return err },
			func() error { _, err := w.Write("fifo", []byte("x"), ""); return err },
			func() error { _, err := w.Write("fifo", []byte("x"), `"x"`); return err },
		} {
			if err := op(); !errors.Is(err, ErrNotRegular) && !errors.Is(err, ErrConflict) {
				t.Errorf("fifo: %v, want %s", err, ErrNotRegular)
			}
		}
		if _, err := w.Read("/dev/null", 1); !errors.Is(err, ErrOutside) {
			t.Errorf("/dev/null: %v", err)
		}
		for _, op := range []func() error{
			func() error { _, err := w.List(context.Background(), "fifo", "", 0); return err },
			func() error { _, err := w.Search(context.Background(), "x", SearchOptions{Dir: "fifo"}); return err },
			func() error { _, err := w.Write("fifo/x", []byte("x"), `"x"`); return err },
		} {
			if err := op(); !errors.Is(err, ErrNotDir) {
				t.Errorf("fifo as a directory: %v, want %s", err, ErrNotDir)
			}
		}
		// A FIFO named .gitignore is skipped, not read.
		if page, err := w.List(context.Background(), "sub", "", 0); err != nil || len(page.Entries) != 2 {
			t.Errorf("list beside a FIFO .gitignore: %+v %v", page, err)
		}
		if res, err := w.Search(context.Background(), "b", SearchOptions{}); err != nil || len(res.Matches) == 0 {
			t.Errorf("search beside a FIFO .gitignore: %+v %v", res, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an operation on a FIFO blocked")
	}
	page, err := w.List(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range page.Entries {
		kinds = append(kinds, e.Name+":"+string(e.Kind))
	}
	if got := strings.Join(kinds, " "); got != "sub:dir a.txt:file fifo:other" {
		t.Errorf("listed %s", got)
	}
}

func TestCode(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&ConflictError{Path: "a", ETag: `"x"`}, "edit_conflict"},
		{&TooLargeError{Path: "a", Size: 2, Limit: 1}, "file_too_large"},
		{errors.Join(errors.New("wrapped"), ErrOutside), "path_outside_workspace"},
		{errors.New("disk on fire"), ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Code(tt.err); got != tt.want {
			t.Errorf("Code(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
