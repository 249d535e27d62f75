package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestListDir(t *testing.T) {
	ws := workspace(t, map[string]string{
		"b.txt":            "bb",
		"a.go":             "package a\n",
		"src/main.go":      "package main\n",
		"src/deep/x/y.txt": "y",
		".git/HEAD":        "ref",
		"empty/":           "",
	})
	outside := workspace(t, map[string]string{"secret": "s"})
	must(t, os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "link-in")))
	must(t, os.Symlink(outside, filepath.Join(ws, "link-out")))

	names := func(d ListDirData) []string {
		var out []string
		for _, e := range d.Entries {
			out = append(out, e.Name+map[string]string{"dir": "/", "symlink": "@", "file": ""}[e.Type])
		}
		return out
	}
	tests := []struct {
		args      string
		status    string
		want      []string // entry names, dirs with "/", symlinks with "@"
		truncated bool
		output    string // substring of Output
	}{
		{args: `{}`, status: event.ToolOK, want: []string{"a.go", "b.txt", "empty/", "link-in@", "link-out@", "src/"},
			output: "a.go (10 bytes)"},
		{args: `{"path": "src", "depth": 2}`, status: event.ToolOK, want: []string{"deep/", "deep/x/", "main.go"}},
		{args: `{"path": "src", "depth": 9}`, status: event.ToolOK, want: []string{"deep/", "deep/x/", "deep/x/y.txt", "main.go"}},
		{args: `{"depth": 5}`, status: event.ToolOK, output: "./ (10 entries)\na.go"},
		{args: `{"include_ignored": true}`, status: event.ToolOK, want: []string{"a.go", "b.txt", "empty/", "link-in@", "link-out@", "src/"}},
		{args: `{"path": "link-in"}`, status: event.ToolOK, want: []string{"deep/", "main.go"}},
		{args: `{"path": "empty"}`, status: event.ToolOK, want: nil, output: "(empty)"},
		{args: `{"limit": 2}`, status: event.ToolOK, want: []string{"a.go", "b.txt"}, truncated: true, output: "listing truncated"},
		{args: `{"depth": 3, "limit": 4}`, status: event.ToolOK, want: []string{"a.go", "b.txt", "empty/", "link-in@"}, truncated: true},
		{args: `{"path": "a.go"}`, status: event.ToolError, output: "not a directory"},
		{args: `{"path": "nope"}`, status: event.ToolError, output: "nope does not exist"},
		{args: `{"path": ".."}`, status: event.ToolDenied, output: `path ".." is outside the workspace`},
		{args: `{"path": "/"}`, status: event.ToolDenied},
		{args: `{"path": "link-out"}`, status: event.ToolDenied, output: "symlink"},
		{args: `{"depth": -1}`, status: event.ToolError, output: "invalid arguments: depth"},
		{args: `{"depth": "2"}`, status: event.ToolError, output: `invalid arguments: field "depth" must be an integer, got string`},
		{args: `{"pth": "x"}`, status: event.ToolError, output: `invalid arguments: unknown field "pth"`},
	}
	tl := NewListDir(Config{})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if tt.status != event.ToolOK {
				return
			}
			d := res.Data.(ListDirData)
			if tt.want != nil || len(d.Entries) == 0 {
				if got := names(d); !slices.Equal(got, tt.want) {
					t.Errorf("entries %q, want %q", got, tt.want)
				}
			}
			if d.Truncated != tt.truncated {
				t.Errorf("truncated = %v", d.Truncated)
			}
			if strings.Contains(res.Output, ".git/HEAD") {
				t.Errorf(".git contents listed:\n%s", res.Output)
			}
		})
	}
}

func TestListDirDataShape(t *testing.T) {
	ws := workspace(t, map[string]string{"dir/f.txt": "12345"})
	res := call(t, NewListDir(Config{}), ws, `{"path": "dir/"}`)
	d := res.Data.(ListDirData)
	want := ListDirData{Path: "dir", Entries: []ListEntry{{Name: "f.txt", Type: "file", Size: 5}}}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("data %+v, want %+v", d, want)
	}
	if res.Output != "dir/ (1 entry)\nf.txt (5 bytes)" {
		t.Errorf("output %q", res.Output)
	}
	if l := NewListDir(Config{}).Label([]byte(`{"path":"dir"}`)); l != "ls dir" {
		t.Errorf("label %q", l)
	}
}
