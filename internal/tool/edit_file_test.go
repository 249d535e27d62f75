package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

const goSrc = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("hello")
}
`

func TestEditFile(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "top secret\n"})
	files := map[string]string{
		"main.go":   goSrc,
		"ten.txt":   numbered(1, 10),
		"crlf.txt":  "alpha\r\nbeta\r\n",
		"tabs.go":   "func f() {\n\treturn 1\n}\n",
		"bin.dat":   "a\x00b",
		"dir/x.txt": "x\n",
	}
	setup := func(t *testing.T) string {
		ws := workspace(t, files)
		must(t, os.Symlink(outside, filepath.Join(ws, "outdir")))
		must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "leak.txt")))
		must(t, os.Symlink(filepath.Join(outside, "gone.txt"), filepath.Join(ws, "dangling-out")))
		must(t, os.Symlink("ten.txt", filepath.Join(ws, "ten-link")))
		return ws
	}

	tests := []struct {
		name      string
		args      string
		status    string
		output    []string // substrings
		file      string   // for ok: the file and its content afterwards
		content   string
		area      LineArea
		replaced  int
		diffLines []string // substrings of Data.Diff
	}{
		{name: "unique replacement", args: `{"path": "ten.txt", "old_string": "line 5\n", "new_string": "five\nand a half\n"}`,
			status: event.ToolOK, output: []string{"Edited ten.txt: replaced 1 occurrence at lines 5-6.", "@@ -2,7 +2,8 @@"},
			file: "ten.txt", content: strings.Replace(numbered(1, 10), "line 5\n", "five\nand a half\n", 1),
			area: LineArea{5, 6}, replaced: 1, diffLines: []string{"--- a/ten.txt\n+++ b/ten.txt\n", "-line 5\n+five\n+and a half\n line 6\n"}},
		{name: "replace within a line", args: `{"path": "tabs.go", "old_string": "return 1", "new_string": "return 2"}`,
			status: event.ToolOK, file: "tabs.go", content: "func f() {\n\treturn 2\n}\n", area: LineArea{2, 2}, replaced: 1,
			diffLines: []string{"-\treturn 1\n+\treturn 2\n"}},
		{name: "replace all", args: `{"path": "main.go", "old_string": "hello", "new_string": "bye", "replace_all": true}`,
			status: event.ToolOK, output: []string{"replaced 2 occurrences at lines 6-7"},
			file: "main.go", content: strings.ReplaceAll(goSrc, "hello", "bye"), area: LineArea{6, 7}, replaced: 2},
		{name: "deletion", args: `{"path": "ten.txt", "old_string": "line 10\n", "new_string": ""}`,
			status: event.ToolOK, file: "ten.txt", content: numbered(1, 9), area: LineArea{9, 9}, replaced: 1,
			diffLines: []string{"@@ -7,4 +7,3 @@", "-line 10\n"}},
		{name: "through a symlink inside", args: `{"path": "ten-link", "old_string": "line 1\n", "new_string": "first\n"}`,
			status: event.ToolOK, file: "ten.txt", content: "first\n" + numbered(2, 10), area: LineArea{1, 1}, replaced: 1,
			diffLines: []string{"--- a/ten-link\n"}},
		{name: "crlf kept", args: `{"path": "crlf.txt", "old_string": "beta", "new_string": "gamma"}`,
			status: event.ToolOK, file: "crlf.txt", content: "alpha\r\ngamma\r\n", area: LineArea{2, 2}, replaced: 1},

		{name: "ambiguous", args: `{"path": "main.go", "old_string": "fmt.Println(\"hello\")", "new_string": "x"}`,
			status: event.ToolError, output: []string{"old_string occurs 2 times in main.go (lines 6, 7)", "replace_all"}},
		{name: "not found", args: `{"path": "ten.txt", "old_string": "line 11", "new_string": "x"}`,
			status: event.ToolError, output: []string{"old_string was not found in ten.txt; the file is unchanged"}},
		{name: "whitespace differs", args: `{"path": "tabs.go", "old_string": "func f() {\n    return 1\n}", "new_string": "x"}`,
			status: event.ToolError, output: []string{"not found", "matches near line 1 if whitespace is ignored"}},
		{name: "line endings differ", args: `{"path": "crlf.txt", "old_string": "alpha\nbeta", "new_string": "x"}`,
			status: event.ToolError, output: []string{"matches near line 1 if whitespace is ignored", "line endings"}},
		{name: "whitespace differs further down", args: `{"path": "main.go", "old_string": "func main() {\n  fmt.Println", "new_string": "x"}`,
			status: event.ToolError, output: []string{"near line 5"}},
		{name: "line numbers copied", args: `{"path": "ten.txt", "old_string": "     3\tline 3\n     4\tline 4", "new_string": "x"}`,
			status: event.ToolError, output: []string{"line numbers"}},
		{name: "identical", args: `{"path": "ten.txt", "old_string": "line 1", "new_string": "line 1"}`,
			status: event.ToolError, output: []string{"invalid arguments: old_string and new_string are identical"}},
		{name: "empty old_string", args: `{"path": "ten.txt", "old_string": "", "new_string": "x"}`,
			status: event.ToolError, output: []string{"invalid arguments: old_string must not be empty"}},
		{name: "missing new_string", args: `{"path": "ten.txt", "old_string": "line 1"}`,
			status: event.ToolError, output: []string{"invalid arguments: new_string is required"}},
		{name: "missing old_string", args: `{"path": "ten.txt", "new_string": "x"}`,
			status: event.ToolError, output: []string{"invalid arguments: old_string is required"}},
		{name: "missing file", args: `{"path": "nope.txt", "old_string": "a", "new_string": "b"}`,
			status: event.ToolError, output: []string{"nope.txt does not exist; use write_file"}},
		{name: "directory", args: `{"path": "dir", "old_string": "a", "new_string": "b"}`,
			status: event.ToolError, output: []string{"dir is a directory"}},
		{name: "binary", args: `{"path": "bin.dat", "old_string": "a", "new_string": "b"}`,
			status: event.ToolError, output: []string{"binary"}},
		{name: "dotdot", args: `{"path": "../x.txt", "old_string": "a", "new_string": "b"}`,
			status: event.ToolDenied, output: []string{"outside the workspace"}},
		{name: "symlink to a file outside", args: `{"path": "leak.txt", "old_string": "top", "new_string": "no"}`,
			status: event.ToolDenied, output: []string{"symlink"}},
		{name: "symlinked dir outside", args: `{"path": "outdir/secret.txt", "old_string": "top", "new_string": "no"}`,
			status: event.ToolDenied, output: []string{"symlink"}},
		{name: "dangling symlink outside", args: `{"path": "dangling-out", "old_string": "a", "new_string": "b"}`,
			status: event.ToolDenied},
		{name: "unknown field", args: `{"path": "ten.txt", "old": "a", "new_string": "b"}`,
			status: event.ToolError, output: []string{`invalid arguments: unknown field "old"`}},
	}
	tl := NewEditFile(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := setup(t)
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			for _, o := range tt.output {
				if !strings.Contains(res.Output, o) {
					t.Errorf("output lacks %q:\n%s", o, res.Output)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "top secret\n" {
				t.Errorf("outside file changed: %q", b)
			}
			if tt.status != event.ToolOK {
				// A failed edit leaves every file as it was.
				for p, want := range files {
					if strings.HasSuffix(p, "/") {
						continue
					}
					if got, _ := os.ReadFile(filepath.Join(ws, p)); string(got) != want {
						t.Errorf("%s changed by a failed edit: %q", p, got)
					}
				}
				return
			}
			got, err := os.ReadFile(filepath.Join(ws, tt.file))
			must(t, err)
			if string(got) != tt.content {
				t.Errorf("%s holds %q, want %q", tt.file, got, tt.content)
			}
			d := res.Data.(EditFileData)
			if !d.OK || d.Area != tt.area || d.Replacements != tt.replaced || d.DiffTruncated {
				t.Errorf("data %+v; want area %v, %d replacements", d, tt.area, tt.replaced)
			}
			if !strings.HasSuffix(res.Output, "\n\n"+strings.TrimRight(d.Diff, "\n")) {
				t.Errorf("output lacks the diff:\n%s", res.Output)
			}
			for _, s := range tt.diffLines {
				if !strings.Contains(d.Diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, d.Diff)
				}
			}
			if patched := applyUnified(t, splitLines(files[tt.file]), d.Diff); patched != tt.content {
				t.Errorf("diff does not patch the old file into the new one: %q", patched)
			}
		})
	}
}

func TestEditFileKeepsModeAndReportsDataShape(t *testing.T) {
	ws := workspace(t, map[string]string{"s.sh": "echo a\n"})
	must(t, os.Chmod(filepath.Join(ws, "s.sh"), 0o700))
	res := call(t, NewEditFile(Config{}), ws, `{"path": "./s.sh", "old_string": "a", "new_string": "b"}`)
	if res.Status != event.ToolOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "s.sh")); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	want := `{"ok":true,"file":{"path":"./s.sh","viewer_path":"s.sh"},"area":{"start_line":1,"end_line":1},"replacements":1,` +
		`"diff":"--- a/s.sh\n+++ b/s.sh\n@@ -1 +1 @@\n-echo a\n+echo b\n"}`
	if b, _ := json.Marshal(res.Data); string(b) != want {
		t.Errorf("data\n%s\nwant\n%s", b, want)
	}
	if res.Output != "Edited s.sh: replaced 1 occurrence at line 1.\n\n--- a/s.sh\n+++ b/s.sh\n@@ -1 +1 @@\n-echo a\n+echo b" {
		t.Errorf("output %q", res.Output)
	}
}

// A replace_all over a large file stays fast and its diff is capped.
func TestEditFileLargeDiffIsCapped(t *testing.T) {
	ws := workspace(t, map[string]string{"big.txt": strings.Repeat("x = 1\npad\npad\npad\npad\npad\npad\npad\n", 5000)})
	res := call(t, NewEditFile(Config{}), ws, `{"path": "big.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}`)
	if res.Status != event.ToolOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	d := res.Data.(EditFileData)
	if d.Replacements != 5000 || !d.DiffTruncated || len(d.Diff) > editDiffCap+200 || !strings.Contains(d.Diff, "diff cut at") {
		t.Errorf("replacements %d, truncated %v, diff %d bytes", d.Replacements, d.DiffTruncated, len(d.Diff))
	}
	if d.Area != (LineArea{1, 39993}) {
		t.Errorf("area %v", d.Area)
	}
	got, _ := os.ReadFile(filepath.Join(ws, "big.txt"))
	if strings.Count(string(got), "x = 2") != 5000 {
		t.Error("not every occurrence replaced")
	}
}

func TestEditFileIntentAndLabel(t *testing.T) {
	tl := NewEditFile(Config{})
	in := tl.Intent(json.RawMessage(`{"path": "a.go", "old_string": "x", "new_string": "y"}`))
	if in.Effect != EffectWrite || in.Action != "edit a.go" || len(in.Paths) != 1 || in.Paths[0] != "a.go" || in.Invalid {
		t.Errorf("intent %+v", in)
	}
	for _, bad := range []string{`{"path": "a.go", "old_string": "x", "new_string": "x"}`, `{"path": "a.go"}`, `[]`} {
		if in := tl.Intent(json.RawMessage(bad)); !in.Invalid || in.Effect != EffectWrite {
			t.Errorf("%s: intent %+v", bad, in)
		}
	}
	if l := tl.Label(json.RawMessage(`{"path": "src/a.go", "old_string": "x", "new_string": "y"}`)); l != "edit src/a.go" {
		t.Errorf("label %q", l)
	}
}
