package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestGlobMatcher(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"*.go", []string{"a.go", ".x.go"}, []string{"src/a.go", "a.gox", "a.go/b"}},
		{"**/*.go", []string{"a.go", "src/a.go", "src/deep/er/a.go"}, []string{"a.txt", "src/a.go.txt"}},
		{"src/**", []string{"src/a", "src/x/y/z"}, []string{"srcx/a", "a/src/b"}},
		{"src/**/test/*.go", []string{"src/test/a.go", "src/x/y/test/b.go"}, []string{"src/test/x/a.go", "test/a.go"}},
		{"**/**/*.md", []string{"a.md", "x/y/a.md"}, nil},
		{"a?c", []string{"abc", "a.c"}, []string{"ac", "abbc", "a/c"}},
		{"[ab]*.txt", []string{"a1.txt", "b.txt"}, []string{"c.txt"}},
		{"[^ab]x", []string{"cx"}, []string{"ax", "bx"}},
		{"*.{go,md}", []string{"a.go", "b.md"}, []string{"c.txt", "a.{go,md}"}},
		{"{src,lib}/**/*.{ts,tsx}", []string{"src/a.ts", "lib/x/b.tsx"}, []string{"test/a.ts", "src/a.js"}},
		{"{a/b,c}/*.go", []string{"a/b/x.go", "c/y.go"}, []string{"a/x.go"}},
		{"x{a,{b,c}}y", []string{"xay", "xby", "xcy"}, []string{"xy", "x{b,c}y"}},
		{"lit\\{a,b\\}", []string{"lit{a,b}"}, []string{"lita"}},
		{"[{]*", []string{"{x"}, []string{"x"}},
		{"./src//a.go/", []string{"src/a.go"}, nil},
		{"{,sub/}f", []string{"f", "sub/f"}, []string{"x/f"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			m, err := compileGlob(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.match {
				if !m.match(p) {
					t.Errorf("%q does not match %q", tt.pattern, p)
				}
			}
			for _, p := range tt.noMatch {
				if m.match(p) {
					t.Errorf("%q matches %q", tt.pattern, p)
				}
			}
		})
	}
}

func TestGlobMatcherErrors(t *testing.T) {
	tests := []struct{ pattern, err string }{
		{"", "pattern is required"},
		{"  ", "pattern is required"},
		{"/etc/*", "absolute"},
		{"../*", `contains ".."`},
		{"{..,a}/x", `contains ".."`},
		{"a/[b", "bad segment"},
		{"a\\", "bad segment"},
		{"{a,b", "unmatched {"},
		{"a}", "unmatched }"},
		{"./", "matches no file names"},
		{strings.Repeat("{a,b}", 9), "more than 256 alternatives"},
	}
	for _, tt := range tests {
		if _, err := compileGlob(tt.pattern); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("compileGlob(%q) = %v, want %q", tt.pattern, err, tt.err)
		}
	}
}

