package workspace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSanitizeName(t *testing.T) {
	long := strings.Repeat("é", 80) + ".png" // 164 bytes
	tests := []struct{ in, want string }{
		{"photo.png", "photo.png"},
		{"../../etc/passwd", "passwd"},
		{`C:\Users\me\report.pdf`, "report.pdf"},
		{".bashrc", "bashrc"},
		{"...hidden.txt", "hidden.txt"},
		{"-rf", "rf"},
		{"  spaced name.txt  ", "spaced name.txt"},
		{"trailing.", "trailing"},
		{"new\nline\x00\x1b[31m.txt", "newline[31m.txt"},
		{"bad\xffutf8.txt", "badutf8.txt"},
		{"", "upload"},
		{"..", "upload"},
		{"/", "upload"},
		{"données.csv", "données.csv"},
		{long, strings.Repeat("é", 48) + ".png"},
		{strings.Repeat("a", 150) + "." + strings.Repeat("b", 30), strings.Repeat("a", 100)},
	}
	for _, tt := range tests {
		got := SanitizeName(tt.in)
		if got != tt.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > maxUploadName {
			t.Errorf("SanitizeName(%q) is %d bytes", tt.in, len(got))
		}
	}
}

func TestSaveUpload(t *testing.T) {
	ws := tree(t, map[string]string{"keep.txt": "k"})
	w := open(t, ws)
	tests := []struct {
		name, content string
		want          Upload
	}{
		{"shot.png", pngHeader, Upload{Path: ".caduceus/uploads/shot.png", MIME: "image/png", Size: int64(len(pngHeader))}},
		{"shot.png", "second", Upload{Path: ".caduceus/uploads/shot-1.png", MIME: "text/plain; charset=utf-8", Size: 6}},
		{"../shot.png", "third", Upload{Path: ".caduceus/uploads/shot-2.png", MIME: "text/plain; charset=utf-8", Size: 5}},
		{"notes.md", "# hi", Upload{Path: ".caduceus/uploads/notes.md", MIME: "text/markdown; charset=utf-8", Size: 4}},
		{"archive.tar.gz", "\x1f\x8b\x08\x00", Upload{Path: ".caduceus/uploads/archive.tar.gz", MIME: "application/x-gzip", Size: 4}},
		{"Makefile", "all:\n", Upload{Path: ".caduceus/uploads/Makefile", MIME: "text/plain; charset=utf-8", Size: 5}},
		{"Makefile", "", Upload{Path: ".caduceus/uploads/Makefile-1", MIME: "text/plain; charset=utf-8", Size: 0}},
	}
	for _, tt := range tests {
		got, err := w.SaveUpload(tt.name, strings.NewReader(tt.content), 100)
		if err != nil || got != tt.want {
			t.Errorf("SaveUpload(%q) = %+v, %v\nwant %+v", tt.name, got, err, tt.want)
			continue
		}
		b, err := os.ReadFile(filepath.Join(ws, got.Path))
		if err != nil || string(b) != tt.content {
			t.Errorf("%s holds %q, %v", got.Path, b, err)
		}
	}

	before := snapshot(t, ws)
	var tl *TooLargeError
	if _, err := w.SaveUpload("huge.bin", strings.NewReader(strings.Repeat("x", 101)), 100); !errors.As(err, &tl) || Code(err) != "file_too_large" {
		t.Errorf("over the limit: %v", err)
	}
	failing := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(errors.New("connection reset")))
	if _, err := w.SaveUpload("cut.txt", failing, 100); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("failed read: %v", err)
	}
	if got := snapshot(t, ws); len(got) != len(before) {
		t.Errorf("a failed upload left files behind: %v", got)
	}
	if got, err := w.SaveUpload("exact.txt", strings.NewReader(strings.Repeat("x", 100)), 100); err != nil || got.Size != 100 {
		t.Errorf("at the limit: %+v %v", got, err)
	}
}

// An uploads directory that is a symlink out of the workspace is refused.
func TestSaveUploadConfined(t *testing.T) {
	outside := t.TempDir()
	ws := tree(t, map[string]string{})
	symlink(t, outside, filepath.Join(ws, ".caduceus"))
	w := open(t, ws)
	if _, err := w.SaveUpload("x.txt", strings.NewReader("x"), 10); !errors.Is(err, ErrOutside) {
		t.Errorf("err = %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside: %v", ents)
	}
}

func TestResolve(t *testing.T) {
	ws := tree(t, map[string]string{"internal/api/server.go": "package api\n", "odd:12": "x", "docs/": ""})
	symlink(t, "internal/api/server.go", filepath.Join(ws, "link.go"))
	w := open(t, ws)
	real, _ := filepath.EvalSymlinks(ws)
	tests := []struct {
		in   string
		want Ref
		err  error
	}{
		{in: "internal/api/server.go", want: Ref{Path: "internal/api/server.go", Kind: KindFile}},
		{in: "internal/api/server.go:42", want: Ref{Path: "internal/api/server.go", Kind: KindFile, Line: 42}},
		{in: "internal/api/server.go:42:7", want: Ref{Path: "internal/api/server.go", Kind: KindFile, Line: 42, Column: 7}},
		{in: "./internal/api/server.go#L9", want: Ref{Path: "internal/api/server.go", Kind: KindFile, Line: 9}},
		{in: " internal//api/./server.go ", want: Ref{Path: "internal/api/server.go", Kind: KindFile}},
		{in: filepath.Join(ws, "internal/api/server.go") + ":3", want: Ref{Path: "internal/api/server.go", Kind: KindFile, Line: 3}},
		{in: filepath.Join(real, "docs"), want: Ref{Path: "docs", Kind: KindDir}},
		{in: "docs/", want: Ref{Path: "docs", Kind: KindDir}},
		{in: "link.go:1", want: Ref{Path: "link.go", Kind: KindFile, Line: 1}},
		{in: "odd:12", want: Ref{Path: "odd:12", Kind: KindFile}},
		{in: "internal/api/missing.go:3", err: ErrNotFound},
		{in: "server.go:0", err: ErrNotFound},
		{in: "/etc/passwd:1", err: ErrOutside},
		{in: "../x.go", err: ErrOutside},
		{in: ".git/config", err: ErrOutside},
	}
	for _, tt := range tests {
		got, err := w.Resolve(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Resolve(%q) = %+v, %v; want %v", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
