package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func matchStrings(ms []Match) []string {
	var out []string
	for _, m := range ms {
		if m.Line == 0 {
			out = append(out, m.Path+"/"+string(m.Kind))
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d:%d %s", m.Path, m.Line, m.Column, m.Preview))
	}
	return out
}

func TestSearch(t *testing.T) {
	ws := tree(t, map[string]string{
		".gitignore":                "node_modules/\n*.log\n",
		"README.md":                 "# Needle project\nno match here\nfind the needle twice: needle\n",
		"src/needle.go":             "package needle\n",
		"src/other.go":              "package other\r\n// NEEDLE in caps\r\n",
		"src/ünï/ñeedle.txt":        "ñeedle ÜNÏ\n",
		"debug.log":                 "needle in a log\n",
		"node_modules/pkg/index.js": "needle()\n",
		"bin.dat":                   "needle\x00binary",
		"big.txt":                   strings.Repeat("a", 100) + "needle\n",
		".git/config":               "needle",
		"dir with space/a b.txt":    "a needle with \"quotes\"\n",
	})
	w := open(t, ws)
	all := []string{
		"README.md:1:3 # Needle project",
		"README.md:3:10 find the needle twice: needle",
		"big.txt:1:101 " + strings.Repeat("a", 100) + "needle",
		"dir with space/a b.txt:1:3 a needle with \"quotes\"",
		"src/needle.go/file",
		"src/needle.go:1:9 package needle",
		"src/other.go:2:4 // NEEDLE in caps",
	}
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
		want  []string
		trunc bool
		skip  int
	}{
		{name: "names and content", query: "needle", want: all, skip: 1},
		{name: "case-sensitive", query: "needle", opts: SearchOptions{CaseSensitive: true},
			want: []string{"README.md:3:10 find the needle twice: needle", "big.txt:1:101 " + strings.Repeat("a", 100) + "needle", "dir with space/a b.txt:1:3 a needle with \"quotes\"",
				"src/needle.go/file", "src/needle.go:1:9 package needle"}, skip: 1},
		{name: "names only", query: "NEEDLE", opts: SearchOptions{NamesOnly: true}, want: []string{"src/needle.go/file"}},
		{name: "content only", query: "caps", opts: SearchOptions{ContentOnly: true}, want: []string{"src/other.go:2:14 // NEEDLE in caps"}, skip: 1},
		{name: "directory names", query: "space", opts: SearchOptions{NamesOnly: true}, want: []string{"dir with space/dir"}},
		{name: "unicode folds", query: "ñEEDLE ünï", want: []string{"src/ünï/ñeedle.txt:1:1 ñeedle ÜNÏ"}, skip: 1},
		{name: "in a directory", query: "needle", opts: SearchOptions{Dir: "src"},
			want: []string{"src/needle.go/file", "src/needle.go:1:9 package needle", "src/other.go:2:4 // NEEDLE in caps"}},
		{name: "ignored files hidden", query: "log", want: []string{".gitignore:2:3 *.log"}, skip: 1},
		{name: "include ignored", query: "log", opts: SearchOptions{IncludeIgnored: true},
			want: []string{".gitignore:2:3 *.log", "debug.log/file", "debug.log:1:13 needle in a log"}, skip: 1},
		{name: "an ignored directory named outright", query: "needle", opts: SearchOptions{Dir: "node_modules"},
			want: []string{"node_modules/pkg/index.js:1:1 needle()"}},
		{name: "limit", query: "needle", opts: SearchOptions{Limit: 2}, want: all[:2], trunc: true},
		{name: "small files only", query: "needle", opts: SearchOptions{MaxFileSize: 40}, want: []string{
			"dir with space/a b.txt:1:3 a needle with \"quotes\"",
			"src/needle.go/file", "src/needle.go:1:9 package needle", "src/other.go:2:4 // NEEDLE in caps"}, skip: 3},
		{name: "quotes", query: `"quotes"`, want: []string{"dir with space/a b.txt:1:15 a needle with \"quotes\""}, skip: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := w.Search(context.Background(), tt.query, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := matchStrings(res.Matches); !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if res.Truncated != tt.trunc || res.Skipped != tt.skip {
				t.Errorf("truncated %v skipped %d, want %v %d", res.Truncated, res.Skipped, tt.trunc, tt.skip)
			}
		})
	}
	for _, q := range []string{"", "two\nlines", "nul\x00", strings.Repeat("q", 1001)} {
		if _, err := w.Search(context.Background(), q, SearchOptions{}); !errors.Is(err, ErrBadQuery) {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if _, err := w.Search(context.Background(), "x", SearchOptions{Dir: "README.md"}); !errors.Is(err, ErrNotDir) {
		t.Errorf("file as dir: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Search(ctx, "needle", SearchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestPreview(t *testing.T) {
	long := strings.Repeat("é", 200) + "NEEDLE" + strings.Repeat("x", 300)
	p := preview([]byte(long), 400, 6)
	if !strings.Contains(p, "NEEDLE") || !strings.HasPrefix(p, "…") || !strings.HasSuffix(p, "…") || len(p) > previewMax+8 {
		t.Errorf("preview %q (%d bytes)", p, len(p))
	}
	if strings.ContainsRune(p, '\uFFFD') {
		t.Errorf("preview cut a rune: %q", p)
	}
}
