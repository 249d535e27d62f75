package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	ws := workspace(t, map[string]string{
		"ten.txt":      numbered(1, 10),
		"noeol.txt":    "one\ntwo",
		"crlf.txt":     "a\r\nb\r\n",
		"empty.txt":    "",
		"bin.dat":      "text\x00more",
		"dir/x.txt":    "x\n",
		"long.txt":     strings.Repeat("é", 3000) + "\nshort\n",
		"big.txt":      numbered(1, 3000),
		"latin1.txt":   "caf\xe9\n",
		"sub/deep.txt": "deep\n",
	})
	outside := workspace(t, map[string]string{"secret.txt": "top secret\n"})
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "leak.txt")))
	must(t, os.Symlink(outside, filepath.Join(ws, "leakdir")))
	must(t, os.Symlink("sub", filepath.Join(ws, "alias")))

	tests := []struct {
		args       string
		status     string
		output     string // substring
		notOutput  string
		area       LineArea
		total      int
		truncated  bool
		viewerPath string
	}{
		{args: `{"path": "ten.txt"}`, status: event.ToolOK, output: "     1\tline 1\n     2\tline 2", area: LineArea{1, 10}, total: 10, viewerPath: "ten.txt"},
		{args: `{"path": "./ten.txt", "offset": 3, "limit": 2}`, status: event.ToolOK, output: "     3\tline 3\n     4\tline 4\n… [showing lines 3-4 of 10; continue with offset=5]",
			notOutput: "line 5", area: LineArea{3, 4}, total: 10, truncated: true, viewerPath: "ten.txt"},
		{args: `{"path": "ten.txt", "offset": 9}`, status: event.ToolOK, output: "     9\tline 9\n    10\tline 10", area: LineArea{9, 10}, total: 10},
		{args: `{"path": "noeol.txt"}`, status: event.ToolOK, output: "     2\ttwo", area: LineArea{1, 2}, total: 2},
		{args: `{"path": "crlf.txt"}`, status: event.ToolOK, output: "     1\ta\n     2\tb", notOutput: "\r", area: LineArea{1, 2}, total: 2},
		{args: `{"path": "empty.txt"}`, status: event.ToolOK, output: "(empty file)", total: 0},
		{args: `{"path": "long.txt"}`, status: event.ToolOK, output: "… [line cut]", area: LineArea{1, 2}, total: 2, truncated: true},
		{args: `{"path": "big.txt"}`, status: event.ToolOK, output: "continue with offset=2001", area: LineArea{1, 2000}, total: 3000, truncated: true},
		{args: `{"path": "latin1.txt"}`, status: event.ToolOK, output: "caf\uFFFD", area: LineArea{1, 1}, total: 1},
		{args: `{"path": "alias/deep.txt"}`, status: event.ToolOK, output: "deep", area: LineArea{1, 1}, total: 1, viewerPath: "alias/deep.txt"},
		{args: `{"path": "ten.txt", "offset": 11}`, status: event.ToolError, output: "offset 11 is past the end of ten.txt, which has 10 lines"},
		{args: `{"path": "bin.dat"}`, status: event.ToolError, output: "binary file"},
		{args: `{"path": "dir"}`, status: event.ToolError, output: "dir is a directory"},
		{args: `{"path": "missing.txt"}`, status: event.ToolError, output: "missing.txt does not exist"},
		{args: `{"path": "../x"}`, status: event.ToolDenied, output: `path "../x" is outside the workspace`},
		{args: `{"path": "` + filepath.Join(outside, "secret.txt") + `"}`, status: event.ToolDenied, notOutput: "top secret"},
		{args: `{"path": "leak.txt"}`, status: event.ToolDenied, output: "symlink", notOutput: "top secret"},
		{args: `{"path": "leakdir/secret.txt"}`, status: event.ToolDenied, notOutput: "top secret"},
		{args: `{}`, status: event.ToolError, output: "invalid arguments: path is required"},
		{args: `{"path": 7}`, status: event.ToolError, output: `invalid arguments: field "path" must be a string, got number`},
		{args: `{"path": "ten.txt", "offset": -1}`, status: event.ToolError, output: "invalid arguments: offset"},
		{args: `{"path": "ten.txt"`, status: event.ToolError, output: "invalid arguments: malformed JSON"},
		{args: `["ten.txt"]`, status: event.ToolError, output: "invalid arguments: arguments must be a JSON object"},
	}
	tl := NewReadFile(Config{})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := call(t, tl, ws, tt.args)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s; output:\n%s", res.Status, tt.status, res.Output)
			}
			if !strings.Contains(res.Output, tt.output) {
				t.Errorf("output lacks %q:\n%s", tt.output, res.Output)
			}
			if tt.notOutput != "" && strings.Contains(res.Output, tt.notOutput) {
				t.Errorf("output has %q:\n%s", tt.notOutput, res.Output)
			}
			if tt.status != event.ToolOK {
				return
			}
			d := res.Data.(ReadFileData)
			if !d.OK || d.Area != tt.area || d.TotalLines != tt.total || d.Truncated != tt.truncated {
				t.Errorf("data ok=%v area=%+v total=%d truncated=%v; want area=%+v total=%d truncated=%v",
					d.OK, d.Area, d.TotalLines, d.Truncated, tt.area, tt.total, tt.truncated)
			}
			if tt.viewerPath != "" && d.File.ViewerPath != tt.viewerPath {
				t.Errorf("viewer_path %q, want %q", d.File.ViewerPath, tt.viewerPath)
			}
		})
	}
}

func TestReadFileCap(t *testing.T) {
	ws := workspace(t, map[string]string{"f.txt": numbered(1, 100)})
	res := call(t, NewReadFile(Config{ReadCap: 100}), ws, `{"path": "f.txt"}`)
	d := res.Data.(ReadFileData)
	if res.Status != event.ToolOK || !d.Truncated || d.Area.EndLine < 1 || d.Area.EndLine > 10 {
		t.Fatalf("status %s data %+v", res.Status, d)
	}
	if want := fmt.Sprintf("continue with offset=%d", d.Area.EndLine+1); !strings.Contains(res.Output, want) {
		t.Errorf("output lacks %q:\n%s", want, res.Output)
	}
	if d.Bytes != int64(len(numbered(1, 100))) || d.File.Path != "f.txt" {
		t.Errorf("data %+v", d)
	}
}

func TestReadFileLabel(t *testing.T) {
	tl := NewReadFile(Config{})
	for args, want := range map[string]string{
		`{"path": "src/a.go"}`:                              "read src/a.go",
		`{"path": "./src/a.go", "offset": 10, "limit": 41}`: "read src/a.go:10-50",
		`{"path": "a.go", "limit": 5}`:                      "read a.go:1-5",
		`{"path": 1}`:                                       "read (invalid arguments)",
	} {
		if got := tl.Label([]byte(args)); got != want {
			t.Errorf("Label(%s) = %q, want %q", args, got, want)
		}
	}
}
