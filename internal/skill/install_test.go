package skill

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type zipEntry struct {
	name string
	data string
	mode fs.FileMode
}

func makeZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(0o644)
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// entries lists everything under root, so a test can see nothing was
// written.
func entries(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestInstallZip(t *testing.T) {
	good := skillMD("pdf", "Work with PDFs", "# PDF\n")
	tests := []struct {
		name  string
		zip   []zipEntry
		files []string // installed under pdf/, when no code
		code  string
		why   string
	}{
		{name: "folder at the top", zip: []zipEntry{{name: "pdf/SKILL.md", data: good}, {name: "pdf/scripts/a.py", data: "x"}, {name: "__MACOSX/pdf/._SKILL.md", data: "junk"}},
			files: []string{"pdf", "pdf/SKILL.md", "pdf/scripts", "pdf/scripts/a.py"}},
		{name: "SKILL.md at the top", zip: []zipEntry{{name: "SKILL.md", data: good}, {name: "ref.md", data: "r"}},
			files: []string{"pdf", "pdf/SKILL.md", "pdf/ref.md"}},
		{name: "zip slip", zip: []zipEntry{{name: "pdf/SKILL.md", data: good}, {name: "pdf/../../evil.sh", data: "x"}}, code: CodeUnsafePath, why: "leaves the skill's folder"},
		{name: "absolute path", zip: []zipEntry{{name: "/etc/SKILL.md", data: good}}, code: CodeUnsafePath, why: "absolute path"},
		{name: "drive letter", zip: []zipEntry{{name: "C:/x/SKILL.md", data: good}}, code: CodeUnsafePath, why: "absolute path"},
		{name: "backslash", zip: []zipEntry{{name: "pdf\\..\\SKILL.md", data: good}}, code: CodeUnsafePath, why: "backslash"},
		{name: "symlink", zip: []zipEntry{{name: "pdf/SKILL.md", data: good}, {name: "pdf/link", data: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}, code: CodeUnsafePath, why: "symbolic link"},
		{name: "no SKILL.md", zip: []zipEntry{{name: "pdf/README.md", data: "x"}}, code: CodeInvalid, why: "no SKILL.md"},
		{name: "two folders", zip: []zipEntry{{name: "a/SKILL.md", data: good}, {name: "b/x", data: "x"}}, code: CodeInvalid, why: "no SKILL.md at the top"},
		{name: "folder name mismatch", zip: []zipEntry{{name: "other/SKILL.md", data: good}}, code: CodeInvalid, why: `does not match the skill's folder "other"`},
		{name: "malformed front matter", zip: []zipEntry{{name: "pdf/SKILL.md", data: "---\nname: pdf\n"}}, code: CodeInvalid, why: "not closed"},
		{name: "no description", zip: []zipEntry{{name: "pdf/SKILL.md", data: "---\nname: pdf\n---\n"}}, code: CodeInvalid, why: "no description"},
		{name: "empty", zip: nil, code: CodeInvalid, why: "holds no files"},
		{name: "too large", zip: []zipEntry{{name: "pdf/SKILL.md", data: good}, {name: "pdf/big", data: strings.Repeat("0", MaxInstallBytes)}}, code: CodeTooLarge, why: "more than 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDir(filepath.Join(t.TempDir(), "skills"))
			meta, err := d.InstallZip(makeZip(t, tt.zip...))
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if meta.Name != "pdf" || !slices.Equal(entries(t, d.Root()), tt.files) {
					t.Fatalf("meta %+v, files %q, want %q", meta, entries(t, d.Root()), tt.files)
				}
				if l, err := d.Load("pdf"); err != nil || l.Body != "# PDF\n" {
					t.Fatalf("Load = %+v, %v", l, err)
				}
				return
			}
			r, ok := AsRefusal(err)
			if !ok || r.Code != tt.code || !strings.Contains(r.Reason, tt.why) {
				t.Fatalf("err = %v, want %s: %q", err, tt.code, tt.why)
			}
			if got := entries(t, d.Root()); len(got) != 0 {
				t.Fatalf("a refused install wrote %q", got)
			}
		})
	}
}

func TestInstallLimitsAndNotZip(t *testing.T) {
	d := NewDir(filepath.Join(t.TempDir(), "skills"))
	if _, err := d.InstallZip([]byte("not a zip")); !isCode(err, CodeBadArchive) {
		t.Errorf("not a zip: %v", err)
	}
	many := []Upload{{Path: "SKILL.md", Data: []byte(skillMD("x", "d", ""))}}
	for i := range MaxInstallFiles {
		many = append(many, Upload{Path: "f" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26)), Data: nil})
	}
	if _, err := d.InstallFiles(many); !isCode(err, CodeTooLarge) {
		t.Errorf("too many files: %v", err)
	}
	if got := entries(t, d.Root()); len(got) != 0 {
		t.Fatalf("refused installs wrote %q", got)
	}
}

func isCode(err error, code string) bool {
	r, ok := AsRefusal(err)
	return ok && r.Code == code
}

func TestCreateUpdateDelete(t *testing.T) {
	d := NewDir(filepath.Join(t.TempDir(), "skills"))
	content := Compose("notes", "Take notes: carefully", "# Notes\n")
	if _, err := d.Create(content); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(content); !isCode(err, CodeExists) {
		t.Errorf("create twice: %v", err)
	}
	skills, _ := d.List()
	if len(skills) != 1 || skills[0].Description != "Take notes: carefully" || skills[0].Error != "" {
		t.Fatalf("list = %+v", skills)
	}
	if _, err := d.Update("notes", Compose("other", "d", "")); !isCode(err, CodeInvalid) {
		t.Errorf("rename by update: %v", err)
	}
	if _, err := d.Update("notes", "---\nname: notes\n"); !isCode(err, CodeInvalid) {
		t.Errorf("malformed update: %v", err)
	}
	if _, err := d.Update("ghost", content); !isCode(err, CodeNotFound) {
		t.Errorf("update unknown: %v", err)
	}
	if _, err := d.Update("notes", Compose("notes", "New", "new body")); err != nil {
		t.Fatal(err)
	}
	raw, _, err := d.Raw("notes")
	if err != nil || !strings.HasSuffix(raw, "new body") {
		t.Fatalf("Raw = %q, %v", raw, err)
	}
	if _, _, err := d.Raw("../etc"); !isCode(err, CodeNotFound) {
		t.Errorf("Raw of a path: %v", err)
	}
	if err := d.Delete("notes"); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete("notes"); !isCode(err, CodeNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if got := entries(t, d.Root()); len(got) != 0 {
		t.Fatalf("left behind: %q", got)
	}
	if _, err := os.Stat(d.Root()); err != nil {
		t.Fatal(err)
	}
}
