package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestWriteFile(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "top secret\n"})
	setup := func(t *testing.T) string {
		ws := workspace(t, map[string]string{
			"old.txt":      "old\n",
			"dir/x.txt":    "x\n",
			"sub/keep.txt": "keep\n",
		})
		must(t, os.Symlink(outside, filepath.Join(ws, "outdir")))
		must(t, os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(ws, "dangling-out")))
		must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "leak.txt")))
		must(t, os.Symlink("sub", filepath.Join(ws, "alias")))
		must(t, os.Symlink("sub/later.txt", filepath.Join(ws, "dangling-in")))
		must(t, os.Symlink("old.txt", filepath.Join(ws, "old-link")))
		return ws
	}

	tests := []struct {
		name    string
		args    string
		status  string
		output  string // substring
		file    string // workspace file that must then hold content
		content string
		data    *WriteFileData
	}{
		{name: "new file", args: `{"path": "new.txt", "content": "a\nb\n"}`, status: event.ToolOK,
			output: "Created new.txt (2 lines, 4 bytes).", file: "new.txt", content: "a\nb\n",
			data: &WriteFileData{OK: true, File: FileRef{"new.txt", "new.txt"}, Area: LineArea{1, 2}, Bytes: 4, Created: true}},
		{name: "overwrite", args: `{"path": "./old.txt", "content": "one line, no newline"}`, status: event.ToolOK,
			output: "Overwrote old.txt (1 line, 20 bytes).", file: "old.txt", content: "one line, no newline",
			data: &WriteFileData{OK: true, File: FileRef{"./old.txt", "old.txt"}, Area: LineArea{1, 1}, Bytes: 20}},
		{name: "empty content", args: `{"path": "empty.txt", "content": ""}`, status: event.ToolOK,
			output: "(0 lines, 0 bytes)", file: "empty.txt", content: "",
			data: &WriteFileData{OK: true, File: FileRef{"empty.txt", "empty.txt"}, Created: true}},
		{name: "parents are created", args: `{"path": "a/b/c/d.go", "content": "package d\n"}`, status: event.ToolOK,
			file: "a/b/c/d.go", content: "package d\n"},
		{name: "through a symlinked dir inside", args: `{"path": "alias/new.txt", "content": "n"}`, status: event.ToolOK,
			output: "Created alias/new.txt", file: "sub/new.txt", content: "n"},
		{name: "through a dangling symlink inside", args: `{"path": "dangling-in", "content": "later"}`, status: event.ToolOK,
			file: "sub/later.txt", content: "later"},
		{name: "through a file symlink keeps the link", args: `{"path": "old-link", "content": "via link\n"}`, status: event.ToolOK,
			output: "Overwrote old-link", file: "old.txt", content: "via link\n"},
		{name: "absolute inside", args: `{"path": "WS/abs.txt", "content": "x"}`, status: event.ToolOK, file: "abs.txt", content: "x"},
		{name: "directory", args: `{"path": "dir", "content": "x"}`, status: event.ToolError, output: "dir is a directory"},
		{name: "trailing slash", args: `{"path": "newdir/", "content": "x"}`, status: event.ToolError, output: "names a directory"},
		{name: "parent is a file", args: `{"path": "old.txt/x", "content": "x"}`, status: event.ToolError, output: "not a directory"},
		{name: "dotdot", args: `{"path": "../evil.txt", "content": "x"}`, status: event.ToolDenied, output: "outside the workspace"},
		{name: "absolute outside", args: `{"path": "OUT/evil.txt", "content": "x"}`, status: event.ToolDenied},
		{name: "symlinked dir outside", args: `{"path": "outdir/evil.txt", "content": "x"}`, status: event.ToolDenied, output: "symlink"},
		{name: "symlinked dir outside, new subdir", args: `{"path": "outdir/deep/evil.txt", "content": "x"}`, status: event.ToolDenied},
		{name: "dangling symlink outside", args: `{"path": "dangling-out", "content": "x"}`, status: event.ToolDenied, output: "symlink"},
		{name: "file symlink outside", args: `{"path": "leak.txt", "content": "x"}`, status: event.ToolDenied},
		{name: "no path", args: `{"content": "x"}`, status: event.ToolError, output: "invalid arguments: path is required"},
		{name: "no content", args: `{"path": "x.txt"}`, status: event.ToolError, output: "invalid arguments: content is required"},
		{name: "content not a string", args: `{"path": "x.txt", "content": 3}`, status: event.ToolError, output: `field "content" must be a string`},
		{name: "unknown field", args: `{"path": "x.txt", "content": "", "mode": "0755"}`, status: event.ToolError, output: `unknown field "mode"`},
	}
	tl := NewWriteFile(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := setup(t)
			args := strings.NewReplacer("WS/", ws+"/", "OUT/", outside+"/").Replace(tt.args)
			res := call(t, tl, ws, args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if args == tt.args && (strings.Contains(res.Output, ws) || strings.Contains(res.Output, outside)) {
				t.Errorf("output leaks a runner path: %s", res.Output)
			}
			if tt.status != event.ToolOK {
				if res.Data != nil {
					t.Errorf("data on failure: %+v", res.Data)
				}
			} else {
				got, err := os.ReadFile(filepath.Join(ws, tt.file))
				must(t, err)
				if string(got) != tt.content {
					t.Errorf("%s holds %q, want %q", tt.file, got, tt.content)
				}
				if tt.data != nil && res.Data.(WriteFileData) != *tt.data {
					t.Errorf("data %+v, want %+v", res.Data, *tt.data)
				}
			}
			// Nothing escapes, and no temporary file is left behind.
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "top secret\n" {
				t.Errorf("outside file changed: %q", b)
			}
			for _, p := range []string{"evil.txt", "new.txt", "deep"} {
				if _, err := os.Lstat(filepath.Join(outside, p)); err == nil {
					t.Errorf("%s written outside the workspace", p)
				}
			}
			filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
				if strings.Contains(d.Name(), ".tmp-") {
					t.Errorf("temporary file left: %s", p)
				}
				return nil
			})
		})
	}
}

