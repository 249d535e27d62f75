package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func entryNames(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := e.Name
		switch e.Kind {
		case KindDir:
			s += "/"
		case KindSymlink:
			s += "@"
		}
		if e.Ignored {
			s += " (ignored)"
		}
		out = append(out, s)
	}
	return out
}

func TestList(t *testing.T) {
	ws := tree(t, map[string]string{
		".gitignore":         "*.log\nbuild/\n",
		"b.txt":              "bb",
		"a.txt":              "a",
		"Z.md":               "z",
		"debug.log":          "x",
		"build/out.js":       "x",
		"src/main.go":        "package main",
		"src/.gitignore":     "gen/\n",
		"src/gen/x.go":       "x",
		"src/keep/":          "",
		"dir with space/":    "",
		".git/HEAD":          "ref: refs/heads/main",
		".hidden":            "h",
		"build/deep/more.js": "x",
	})
	symlink(t, "src", filepath.Join(ws, "link"))
	w := open(t, ws)
	tests := []struct {
		dir  string
		want []string
	}{
		{"", []string{"build/ (ignored)", "dir with space/", "src/", ".gitignore", ".hidden", "Z.md", "a.txt", "b.txt", "debug.log (ignored)", "link@"}},
		{".", []string{"build/ (ignored)", "dir with space/", "src/", ".gitignore", ".hidden", "Z.md", "a.txt", "b.txt", "debug.log (ignored)", "link@"}},
		{"src", []string{"gen/ (ignored)", "keep/", ".gitignore", "main.go"}},
		{"src/", []string{"gen/ (ignored)", "keep/", ".gitignore", "main.go"}},
		{"src/gen", []string{"x.go (ignored)"}},                                // below an ignored directory
		{"build/deep", []string{"more.js (ignored)"}},                          // two levels below
		{"link", []string{"gen/ (ignored)", "keep/", ".gitignore", "main.go"}}, // a symlinked directory inside
		{"dir with space", nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			page, err := w.List(context.Background(), tt.dir, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := entryNames(page.Entries); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if page.Next != "" {
				t.Errorf("next = %q on a single page", page.Next)
			}
		})
	}
	page, _ := w.List(context.Background(), "", "", 0)
	for _, e := range page.Entries {
		if e.Name == "b.txt" && (e.Size != 2 || e.ModTime.IsZero() || e.Path != "b.txt") {
			t.Errorf("b.txt: %+v", e)
		}
	}
	sub, _ := w.List(context.Background(), "src", "", 0)
	if sub.Entries[0].Path != "src/gen" {
		t.Errorf("path %q", sub.Entries[0].Path)
	}

	for _, bad := range []struct {
		dir, cursor string
		want        error
	}{
		{"a.txt", "", ErrNotDir},
		{"missing", "", ErrNotFound},
		{"", "!!", ErrBadCursor},
		{"", "eA", ErrBadCursor}, // "x": no kind prefix
	} {
		if _, err := w.List(context.Background(), bad.dir, bad.cursor, 0); !errors.Is(err, bad.want) {
			t.Errorf("List(%q, %q) = %v, want %v", bad.dir, bad.cursor, err, bad.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.List(ctx, "", "", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestListPages walks a directory page by page, with entries added and
// removed between pages: every entry present throughout is seen exactly
// once, in order.
func TestListPages(t *testing.T) {
	files := map[string]string{}
	for i := range 25 {
		files[fmt.Sprintf("f%02d", i)] = ""
		if i%5 == 0 {
			files[fmt.Sprintf("d%02d/", i)] = ""
		}
	}
	ws := tree(t, files)
	w := open(t, ws)
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := w.List(context.Background(), "", cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) > 7 {
			t.Fatalf("page of %d", len(page.Entries))
		}
		seen = append(seen, entryNames(page.Entries)...)
		if pages == 0 {
			// Changes behind and ahead of the cursor.
			os.Remove(filepath.Join(ws, "f00"))
			os.WriteFile(filepath.Join(ws, "f99"), nil, 0o644)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	var want []string
	for i := 0; i < 25; i += 5 {
		want = append(want, fmt.Sprintf("d%02d/", i))
	}
	for i := range 25 {
		want = append(want, fmt.Sprintf("f%02d", i))
	}
	want = append(want, "f99")
	if !slices.Equal(seen, want) {
		t.Errorf("seen %q\nwant %q", seen, want)
	}
	if page, _ := w.List(context.Background(), "", "", 5000); len(page.Entries) != 30 {
		t.Errorf("limit over max: %d entries", len(page.Entries))
	}
}

// BenchmarkList measures the first page of a large flat directory (10%
// subdirectories, a .gitignore) against os.ReadDir of the same directory
// in the same run, the floor any listing pays.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\nd1*/\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			p := filepath.Join(dir, fmt.Sprintf("entry-%06d.txt", i))
			var err error
			if i%10 == 0 {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, nil, 0o644)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		w := open(b, dir)
		b.Run(fmt.Sprintf("entries=%d/List", n), func(b *testing.B) {
			for b.Loop() {
				page, err := w.List(context.Background(), "", "", DefaultListLimit)
				if err != nil || len(page.Entries) != DefaultListLimit {
					b.Fatal(err, len(page.Entries))
				}
			}
		})
		b.Run(fmt.Sprintf("entries=%d/os.ReadDir", n), func(b *testing.B) {
			for b.Loop() {
				des, err := os.ReadDir(dir)
				if err != nil || len(des) != n+1 {
					b.Fatal(err, len(des))
				}
			}
		})
	}
}

// TestFirstAfter checks the heap selection against a full sort, over
// directory orders that are sorted, reversed (tmpfs lists newest first)
// and shuffled, from every position.
func TestFirstAfter(t *testing.T) {
	var des []dirent
	for i := range 60 {
		d := dirent{name: fmt.Sprintf("n%02d", (i*37)%60)}
		if i%4 == 0 {
			d.typ = fs.ModeDir
		}
		des = append(des, d)
	}
	des = append(des, dirent{name: ".git", typ: fs.ModeDir})
	sorted := slices.Clone(des)
	sorted = slices.DeleteFunc(sorted, func(d dirent) bool { return d.name == ".git" })
	slices.SortFunc(sorted, func(a, b dirent) int { return compareEntries(a.isDir(), a.name, b.isDir(), b.name) })
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	rng := rand.New(rand.NewPCG(1, 2))
	shuffled := slices.Clone(des)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, in := range map[string][]dirent{"sorted": sorted, "reversed": reversed, "shuffled": shuffled, "as read": des} {
		for _, limit := range []int{1, 7, 59, 60, 100} {
			for from := -1; from < len(sorted); from++ {
				var after position
				if from >= 0 {
					after = position{dir: sorted[from].isDir(), name: sorted[from].name}
				}
				want := sorted[from+1:]
				more := len(want) > limit
				want = want[:min(limit, len(want))]
				got, gotMore := firstAfter(slices.Clone(in), after, limit)
				if !slices.Equal(got, want) || gotMore != more {
					t.Fatalf("%s limit %d after %+v: got %v (more %v), want %v (more %v)", name, limit, after, got, gotMore, want, more)
				}
			}
		}
	}
}
