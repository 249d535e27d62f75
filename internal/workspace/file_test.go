package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"

func TestRead(t *testing.T) {
	ws := tree(t, map[string]string{
		"main.go":       "package main\n",
		"notes.md":      "# Notes\n",
		"data.json":     `{"a": 1}`,
		"img.png":       pngHeader,
		"blob.json":     "{\x00}", // binary whatever its name
		"plain":         "just text",
		"big.txt":       strings.Repeat("x", 2000),
		"empty.txt":     "",
		"sub/inner.txt": "inner",
	})
	symlink(t, "sub/inner.txt", filepath.Join(ws, "link.txt"))
	w := open(t, ws)
	tests := []struct {
		path   string
		mime   string
		binary bool
		err    error
	}{
		{"main.go", "text/x-go; charset=utf-8", false, nil},
		{"./main.go", "text/x-go; charset=utf-8", false, nil},
		{"notes.md", "text/markdown; charset=utf-8", false, nil},
		{"data.json", "application/json; charset=utf-8", false, nil},
		{"img.png", "image/png", true, nil},
		{"blob.json", "application/octet-stream", true, nil},
		{"plain", "text/plain; charset=utf-8", false, nil},
		{"empty.txt", "text/plain; charset=utf-8", false, nil},
		{"link.txt", "text/plain; charset=utf-8", false, nil}, // a symlink inside is followed
		{"big.txt", "", false, ErrTooLarge},
		{"sub", "", false, ErrNotRegular},
		{"", "", false, ErrNotRegular},
		{"missing.txt", "", false, ErrNotFound},
		{"main.go/x", "", false, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, err := w.Read(tt.path, 1000)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(filepath.Join(ws, tt.path))
			sum := sha256.Sum256(want)
			if string(f.Content) != string(want) || f.ETag != `"`+hex.EncodeToString(sum[:])+`"` || f.Size != int64(len(want)) {
				t.Errorf("content %q etag %s size %d", f.Content, f.ETag, f.Size)
			}
			if f.MIME != tt.mime || f.Binary != tt.binary {
				t.Errorf("mime %q binary %v, want %q %v", f.MIME, f.Binary, tt.mime, tt.binary)
			}
			if _, mime, err := w.Stat(tt.path); err != nil || mime != tt.mime {
				t.Errorf("Stat: %q %v", mime, err)
			}
		})
	}
	var tl *TooLargeError
	if _, err := w.Read("big.txt", 1000); !errors.As(err, &tl) || tl.Size != 2000 || tl.Limit != 1000 {
		t.Errorf("too large: %v", err)
	}
	// Open streams what Read refuses.
	f, fi, err := w.Open("big.txt")
	if err != nil || fi.Size() != 2000 {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if len(b) != 2000 {
		t.Errorf("streamed %d bytes", len(b))
	}
}

func TestWrite(t *testing.T) {
	v1 := "one\n"
	tests := []struct {
		name    string
		path    string
		content string
		ifMatch string
		err     error
		conflET string // the ETag a conflict reports
		after   string // the file's content afterwards
	}{
		{name: "update with the current version", path: "a.txt", content: "two\n", ifMatch: ETag([]byte(v1)), after: "two\n"},
		{name: "update with a stale version", path: "a.txt", content: "two\n", ifMatch: ETag([]byte("zero\n")),
			err: ErrConflict, conflET: ETag([]byte(v1)), after: v1},
		{name: "create when present", path: "a.txt", content: "two\n", ifMatch: "",
			err: ErrConflict, conflET: ETag([]byte(v1)), after: v1},
		{name: "create", path: "new/dir/b.txt", content: "fresh", ifMatch: "", after: "fresh"},
		{name: "update a missing file", path: "gone.txt", content: "x", ifMatch: ETag([]byte("x")), err: ErrConflict},
		{name: "binary content", path: "a.txt", content: "a\x00b", ifMatch: ETag([]byte(v1)), err: ErrBinary, after: v1},
		{name: "over a binary file", path: "bin", content: "text", ifMatch: ETag([]byte("\x00\x01")), err: ErrBinary, after: "\x00\x01"},
		{name: "a directory", path: "sub", content: "x", ifMatch: "", err: ErrNotRegular},
		{name: "the root", path: "", content: "x", ifMatch: "", err: ErrNotRegular},
		{name: "through a symlink", path: "link", content: "x", ifMatch: ETag([]byte(v1)), err: ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := tree(t, map[string]string{"a.txt": v1, "bin": "\x00\x01", "sub/x": "x"})
			if err := os.Chmod(filepath.Join(ws, "a.txt"), 0o751); err != nil {
				t.Fatal(err)
			}
			symlink(t, "a.txt", filepath.Join(ws, "link"))
			w := open(t, ws)
			etag, err := w.Write(tt.path, []byte(tt.content), tt.ifMatch)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				var ce *ConflictError
				if errors.As(err, &ce) && ce.ETag != tt.conflET {
					t.Errorf("conflict reports %s, want %s", ce.ETag, tt.conflET)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if etag != ETag([]byte(tt.content)) {
				t.Errorf("etag %s", etag)
			}
			if tt.after != "" {
				got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(tt.path)))
				if err != nil || string(got) != tt.after {
					t.Errorf("file holds %q (%v), want %q", got, err, tt.after)
				}
			}
			if tt.path == "a.txt" && tt.err == nil {
				if fi, _ := os.Stat(filepath.Join(ws, "a.txt")); fi.Mode().Perm() != 0o751 {
					t.Errorf("mode %v, want 0751 kept", fi.Mode().Perm())
				}
			}
			for p := range snapshot(t, ws) {
				if strings.Contains(p, "caduceus-tmp") {
					t.Errorf("left behind %s", p)
				}
			}
		})
	}
}

// TestWriteConflict: two people save over the same version at once, each
// through their own Workspace as two requests would. Exactly one save
// wins; the other is told the winner's version and writes nothing, so the
// loser can merge rather than silently overwrite.
func TestWriteConflict(t *testing.T) {
	ws := tree(t, map[string]string{"shared.txt": "base\n"})
	base := ETag([]byte("base\n"))
	for round := range 20 {
		if round > 0 {
			if err := os.WriteFile(filepath.Join(ws, "shared.txt"), []byte("base\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		contents := []string{"alice's edit\n", "bob's edit\n"}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				w := open(t, ws)
				_, errs[i] = w.Write("shared.txt", []byte(contents[i]), base)
			})
		}
		wg.Wait()
		got, _ := os.ReadFile(filepath.Join(ws, "shared.txt"))
		var won, lost int
		for i, err := range errs {
			var ce *ConflictError
			switch {
			case err == nil:
				won = i
			case errors.As(err, &ce):
				lost = i
				if ce.ETag != ETag(got) {
					t.Errorf("round %d: conflict reports %s, not the file's version", round, ce.ETag)
				}
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: errors %v — want exactly one winner", round, errs)
		}
		if string(got) != contents[won] || won == lost {
			t.Errorf("round %d: file holds %q, winner wrote %q", round, got, contents[won])
		}
	}
}