func TestWriteFileKeepsModeAndLinks(t *testing.T) {
	ws := workspace(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(ws, "run.sh"), 0o750))
	must(t, os.Symlink("run.sh", filepath.Join(ws, "link.sh")))
	tl := NewWriteFile(Config{})
	if res := call(t, tl, ws, `{"path": "link.sh", "content": "#!/bin/sh\necho hi\n"}`); res.Status != event.ToolOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	fi, err := os.Lstat(filepath.Join(ws, "run.sh"))
	must(t, err)
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750", fi.Mode().Perm())
	}
	if li, err := os.Lstat(filepath.Join(ws, "link.sh")); err != nil || li.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.sh is no longer a symlink: %v %v", li, err)
	}
	if res := call(t, tl, ws, `{"path": "fresh.txt", "content": "x"}`); res.Status != event.ToolOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "fresh.txt")); fi.Mode().Perm() != newFileMode {
		t.Errorf("new file mode %v, want %v", fi.Mode().Perm(), newFileMode)
	}
}

func TestWriteFileIntentAndLabel(t *testing.T) {
	tl := NewWriteFile(Config{})
	in := tl.Intent(json.RawMessage(`{"path": "src/a.go", "content": "x"}`))
	if in.Effect != EffectWrite || in.Action != "write src/a.go" || len(in.Paths) != 1 || in.Paths[0] != "src/a.go" || in.Invalid {
		t.Errorf("intent %+v", in)
	}
	for _, bad := range []string{`{"path": "a"}`, `{"content": "x"}`, `{`, `{"path": "a", "content": "", "x": 1}`} {
		if in := tl.Intent(json.RawMessage(bad)); !in.Invalid || in.Effect != EffectWrite {
			t.Errorf("%s: intent %+v", bad, in)
		}
	}
	if l := tl.Label(json.RawMessage(`{"path": "./src//a.go", "content": "x"}`)); l != "write src/a.go" {
		t.Errorf("label %q", l)
	}
	if l := tl.Label(json.RawMessage(`{}`)); l != "write (invalid arguments)" {
		t.Errorf("label %q", l)
	}
}

// The tools of this change survive hostile arguments like the built-in ones
// (TestBadArgumentsNeverPanic), and report a missing workspace as a fault of
// the machinery.
func TestFileToolsBadArguments(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "a\n"})
	bad := []string{
		``, `null`, `{`, `[]`, `"x"`, `42`, `{"path": null}`, `{"path": {}}`, `{"path": ["a"]}`,
		`{"command": 1}`, `{"question": false}`, `{"depth": 1e99}`, `{"limit": 1.5}`, `{"offset": "1"}`,
		`{"path": "a\u0000b"}`, `{"pattern": "a\u0000b"}`, `{"path": "a\u0000b", "content": "", "old_string": "a", "new_string": "b", "pattern": "a"}`,
		`{} {}`, `{"zzz": 1}`, `{"pattern": "x", "limit": 1e99}`, `{"content": null, "path": "a"}`,
	}
	for _, tl := range []Tool{NewWriteFile(Config{}), NewEditFile(Config{}), NewGlob(Config{}), NewGrep(Config{})} {
		name := tl.Spec().Name
		for _, args := range bad {
			tl.Label(json.RawMessage(args))
			tl.Intent(json.RawMessage(args))
			res, err := tl.Run(context.Background(), Env{Workspace: ws}, json.RawMessage(args))
			if err != nil {
				t.Errorf("%s(%s): machinery error %v", name, args, err)
				continue
			}
			if name == NameGrep && args == `{"pattern": "a\u0000b"}` && res.Status == event.ToolOK {
				continue // a NUL is a valid regexp; it just matches no text file
			}
			if res.Status != event.ToolError || (!strings.HasPrefix(res.Output, "invalid arguments: ") && !strings.Contains(res.Output, "NUL")) {
				t.Errorf("%s(%s): status %s output %q", name, args, res.Status, res.Output)
			}
		}
		if _, err := tl.Run(context.Background(), Env{}, json.RawMessage(`{"path": "a", "content": "", "pattern": "a"}`)); err == nil {
			t.Errorf("%s with no workspace: no error", name)
		}
	}
}
