package tool

import (
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// ignoreWorkspace is a small project whose .gitignore files use git's
// rules: a directory pattern, a name pattern, an anchored one, one with a
// middle slash (anchored too), a negation, and a nested file that adds and
// re-includes. Every file holds "needle" so grep shows which are searched.
func ignoreWorkspace(t *testing.T) string {
	t.Helper()
	return workspace(t, map[string]string{
		".gitignore": "# build output and deps\n" +
			"node_modules/\n*.log\n/build\n!keep.log\ndocs/*.tmp\n\n",
		"app.js":                    "needle",
		"secret.txt":                "needle", // only sub/.gitignore names it
		"debug.log":                 "needle",
		"keep.log":                  "needle",
		"node_modules/pkg/index.js": "needle",
		"build/out.js":              "needle",
		"src/build/gen.js":          "needle", // /build is anchored to the root
		"docs/a.tmp":                "needle",
		"docs/sub/b.tmp":            "needle", // docs/*.tmp is one level only
		"sub/.gitignore":            "secret.txt\n!important.log\nout/\n",
		"sub/secret.txt":            "needle",
		"sub/important.log":         "needle", // re-included below the root's *.log
		"sub/other.log":             "needle",
		"sub/out":                   "needle", // a file: out/ matches directories only
		"sub/deeper/out/x.js":       "needle",
		".git/config":               "needle",
		".git/HEAD":                 "ref",
	})
}

var (
	// shownFiles are the files git would not ignore (.gitignore files hold
	// no needle).
	shownFiles = []string{"app.js", "docs/sub/b.tmp", "keep.log", "secret.txt", "src/build/gen.js",
		"sub/important.log", "sub/out"}
	// ignoredFiles are those git ignores, .git aside.
	ignoredFiles = []string{"build/out.js", "debug.log", "docs/a.tmp", "node_modules/pkg/index.js",
		"sub/deeper/out/x.js", "sub/other.log", "sub/secret.txt"}
)

func grepPaths(d GrepData) []string {
	var out []string
	for _, m := range d.Matches {
		out = append(out, m.Path)
	}
	return out
}

func TestGrepHonoursGitignore(t *testing.T) {
	ws := ignoreWorkspace(t)
	all := slices.Sorted(slices.Values(append(slices.Clone(shownFiles), ignoredFiles...)))
	tests := []struct {
		name    string
		args    string
		want    []string
		ignored int
		note    string // substring of the output
	}{
		{name: "default", args: `{"pattern": "needle"}`, want: shownFiles, ignored: 7,
			note: "7 entries ignored by .gitignore not shown (build/, debug.log, docs/a.tmp, …); set include_ignored to include them"},
		{name: "include_ignored", args: `{"pattern": "needle", "include_ignored": true}`, want: all},
		{name: "start below the root obeys the root's rules", args: `{"pattern": "needle", "path": "sub"}`,
			want: []string{"sub/important.log", "sub/out"}, ignored: 3, note: "(sub/deeper/out/, sub/other.log, sub/secret.txt)"},
		{name: "an ignored directory named outright is searched", args: `{"pattern": "needle", "path": "node_modules"}`,
			want: []string{"node_modules/pkg/index.js"}},
		{name: "an ignored file named outright is searched", args: `{"pattern": "needle", "path": "debug.log"}`,
			want: []string{"debug.log"}},
		{name: "glob filter counts only what it could match", args: `{"pattern": "needle", "glob": "*.log"}`,
			want: []string{"keep.log", "sub/important.log"}, ignored: 5},
	}
	tl := NewGrep(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != event.ToolOK {
				t.Fatalf("status %s: %s", res.Status, res.Output)
			}
			d := res.Data.(GrepData)
			if got := grepPaths(d); !slices.Equal(got, tt.want) {
				t.Errorf("searched %q\nwant     %q", got, tt.want)
			}
			if d.Ignored != tt.ignored {
				t.Errorf("ignored = %d, want %d", d.Ignored, tt.ignored)
			}
			if !strings.Contains(res.Output, tt.note) || (tt.ignored == 0) == strings.Contains(res.Output, "include_ignored") {
				t.Errorf("output lacks %q or says include_ignored when nothing was hidden:\n%s", tt.note, res.Output)
			}
			if strings.Contains(res.Output, ".git/") {
				t.Errorf(".git searched:\n%s", res.Output)
			}
		})
	}
}

