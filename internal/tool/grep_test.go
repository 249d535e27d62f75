package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestGrep(t *testing.T) {
	ws := workspace(t, map[string]string{
		"main.go":         "package main\n\nfunc main() {\n\tTODO()\n}\n",
		"util.go":         "package main\n// todo: tidy\nfunc TODO() {}\n",
		"notes.md":        "# Notes\nTODO write docs\n",
		"src/deep/x.go":   "package x // TODO\n",
		"ctx.txt":         numbered(1, 20),
		"bin.dat":         "TODO\x00binary",
		"long.txt":        strings.Repeat("é", 400) + "TODO" + strings.Repeat("x", 600) + "\n",
		"crlf.txt":        "one TODO\r\ntwo\r\n",
		".git/config":     "TODO in git\n",
		"big/huge.log":    strings.Repeat("TODO filler\n", (grepMaxFileBytes/12)+1),
		"web/a.ts":        "TODO ts\n",
		"web/nested/b.ts": "TODO nested ts\n",
	})
	outside := workspace(t, map[string]string{"secret.go": "TODO secret\n"})
	must(t, os.Symlink(outside, filepath.Join(ws, "outdir")))
	must(t, os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(ws, "leak.go")))

	type m struct {
		path string
		line int
	}
	tests := []struct {
		name      string
		args      string
		status    string
		matches   []m
		searched  int
		truncated bool
		output    []string
	}{
		{name: "go files", args: `{"pattern": "TODO", "glob": "*.go"}`, status: event.ToolOK,
			matches: []m{{"main.go", 4}, {"src/deep/x.go", 1}, {"util.go", 3}}, searched: 3,
			output: []string{"main.go:4: \tTODO()\n\nsrc/deep/x.go:1: package x // TODO\n\nutil.go:3: func TODO() {}\n", "3 matches in 3 files searched."}},
		{name: "ignore case", args: `{"pattern": "todo", "glob": "*.go", "ignore_case": true}`, status: event.ToolOK,
			matches: []m{{"main.go", 4}, {"src/deep/x.go", 1}, {"util.go", 2}, {"util.go", 3}}, searched: 3},
		{name: "everything skips binary, large, .git and links out", args: `{"pattern": "TODO"}`, status: event.ToolOK,
			matches:  []m{{"crlf.txt", 1}, {"long.txt", 1}, {"main.go", 4}, {"notes.md", 2}, {"src/deep/x.go", 1}, {"util.go", 3}, {"web/a.ts", 1}, {"web/nested/b.ts", 1}},
			searched: 9, output: []string{"crlf.txt:1: one TODO\n", "2 binary, large or unreadable skipped"}},
		{name: "glob with a slash is relative to path", args: `{"pattern": "TODO", "glob": "web/*.ts"}`, status: event.ToolOK,
			matches: []m{{"web/a.ts", 1}}, searched: 1},
		{name: "glob in a subdirectory", args: `{"pattern": "TODO", "path": "web", "glob": "*.ts"}`, status: event.ToolOK,
			matches: []m{{"web/a.ts", 1}, {"web/nested/b.ts", 1}}, searched: 2},
		{name: "single file", args: `{"pattern": "line 1\\d", "path": "ctx.txt"}`, status: event.ToolOK,
			matches:  []m{{"ctx.txt", 10}, {"ctx.txt", 11}, {"ctx.txt", 12}, {"ctx.txt", 13}, {"ctx.txt", 14}, {"ctx.txt", 15}, {"ctx.txt", 16}, {"ctx.txt", 17}, {"ctx.txt", 18}, {"ctx.txt", 19}},
			searched: 1},
		{name: "context merges and separates groups", args: `{"pattern": "^line (5|7|15)$", "path": "ctx.txt", "context": 1}`, status: event.ToolOK,
			matches: []m{{"ctx.txt", 5}, {"ctx.txt", 7}, {"ctx.txt", 15}}, searched: 1,
			output: []string{"ctx.txt-4- line 4\nctx.txt:5: line 5\nctx.txt-6- line 6\nctx.txt:7: line 7\nctx.txt-8- line 8\n--\nctx.txt-14- line 14\nctx.txt:15: line 15\nctx.txt-16- line 16\n"}},
		{name: "context is capped at 5", args: `{"pattern": "^line 10$", "path": "ctx.txt", "context": 9}`, status: event.ToolOK,
			matches: []m{{"ctx.txt", 10}}, searched: 1, output: []string{"ctx.txt-5- line 5\n", "ctx.txt-15- line 15\n"}},
		{name: "limit", args: `{"pattern": "line", "path": "ctx.txt", "limit": 3}`, status: event.ToolOK,
			matches: []m{{"ctx.txt", 1}, {"ctx.txt", 2}, {"ctx.txt", 3}}, searched: 1, truncated: true,
			output: []string{"stopped at 3 matches"}},
		{name: "long lines are cut", args: `{"pattern": "TODO", "path": "long.txt"}`, status: event.ToolOK,
			matches: []m{{"long.txt", 1}}, searched: 1, output: []string{strings.Repeat("é", 250) + " …"}},
		{name: "no match", args: `{"pattern": "FIXME", "glob": "*.md"}`, status: event.ToolOK,
			searched: 1, output: []string{"No matches for FIXME in . (1 file searched)."}},

		{name: "invalid regex", args: `{"pattern": "(TODO"}`, status: event.ToolError,
			output: []string{"invalid arguments: pattern is not a valid regular expression: missing closing ): `(TODO`"}},
		{name: "invalid glob", args: `{"pattern": "x", "glob": "{a"}`, status: event.ToolError, output: []string{"invalid arguments: glob:"}},
		{name: "no pattern", args: `{"path": "."}`, status: event.ToolError, output: []string{"invalid arguments: pattern is required"}},
		{name: "negative context", args: `{"pattern": "x", "context": -1}`, status: event.ToolError, output: []string{"invalid arguments: context"}},
		{name: "binary file named", args: `{"pattern": "TODO", "path": "bin.dat"}`, status: event.ToolError, output: []string{"binary"}},
		{name: "large file named", args: `{"pattern": "TODO", "path": "big/huge.log"}`, status: event.ToolError, output: []string{"too large"}},
		{name: "missing path", args: `{"pattern": "x", "path": "nope"}`, status: event.ToolError, output: []string{"nope does not exist"}},
		{name: "dotdot", args: `{"pattern": "x", "path": "../"}`, status: event.ToolDenied, output: []string{"outside the workspace"}},
		{name: "symlinked dir outside", args: `{"pattern": "TODO", "path": "outdir"}`, status: event.ToolDenied, output: []string{"symlink"}},
		{name: "symlinked file outside", args: `{"pattern": "TODO", "path": "leak.go"}`, status: event.ToolDenied, output: []string{"symlink"}},
	}
	tl := NewGrep(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			for _, o := range tt.output {
				if !strings.Contains(res.Output, o) {
					t.Errorf("output lacks %q:\n%s", o, res.Output)
				}
			}
			if strings.Contains(res.Output, "secret") || strings.Contains(res.Output, "in git") || strings.Contains(res.Output, "binary\n") {
				t.Errorf("output shows what it must not:\n%s", res.Output)
			}
			if tt.status != event.ToolOK {
				return
			}
			d := res.Data.(GrepData)
			var got []m
			for _, x := range d.Matches {
				got = append(got, m{x.Path, x.Line})
				if len(x.Text) > grepMaxLineBytes+len(" …") || strings.ContainsAny(x.Text, "\r\n") {
					t.Errorf("text %q", x.Text)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.matches) {
				t.Errorf("matches %v, want %v", got, tt.matches)
			}
			if d.FilesSearched != tt.searched || d.Truncated != tt.truncated || !d.OK || d.Matches == nil {
				t.Errorf("searched %d truncated %v ok %v", d.FilesSearched, d.Truncated, d.OK)
			}
		})
	}
}

