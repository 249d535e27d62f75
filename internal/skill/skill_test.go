package skill

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree writes files (slash path → content) under a new temporary
// directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

func TestListAndShadowing(t *testing.T) {
	user := tree(t, map[string]string{
		"release/SKILL.md":     skillMD("release", "Cut a release", "user release"),
		"zeta/SKILL.md":        "---\nname: zeta\ndescription: Last\ntags:\n  - a\n  - b\nversion: 2\n---\n",
		"broken/SKILL.md":      "no front matter here",
		"not-a-skill/x.txt":    "ignored: no SKILL.md",
		".hidden/SKILL.md":     skillMD("hidden", "never listed", ""),
		"renamed-dir/SKILL.md": skillMD("alpha", "Name differs from the directory", ""),
		"loose-file.md":        "ignored",
	})
	ws := tree(t, map[string]string{
		"release/SKILL.md": skillMD("release", "Workspace release", "ws release"),
		"lint/SKILL.md":    skillMD("lint", "Run linters", ""),
		"alpha/SKILL.md":   skillMD("alpha", "Shadowed too", ""),
	})
	lib := New(user, filepath.Join(t.TempDir(), "missing"), ws)
	skills, err := lib.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
	}
	if want := []string{"alpha", "broken", "lint", "release", "renamed-dir", "zeta"}; !slices.Equal(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	byName := func(n string) Skill {
		return skills[slices.IndexFunc(skills, func(s Skill) bool { return s.Name == n })]
	}

	rel := byName("release")
	if rel.Description != "Cut a release" || rel.Path != filepath.Join(user, "release") || rel.Error != "" {
		t.Errorf("release = %+v", rel)
	}
	if !slices.Equal(rel.Shadowed, []string{filepath.Join(ws, "release")}) {
		t.Errorf("release shadowed = %q", rel.Shadowed)
	}
	// A skill whose name is not its folder's is listed, broken, under the
	// folder's name, and shadows nothing.
	if a := byName("alpha"); a.Path != filepath.Join(ws, "alpha") || a.Error != "" || a.Shadowed != nil {
		t.Errorf("alpha = %+v", a)
	}
	if r := byName("renamed-dir"); !strings.Contains(r.Error, `name "alpha" does not match the skill's folder "renamed-dir"`) {
		t.Errorf("renamed-dir = %+v", r)
	}
	if b := byName("broken"); !strings.Contains(b.Error, "does not start with front matter") || b.Path != filepath.Join(user, "broken") {
		t.Errorf("broken = %+v", b)
	}
	if z := byName("zeta"); z.Version != "2" || !slices.Equal(z.Tags, []string{"a", "b"}) {
		t.Errorf("zeta = %+v", z)
	}
	if l := byName("lint"); l.Shadowed != nil || l.Path != filepath.Join(ws, "lint") {
		t.Errorf("lint = %+v", l)
	}
}

func TestListReportsUnreadableRoot(t *testing.T) {
	good := tree(t, map[string]string{"a/SKILL.md": skillMD("a", "d", "")})
	notDir := filepath.Join(good, "a", "SKILL.md")
	skills, err := New(notDir, good).List()
	if err == nil || len(skills) != 1 || skills[0].Name != "a" {
		t.Errorf("List = %+v, %v", skills, err)
	}
}

func TestListEmpty(t *testing.T) {
	skills, err := New().List()
	if err != nil || len(skills) != 0 {
		t.Errorf("empty library: %v %v", skills, err)
	}
	skills, err = New(filepath.Join(t.TempDir(), "nope")).List()
	if err != nil || len(skills) != 0 {
		t.Errorf("missing dir: %v %v", skills, err)
	}
}

func TestLoad(t *testing.T) {
	root := tree(t, map[string]string{
		"pdf/SKILL.md":            skillMD("pdf", "PDFs", "\n\n# PDF\nUse scripts/fill.py.\n"),
		"pdf/scripts/fill.py":     "print()",
		"pdf/reference.md":        "ref",
		"pdf/.git/config":         "hidden",
		"pdf/.env":                "hidden",
		"pdf/node_modules/x/y.js": "skipped",
		"pdf/sub/SKILL.md":        "a nested SKILL.md is just a file",
		"bad/SKILL.md":            "---\nname: bad\n---\n",
	})
	lib := New(root)
	l, err := lib.Load("pdf")
	if err != nil {
		t.Fatal(err)
	}
	if l.Body != "# PDF\nUse scripts/fill.py.\n" || l.Name != "pdf" || l.Description != "PDFs" {
		t.Errorf("loaded %+v", l)
	}
	if want := []string{"reference.md", "scripts/fill.py", "sub/SKILL.md"}; !slices.Equal(l.Files, want) || l.MoreFiles {
		t.Errorf("files = %q, want %q", l.Files, want)
	}

	if _, err := lib.Load("nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown: %v", err)
	}
	if l, err := lib.Load("bad"); !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "no description") || l.Path == "" {
		t.Errorf("broken: %+v %v", l, err)
	}
}

func TestLoadCapsFiles(t *testing.T) {
	files := map[string]string{"many/SKILL.md": skillMD("many", "d", "")}
	for i := range MaxFiles + 5 {
		files["many/f/"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"-"+string(rune('a'+i/26))] = ""
	}
	l, err := New(tree(t, files)).Load("many")
	if err != nil || len(l.Files) != MaxFiles || !l.MoreFiles {
		t.Errorf("files %d, more %v, %v", len(l.Files), l.MoreFiles, err)
	}
}

func TestTooLargeSkill(t *testing.T) {
	root := tree(t, map[string]string{"big/SKILL.md": skillMD("big", "d", strings.Repeat("x", MaxSkillBytes))})
	skills, _ := New(root).List()
	if len(skills) != 1 || !strings.Contains(skills[0].Error, "larger than") || skills[0].Name != "big" {
		t.Fatalf("List = %+v", skills)
	}
	if _, err := New(root).Load("big"); !errors.Is(err, ErrBroken) {
		t.Errorf("Load: %v", err)
	}
}

func TestSymlinkedSkill(t *testing.T) {
	target := tree(t, map[string]string{"SKILL.md": skillMD("shared", "Shared skill", "body")})
	root := t.TempDir()
	if err := os.Symlink(target, filepath.Join(root, "shared")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	l, err := New(root).Load("shared")
	if err != nil || l.Body != "body" {
		t.Errorf("Load through symlink: %+v %v", l, err)
	}
}

func TestNewCleansDirs(t *testing.T) {
	d := t.TempDir()
	lib := New(d+"/./", "", d+"/x/..")
	if got := lib.Dirs(); len(got) != 2 || got[0] != d || got[1] != d {
		t.Errorf("Dirs = %q", got)
	}
}

func TestOnly(t *testing.T) {
	root := tree(t, map[string]string{
		"a/SKILL.md": skillMD("a", "A", ""),
		"b/SKILL.md": skillMD("b", "B", "b body"),
	})
	lib := New(root)
	if lib.Only() != lib {
		t.Error("Only() is not the library itself")
	}
	only := lib.Only("b", "gone")
	skills, err := only.List()
	if err != nil || len(skills) != 1 || skills[0].Name != "b" {
		t.Fatalf("List = %+v, %v", skills, err)
	}
	if _, err := only.Load("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load of a skill left out: %v", err)
	}
	if l, err := only.Load("b"); err != nil || l.Body != "b body" {
		t.Errorf("Load(b) = %+v, %v", l, err)
	}
}
