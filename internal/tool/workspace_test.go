package tool

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestResolve(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	outside := workspace(t, map[string]string{"secret.txt": "s"})
	links := map[string]string{
		"out-file":     filepath.Join(outside, "secret.txt"),
		"out-dir":      outside,
		"out-rel":      "../" + filepath.Base(outside),
		"in-dir":       filepath.Join(ws, "sub"),
		"in-rel":       "sub",
		"sub/up":       "../a.txt",
		"sub/chain":    "up",
		"dangling-out": filepath.Join(outside, "nope", "new.txt"),
		"dangling-in":  "sub/new.txt",
		"loop":         "loop",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	wfs, err := openWorkspace(ws)
	must(t, err)
	defer wfs.Close()

	tests := []struct {
		path    string
		rel     string // as spelt; "" when an error is expected
		real    string // symlinks followed; rel when empty
		escape  bool   // a *PathError
		symlink bool   // ... caused by a symlink
		msg     string // exact error message, when set
	}{
		{path: "a.txt", rel: "a.txt"},
		{path: "", rel: "."},
		{path: ".", rel: "."},
		{path: "./sub/../a.txt", rel: "a.txt"},
		{path: "missing/deeper/file", rel: "missing/deeper/file"},
		{path: "a.txt/under-a-file", rel: "a.txt/under-a-file"},
		{path: filepath.Join(ws, "sub", "b.txt"), rel: "sub/b.txt"},
		{path: "in-dir/b.txt", rel: "in-dir/b.txt", real: "sub/b.txt"},
		{path: "in-rel/new.txt", rel: "in-rel/new.txt", real: "sub/new.txt"},
		{path: "in-rel/up", rel: "in-rel/up", real: "a.txt"},
		{path: "sub/chain", rel: "sub/chain", real: "a.txt"},
		{path: "dangling-in", rel: "dangling-in", real: "sub/new.txt"},
		{path: "../x", escape: true, msg: `path "../x" is outside the workspace`},
		{path: "sub/../../x", escape: true},
		{path: "..", escape: true},
		{path: "/etc/passwd", escape: true, msg: `path "/etc/passwd" is outside the workspace`},
		{path: filepath.Join(outside, "secret.txt"), escape: true},
		{path: "out-file", escape: true, symlink: true},
		{path: "out-dir", escape: true, symlink: true},
		{path: "out-dir/secret.txt", escape: true, symlink: true},
		{path: "out-dir/not-yet/new.txt", escape: true, symlink: true},
		{path: "out-rel/secret.txt", escape: true, symlink: true,
			msg: `path "out-rel/secret.txt" is outside the workspace (a symlink leads out of it)`},
		{path: "dangling-out", escape: true, symlink: true},
		{path: "in-dir/../out-dir/x", escape: true, symlink: true},
		{path: "loop"},
		{path: "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rel, real, err := wfs.resolve(tt.path)
			var pe *PathError
			switch {
			case tt.rel != "":
				if err != nil {
					t.Fatalf("err = %v, want %s", err, tt.rel)
				}
				want := cmp.Or(tt.real, tt.rel)
				if rel != tt.rel || real != want {
					t.Fatalf("got %s, %s; want %s, %s", rel, real, tt.rel, want)
				}
			case tt.escape:
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v (%q), want *PathError", err, real)
				}
				if pe.ViaSymlink != tt.symlink {
					t.Errorf("ViaSymlink = %v, want %v", pe.ViaSymlink, tt.symlink)
				}
				if tt.msg != "" && err.Error() != tt.msg {
					t.Errorf("message %q, want %q", err.Error(), tt.msg)
				}
			default:
				if err == nil || errors.As(err, &pe) {
					t.Fatalf("err = %v, want a plain error", err)
				}
			}
		})
	}
}

func TestResolveSymlinkedWorkspace(t *testing.T) {
	real := workspace(t, map[string]string{"a.txt": "a"})
	link := filepath.Join(t.TempDir(), "ws")
	must(t, os.Symlink(real, link))
	// A link inside naming the workspace by its symlinked path.
	must(t, os.Symlink(filepath.Join(link, "a.txt"), filepath.Join(real, "abs-link")))
	wfs, err := openWorkspace(link)
	must(t, err)
	defer wfs.Close()

	for _, p := range []string{"a.txt", filepath.Join(link, "a.txt"), filepath.Join(real, "a.txt"), "abs-link"} {
		_, got, err := wfs.resolve(p)
		if err != nil || got != "a.txt" {
			t.Errorf("resolve(%q) = %q, %v; want a.txt", p, got, err)
		}
	}
	if _, _, err := wfs.resolve("../"); !errors.As(err, new(*PathError)) {
		t.Errorf("escape from symlinked workspace: err = %v", err)
	}
}

func TestOpenWorkspaceBad(t *testing.T) {
	for _, ws := range []string{"", filepath.Join(t.TempDir(), "missing")} {
		w, err := openWorkspace(ws)
		if err == nil {
			w.Close()
		}
		if err == nil || errors.As(err, new(*PathError)) {
			t.Errorf("openWorkspace(%q): err = %v, want a plain error", ws, err)
		}
	}
}

// A Root refuses to follow a symlink out even when resolve did not see it
// (it was swapped in afterwards), and the refusal reads as a denial.
func TestRootRefusalIsDenied(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "a"})
	outside := workspace(t, map[string]string{"secret.txt": "s"})
	must(t, os.Symlink(outside, filepath.Join(ws, "out")))
	wfs, err := openWorkspace(ws)
	must(t, err)
	defer wfs.Close()
	_, err = wfs.root.Open("out/secret.txt")
	if !escapes(err) {
		t.Fatalf("root.Open through a link out: err = %v, want an escape", err)
	}
	var pe *PathError
	if !errors.As(confined(err, "x"), &pe) || !pe.ViaSymlink {
		t.Errorf("confined(%v) = %v", err, confined(err, "x"))
	}
	if res := rootFailure(err, "x"); res.Status != event.ToolDenied {
		t.Errorf("rootFailure: %+v", res)
	}
	if escapes(fs.ErrNotExist) || escapes(nil) {
		t.Error("escapes is true for other errors")
	}
}