func TestGrepDataShapeAndLabel(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "hello\nworld\n"})
	tl := NewGrep(Config{})
	res := call(t, tl, ws, `{"pattern": "wor"}`)
	b, _ := json.Marshal(res.Data)
	if want := `{"ok":true,"pattern":"wor","matches":[{"path":"a.txt","line":2,"text":"world"}],"files_searched":1,"truncated":false,"ignored":0}`; string(b) != want {
		t.Errorf("data %s", b)
	}
	if res.Output != "a.txt:2: world\n\n1 match in 1 file searched." {
		t.Errorf("output %q", res.Output)
	}
	if l := tl.Label(json.RawMessage(`{"pattern": "func main", "path": "cmd", "glob": "*.go"}`)); l != "grep func main in cmd (*.go)" {
		t.Errorf("label %q", l)
	}
	if l := tl.Label(json.RawMessage(`{"pattern": "x", "include_ignored": true}`)); l != "grep x (incl. ignored)" {
		t.Errorf("label %q", l)
	}
	if in := tl.Intent(json.RawMessage(`{"pattern": "x"}`)); in.Effect != EffectNone {
		t.Errorf("intent %+v", in)
	}
}

func TestGrepCancelled(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "x\n", "b/c.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := callEnv(t, ctx, NewGrep(Config{}), Env{Workspace: ws}, `{"pattern": "x"}`)
	if res.Status != event.ToolCancelled {
		t.Errorf("status %s: %s", res.Status, res.Output)
	}
}