func TestGlob(t *testing.T) {
	ws := workspace(t, map[string]string{
		"a.go":             "package a\n",
		"a.txt":            "t",
		"b.go":             "package b\n",
		"src/main.go":      "package main\n",
		"src/main_test.go": "package main\n",
		"src/deep/x/y.go":  "package x\n",
		"web/app.ts":       "x",
		"web/ui.tsx":       "xy",
		".git/hooks/a.go":  "package hook\n",
		".github/ci.yml":   "on: push\n",
		"empty/":           "",
	})
	outside := workspace(t, map[string]string{"secret.go": "package secret\n", "sub/s.go": "package s\n"})
	must(t, os.Symlink(outside, filepath.Join(ws, "outdir")))
	must(t, os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(ws, "leak.go")))
	must(t, os.Symlink("src", filepath.Join(ws, "alias")))
	must(t, os.Symlink("a.go", filepath.Join(ws, "link.go")))
	must(t, os.Symlink("nowhere.go", filepath.Join(ws, "dangling.go")))

	tests := []struct {
		args      string
		status    string
		want      []string
		truncated bool
		output    string
	}{
		{args: `{"pattern": "*.go"}`, status: event.ToolOK, want: []string{"a.go", "b.go", "link.go"}, output: "3 files match *.go:\na.go\nb.go\nlink.go"},
		{args: `{"pattern": "**/*.go"}`, status: event.ToolOK,
			want: []string{"a.go", "b.go", "link.go", "src/deep/x/y.go", "src/main.go", "src/main_test.go"}},
		{args: `{"pattern": "**/*_test.go"}`, status: event.ToolOK, want: []string{"src/main_test.go"}},
		{args: `{"pattern": "web/*.{ts,tsx}"}`, status: event.ToolOK, want: []string{"web/app.ts", "web/ui.tsx"}},
		{args: `{"pattern": "**/*.yml"}`, status: event.ToolOK, want: []string{".github/ci.yml"}},
		{args: `{"pattern": "*.go", "path": "src"}`, status: event.ToolOK, want: []string{"src/main.go", "src/main_test.go"}},
		{args: `{"pattern": "**/y.go", "path": "alias"}`, status: event.ToolOK, want: []string{"alias/deep/x/y.go"}},
		{args: `{"pattern": "**", "path": "web"}`, status: event.ToolOK, want: []string{"web/app.ts", "web/ui.tsx"}},
		{args: `{"pattern": "*.rs"}`, status: event.ToolOK, want: []string{}, output: "No files match *.rs in ./."},
		{args: `{"pattern": "**/*.go", "limit": 2}`, status: event.ToolOK, want: []string{"a.go", "b.go"}, truncated: true, output: "stopped at 2 files"},
		{args: `{"pattern": "**/*.go", "limit": 6}`, status: event.ToolOK, want: []string{"a.go", "b.go", "link.go", "src/deep/x/y.go", "src/main.go", "src/main_test.go"}},
		{args: `{"pattern": "*", "path": "empty"}`, status: event.ToolOK, want: []string{}},
		{args: `{"pattern": "*.go", "path": ".."}`, status: event.ToolDenied, output: "outside the workspace"},
		{args: `{"pattern": "*.go", "path": "outdir"}`, status: event.ToolDenied, output: "symlink"},
		{args: `{"pattern": "*.go", "path": "outdir/sub"}`, status: event.ToolDenied},
		{args: `{"pattern": "*.go", "path": "a.go"}`, status: event.ToolError, output: "a.go is a file"},
		{args: `{"pattern": "*.go", "path": "nope"}`, status: event.ToolError, output: "nope does not exist"},
		{args: `{"pattern": "../*.go"}`, status: event.ToolError, output: "invalid arguments: pattern"},
		{args: `{"pattern": "[a"}`, status: event.ToolError, output: "invalid arguments: pattern"},
		{args: `{}`, status: event.ToolError, output: "invalid arguments: pattern is required"},
		{args: `{"pattern": "*", "limit": -1}`, status: event.ToolError, output: "invalid arguments: limit"},
		{args: `{"pattern": "*", "depth": 1}`, status: event.ToolError, output: `unknown field "depth"`},
	}
	tl := NewGlob(Config{})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if strings.Contains(res.Output, "secret") || strings.Contains(res.Output, "hook") {
				t.Errorf("output shows what it must not:\n%s", res.Output)
			}
			if tt.status != event.ToolOK {
				return
			}
			d := res.Data.(GlobData)
			var got []string
			for _, m := range d.Matches {
				got = append(got, m.Path)
			}
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("matches %q, want %q", got, tt.want)
			}
			if d.Matches == nil {
				t.Error("nil matches marshal as null")
			}
			if d.Truncated != tt.truncated || !d.OK {
				t.Errorf("ok %v truncated %v", d.OK, d.Truncated)
			}
		})
	}
}

func TestGlobDataShape(t *testing.T) {
	ws := workspace(t, map[string]string{"d/f.txt": "12345"})
	tl := NewGlob(Config{})
	res := call(t, tl, ws, `{"pattern": "**/*.txt"}`)
	b, _ := json.Marshal(res.Data)
	if want := `{"ok":true,"pattern":"**/*.txt","matches":[{"path":"d/f.txt","size":5}],"truncated":false,"ignored":0}`; string(b) != want {
		t.Errorf("data %s", b)
	}
	if l := tl.Label(json.RawMessage(`{"pattern": "*.go", "path": "src"}`)); l != "glob *.go in src" {
		t.Errorf("label %q", l)
	}
	if l := tl.Label(json.RawMessage(`{"pattern": "*.go", "include_ignored": true}`)); l != "glob *.go (incl. ignored)" {
		t.Errorf("label %q", l)
	}
	if in := tl.Intent(json.RawMessage(`{"pattern": "*"}`)); in.Effect != EffectNone {
		t.Errorf("intent %+v", in)
	}
}

// Directories no pattern can match below are never read, and the walk
// stops at walkMaxEntries.
func TestGlobPrunesAndCaps(t *testing.T) {
	files := map[string]string{"keep/a.go": "x"}
	for i := range 50 {
		files[fmt.Sprintf("skip/%02d/f.go", i)] = "x"
	}
	ws := workspace(t, files)
	wfs, err := openWorkspace(ws)
	must(t, err)
	defer wfs.Close()
	m, _ := compileGlob("keep/*.go")
	w := treeWalker{ctx: context.Background(), ws: wfs, match: m}
	var got []string
	must(t, w.walk(".", ".", func(f walkedFile) bool { got = append(got, f.rel); return true }))
	if !slices.Equal(got, []string{"keep/a.go"}) || w.entries > 4 {
		t.Errorf("got %q after %d entries", got, w.entries)
	}

	w = treeWalker{ctx: context.Background(), ws: wfs, maxEntries: 10}
	got = nil
	must(t, w.walk(".", ".", func(f walkedFile) bool { got = append(got, f.rel); return true }))
	if !w.capped || w.entries != 11 || len(got) != 4 {
		t.Errorf("capped %v after %d entries, %q", w.capped, w.entries, got)
	}
	out := formatGlob(GlobData{Pattern: "**", Matches: []GlobMatch{{Path: "a"}}, Truncated: true}, ".", true, hiddenCount{})
	if !strings.Contains(out, "search stopped after 200000 directory entries") {
		t.Errorf("output %q", out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := callEnv(t, ctx, NewGlob(Config{}), Env{Workspace: ws}, `{"pattern": "**"}`)
	if res.Status != event.ToolCancelled {
		t.Errorf("cancelled context: %s %s", res.Status, res.Output)
	}
}
