package tool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
		"dangling-out": filepath.Join(outside, "nope", "new.txt"),
		"dangling-in":  "sub/new.txt",
		"loop":         "loop",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(ws, name)))
	}

	tests := []struct {
		path    string
		want    string // relative to ws; "" when an error is expected
		escape  bool   // a *PathError
		symlink bool   // ... caused by a symlink
		msg     string // exact error message, when set
	}{
		{path: "a.txt", want: "a.txt"},
		{path: "", want: "."},
		{path: ".", want: "."},
		{path: "./sub/../a.txt", want: "a.txt"},
		{path: "missing/deeper/file", want: "missing/deeper/file"},
		{path: "a.txt/under-a-file", want: "a.txt/under-a-file"},
		{path: filepath.Join(ws, "sub", "b.txt"), want: "sub/b.txt"},
		{path: "in-dir/b.txt", want: "in-dir/b.txt"},
		{path: "in-rel/new.txt", want: "in-rel/new.txt"},
		{path: "dangling-in", want: "dangling-in"},
		{path: "../x", escape: true, msg: `path "../x" is outside the workspace`},
		{path: "sub/../../x", escape: true},
		{path: "..", escape: true},
		{path: "/etc/passwd", escape: true, msg: `path "/etc/passwd" is outside the workspace`},
		{path: filepath.Join(outside, "secret.txt"), escape: true},
		{path: "out-file", escape: true, symlink: true},
		{path: "out-dir", escape: true, symlink: true},
		{path: "out-dir/secret.txt", escape: true, symlink: true},
		{path: "out-dir/not-yet/new.txt", escape: true, symlink: true},
		{path: "out-rel/secret.txt", escape: true, symlink: true},
		{path: "dangling-out", escape: true, symlink: true},
		{path: "in-dir/../out-dir/x", escape: true, symlink: true},
		{path: "loop"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Resolve(ws, tt.path)
			var pe *PathError
			switch {
			case tt.want != "":
				if err != nil {
					t.Fatalf("err = %v, want %s", err, tt.want)
				}
				if want := filepath.Join(ws, filepath.FromSlash(tt.want)); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			case tt.escape:
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v (%q), want *PathError", err, got)
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

	for _, p := range []string{"a.txt", filepath.Join(link, "a.txt"), filepath.Join(real, "a.txt")} {
		got, err := Resolve(link, p)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", p, err)
		}
		if rel := relPath(link, got); rel != "a.txt" {
			t.Errorf("relPath(%q) = %q, want a.txt", got, rel)
		}
	}
	if _, err := Resolve(link, "../"); !errors.As(err, new(*PathError)) {
		t.Errorf("escape from symlinked workspace: err = %v", err)
	}
}

func TestResolveBadWorkspace(t *testing.T) {
	for _, ws := range []string{"", filepath.Join(t.TempDir(), "missing")} {
		_, err := Resolve(ws, "a")
		if err == nil || errors.As(err, new(*PathError)) {
			t.Errorf("Resolve(%q): err = %v, want a plain error", ws, err)
		}
	}
}