func TestGlobHonoursGitignore(t *testing.T) {
	ws := ignoreWorkspace(t)
	tests := []struct {
		args    string
		want    []string
		ignored int
	}{
		{args: `{"pattern": "**/*.js"}`, want: []string{"app.js", "src/build/gen.js"}, ignored: 3},
		{args: `{"pattern": "**/*.js", "include_ignored": true}`,
			want: []string{"app.js", "build/out.js", "node_modules/pkg/index.js", "src/build/gen.js", "sub/deeper/out/x.js"}},
		{args: `{"pattern": "**/*.log"}`, want: []string{"keep.log", "sub/important.log"}, ignored: 5},
		{args: `{"pattern": "**", "path": "node_modules"}`, want: []string{"node_modules/pkg/index.js"}},
		{args: `{"pattern": "**/config", "include_ignored": true}`, want: nil},
		{args: `{"pattern": ".git/*", "include_ignored": true}`, want: nil},
	}
	tl := NewGlob(Config{})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != event.ToolOK {
				t.Fatalf("status %s: %s", res.Status, res.Output)
			}
			d := res.Data.(GlobData)
			var got []string
			for _, m := range d.Matches {
				got = append(got, m.Path)
			}
			if !slices.Equal(got, tt.want) || d.Ignored != tt.ignored {
				t.Errorf("matches %q ignored %d\nwant    %q ignored %d", got, d.Ignored, tt.want, tt.ignored)
			}
			if hint := strings.Contains(res.Output, "set include_ignored"); hint != (tt.ignored > 0) {
				t.Errorf("hint shown = %v:\n%s", hint, res.Output)
			}
		})
	}
}

func TestListDirHonoursGitignore(t *testing.T) {
	ws := ignoreWorkspace(t)
	names := func(d ListDirData) []string {
		var out []string
		for _, e := range d.Entries {
			out = append(out, e.Name+map[string]string{"dir": "/", "symlink": "@", "file": ""}[e.Type])
		}
		return out
	}
	tests := []struct {
		args    string
		want    []string
		ignored int
		output  string
	}{
		{args: `{}`, want: []string{".gitignore", "app.js", "docs/", "keep.log", "secret.txt", "src/", "sub/"}, ignored: 3,
			output: "[3 entries ignored by .gitignore not shown (build/, debug.log, node_modules/); set include_ignored to include them]"},
		{args: `{"include_ignored": true}`,
			want: []string{".gitignore", "app.js", "build/", "debug.log", "docs/", "keep.log", "node_modules/", "secret.txt", "src/", "sub/"}},
		{args: `{"path": "sub", "depth": 3}`, want: []string{".gitignore", "deeper/", "important.log", "out"}, ignored: 3},
		{args: `{"path": "docs", "depth": 2}`, want: []string{"sub/", "sub/b.tmp"}, ignored: 1,
			output: "[1 entry ignored by .gitignore not shown (a.tmp)"},
		{args: `{"path": "node_modules", "depth": 2}`, want: []string{"pkg/", "pkg/index.js"}},
		{args: `{"path": "build"}`, want: []string{"out.js"}},
	}
	tl := NewListDir(Config{})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != event.ToolOK {
				t.Fatalf("status %s: %s", res.Status, res.Output)
			}
			d := res.Data.(ListDirData)
			if got := names(d); !slices.Equal(got, tt.want) || d.Ignored != tt.ignored {
				t.Errorf("entries %q ignored %d\nwant    %q ignored %d", got, d.Ignored, tt.want, tt.ignored)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if strings.Contains(res.Output, ".git/") || strings.Contains(res.Output, "HEAD") {
				t.Errorf(".git listed:\n%s", res.Output)
			}
		})
	}
	if l := tl.Label([]byte(`{"include_ignored": true}`)); l != "ls . (incl. ignored)" {
		t.Errorf("label %q", l)
	}
}

// .git is skipped even with include_ignored and when it is a file (a
// worktree or submodule link).
func TestGitNeverListed(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "needle", ".git/config": "needle", "mod/.git": "gitdir: ../x", "mod/b.txt": "needle"})
	for _, tc := range []struct {
		tl   Tool
		args string
	}{
		{NewListDir(Config{}), `{"depth": 5, "include_ignored": true}`},
		{NewGlob(Config{}), `{"pattern": "**", "include_ignored": true}`},
		{NewGrep(Config{}), `{"pattern": "needle|gitdir", "include_ignored": true}`},
	} {
		res := call(t, tc.tl, ws, tc.args)
		if res.Status != event.ToolOK || strings.Contains(res.Output, ".git") || !strings.Contains(res.Output, "b.txt") {
			t.Errorf("%s: %s\n%s", tc.tl.Spec().Name, res.Status, res.Output)
		}
	}
}
